"""What a newcomer reads in ``liveroom demo``."""

from __future__ import annotations

import json
import re

import gymnasium as gym
from hypothesis import given
from hypothesis import strategies as st

from liveroom_sim import resolve_env_id
from liveroom_sim.cli.main import main
from liveroom_sim.cli.transcript import reward_line, summarise_result
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import FaultPlan, OpenAICompatServer, policy_responder

TINY = "tests/fixtures/tiny/tiny-v0.yaml"
TERM = re.compile(r"([+-]) (\w+) (\d+\.\d+)")


def demo(capsys, *args: str) -> list[str]:
    assert main(["demo", *args]) == 0
    return capsys.readouterr().out.splitlines()


def drawn_events(env_id: str, seed: int) -> tuple:
    """The campaign events of the episode of ``seed``: its timeline is drawn per seed."""
    env = gym.make(resolve_env_id(env_id)).unwrapped
    env.reset(seed=seed)
    return env.room.world.campaign.events


def reward_sums(lines: list[str]) -> list[tuple[float, float]]:
    """(total, sum of the shown parts) of every ungated reward line."""
    out = []
    for line in lines:
        line = line.strip()
        if line.startswith("reward ") and "compliance gate" not in line:
            total, parts = line[len("reward "):].split(" = ")
            terms = TERM.findall("+ " + parts if not parts.startswith(("+", "-")) else parts)
            out.append((float(total), sum(float(v) * (1 if s == "+" else -1) for s, _, v in terms)))
    return out


def test_the_transcript_starts_with_a_legend_and_its_rewards_add_up(capsys):
    lines = demo(capsys, "--env", TINY, "--full")
    assert lines[1].startswith("legend:") and all(sym in lines[1] for sym in ("waiting", "tool", "host", "!!", "ops"))
    sums = reward_sums(lines)
    assert len(sums) > 20
    for total, parts in sums:
        assert abs(total - parts) <= 0.003  # weighted contributions, each rounded to 3 places


def test_waiting_questions_are_shown_only_when_they_change(capsys):
    lines = [line for line in demo(capsys, "--env", "LiveRoom-v0", "--full") if line.startswith("  waiting (")]
    assert len(lines) > 10
    assert all(a != b for a, b in zip(lines, lines[1:]))


def test_every_campaign_event_is_marked(capsys):
    lines = demo(capsys, "--env", "LiveRoom-v0")
    events = drawn_events("LiveRoom-v0", seed=0)
    marked = [line for line in lines if line.startswith("  !! ")]
    assert len(marked) == len(events) >= 12
    assert f"campaign events {len(events)}" in "\n".join(lines[-6:])


def test_tool_results_are_summarised_unless_verbose(capsys):
    short = [line for line in demo(capsys, "--env", TINY) if line.startswith("  tool ")]
    assert short and not any('{"' in line for line in short)  # no JSON cut in the middle
    full = [line for line in demo(capsys, "--env", TINY, "--verbose") if line.startswith("  tool ")]
    assert len(full) == len(short)
    assert all(isinstance(json.loads(line.split(" -> ", 1)[1]), dict) for line in full)


def test_brief_is_one_screen(capsys):
    lines = demo(capsys, "--env", "LiveRoom-v0", "--brief")
    assert 5 <= len(lines) <= 15
    assert any(line.startswith("return ") for line in lines) and not any(line.startswith("  host") for line in lines)


def test_hook_blocks_and_tool_faults_are_marked(capsys):
    blocked = demo(capsys, "--env", TINY, "--policy", "naive")
    assert any("[BLOCKED: banned_phrases" in line for line in blocked)
    assert any(line.startswith("  hook ") for line in blocked)
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=FaultPlan(schedule={0: "bad_tool_call"})) as srv:
        lines = demo(capsys, "--env", TINY, "--base-url", srv.base_url, "--model", "test-model")
    assert any(line.startswith("  tool ") and "FAULT:" in line for line in lines)


@given(st.dictionaries(st.sampled_from(["factuality", "compliance", "engagement", "strategy", "harness"]),
                       st.floats(-3, 3, allow_nan=False), min_size=1),
       st.dictionaries(st.sampled_from(["factuality", "compliance", "engagement", "strategy", "harness"]),
                       st.sampled_from([0.0, 0.5, 1.0, 2.0])))
def test_a_reward_line_shows_parts_that_sum_to_its_total(scores, weights):
    total = round(sum(weights.get(k, 1.0) * v for k, v in scores.items()), 6)
    (shown, parts), = reward_sums([reward_line({**scores, "total": total}, weights)])
    # Each shown number is off by at most half a unit of its last digit (plus float noise).
    assert abs(shown - parts) <= 0.0005 * (len(scores) + 1) + 1e-9


TEXT = st.text(st.characters(blacklist_characters="{"), max_size=30)  # a "{" of its own is not cut JSON


@given(st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), TEXT),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                    max_leaves=20))
def test_a_tool_summary_is_one_bounded_line_without_cut_json(data):
    line = summarise_result(json.dumps(data))
    assert "\n" not in line and len(line) <= 400
    assert '{"' not in line


# ---------------------------------------------------------------- issue 30: a transcript a newcomer reads in a minute
def test_the_default_transcript_is_short_and_the_full_one_a_flag_away(capsys):
    short = demo(capsys, "--env", "LiveRoom-v0")
    full = demo(capsys, "--env", "LiveRoom-v0", "--full")
    assert len(short) <= 200 < 1000 < len(full)
    assert "--full" in short[2] and "summary" in short[2]  # the reader is told what is left out, at the top
    # every campaign event of the episode (drawn per seed from the spec's grammar) is still there
    assert sum(line.startswith("  !! ") for line in short) == len(drawn_events("LiveRoom-v0", seed=0))
    assert sum(line.startswith("  host ") for line in short) >= 10  # and a sample of exchanges
    assert any(line.startswith("== episode summary") for line in short)
    assert sum(line.startswith("  host ") for line in full) > 200


def test_waiting_counts_every_question_that_waits(capsys):
    lines = [line for line in demo(capsys, "--env", "LiveRoom-v0", "--full") if line.startswith("  waiting (")]
    counts = [int(line.split("(")[1].split(")")[0]) for line in lines]
    assert max(counts) > 8  # the update lists eight; the count is all that wait
    for line, n in zip(lines, counts):
        names = line.split("): ", 1)[1]
        listed = names.split(" (+")[0]
        shown = 0 if listed in ("none", "not listed in this update") else len(listed.split(", "))
        more = int(names.rsplit("(+", 1)[1].split(" ")[0]) if "(+" in names else 0
        assert shown + more == n, line


def test_each_campaign_event_is_printed_once(capsys):
    lines = demo(capsys, "--env", TINY, "--full")
    events = [line for line in lines if line.startswith("  !! ")]
    ops = [line for line in lines if line.startswith("  ops ")]
    assert events and not any(o[len("  ops   "):].split(" (")[0] in e for o in ops for e in events)
    assert "now costs 17.5" in "\n".join(events)  # the event line says what the ops note said


def test_the_legend_names_every_component_the_reward_lines_show(capsys):
    lines = demo(capsys, "--env", TINY)
    shown = {name for line in lines if line.strip().startswith("reward ")
             for _, name, _ in TERM.findall("+ " + line.split(" = ", 1)[1])}
    assert len(shown) == 7 and all(name in lines[1] for name in shown)


def test_brief_says_the_latency_is_simulated(capsys):
    lines = demo(capsys, "--env", TINY, "--brief")
    assert any("simulated" in line and "latency" in line for line in lines)
