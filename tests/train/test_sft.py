"""HSA-SFT export: teacher trajectories under K harness variants, chat format, filtered."""

from __future__ import annotations

import json
import subprocess
import sys

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401
from liveroom_sim import resolve_env_id
from liveroom_sim.harness.augment import OPERATORS
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import OpenAICompatServer, policy_responder
from liveroom_sim.train.sft import export_sft

TINY_PATH = "tests/fixtures/tiny/tiny-v0.yaml"
TINY = resolve_env_id(TINY_PATH)


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _plain(m: dict) -> dict:
    return {k: v for k, v in m.items() if k != "weight"}


def test_export_writes_one_conversation_per_episode_variant_that_is_what_the_policy_saw(tmp_path):
    out = tmp_path / "sft.jsonl"
    counts = export_sft(TINY, episodes=2, augment=3, out=out, teacher=ScriptedAvatar(), progress=False)
    rows = _rows(out)
    assert counts["written"] == len(rows) == 6 and counts["variants"] == 6
    assert {(r["meta"]["seed"], r["meta"]["variant"]) for r in rows} == {(s, k) for s in (0, 1) for k in range(3)}
    assert len({tuple(t["function"]["name"] for t in r["tools"]) for r in rows if r["meta"]["seed"] == 0}) == 3
    assert counts["bytes"] == out.stat().st_size and counts["bytes_per_variant"] == round(counts["bytes"] / 6)
    # Replaying a variant: at every step the policy's view is in the conversation, in order,
    # under the system prompt in force, and each action is the next assistant message.
    row = rows[4]
    env = gym.make(TINY, harness_augmentation={"operators": OPERATORS}).unwrapped
    obs, info = env.reset(seed=row["meta"]["seed"], options={"harness_variant": row["meta"]["variant"]})
    talk, teacher, actions, done = row["messages"], ScriptedAvatar(), 0, False
    assert talk[0] == info["messages"][0]
    while not done:
        shown = info["messages"]
        assistant_at = [i for i, m in enumerate(talk) if m["role"] == "assistant"][actions]
        before = [_plain(m) for m in talk[:assistant_at] if m["role"] != "system"]
        assert before[-(len(shown) - 1):] == shown[1:]
        system = [m for m in talk[:assistant_at] if m["role"] == "system"][-1]
        assert system["content"] == shown[0]["content"]
        obs, _, term, trunc, info = env.step(teacher(obs, info))
        assert talk[assistant_at]["weight"] in (0, 1)
        actions, done = actions + 1, term or trunc
    assert actions == sum(m["role"] == "assistant" for m in talk) == row["meta"]["trained"] + row["meta"]["untrained"]


def test_replies_below_the_threshold_stay_as_context_without_weight(tmp_path):
    lenient, strict = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a = export_sft(TINY, 2, 1, lenient, ScriptedAvatar(), min_reward=-100, progress=False)
    b = export_sft(TINY, 2, 1, strict, ScriptedAvatar(), min_reward=3.0, progress=False)
    assert b["filtered"] > a["filtered"] and b["trained"] < a["trained"]
    ra, rb = _rows(lenient), _rows(strict)
    assert [[_plain(m) for m in r["messages"]] for r in ra] == [[_plain(m) for m in r["messages"]] for r in rb]


class OverlongFirstTry(ScriptedAvatar):
    """The scripted host, but every reply it means to give is first said far too long
    (the length hook blocks it and asks for a retry), then said properly."""

    def __call__(self, observation, info):
        action = super().__call__(observation, info)
        users = [m["content"] for m in info["messages"] if m["role"] == "user"]
        if action.startswith("{") or users[-1].startswith("[hook]"):  # a tool call, or the retry
            return action
        return action + " Truly." * 80


def _retries(row):
    talk = row["messages"]
    hooks = [i for i, m in enumerate(talk) if m["role"] == "user" and m["content"].startswith("[hook]")]
    return hooks, talk


@pytest.mark.parametrize("share", [0.0, 0.5, 1.0])
def test_most_hook_retries_keep_only_the_final_reply_a_share_keeps_the_full_retry(tmp_path, share):
    out = tmp_path / "sft.jsonl"
    counts = export_sft(TINY, 2, 2, out, OverlongFirstTry(), full_retry_share=share, progress=False)
    rows = _rows(out)
    assert counts["retries"] > 20
    kept = 0
    for row in rows:
        hooks, talk = _retries(row)
        kept += len(hooks)
        for i in hooks:  # a kept retry: the blocked reply (not learned), the hook's message, the correction
            assert talk[i - 1]["role"] == "assistant" and talk[i - 1]["weight"] == 0 and len(talk[i - 1]["content"]) > 280
            after = next((m for m in talk[i + 1:] if m["role"] != "system"), None)  # the prompt may change meanwhile
            assert after is None or (after["role"] == "assistant" and len(after["content"]) <= 280)  # None: the stream ended
        overlong = [m for m in talk if m["role"] == "assistant" and len(m.get("content") or "") > 280]
        assert len(overlong) == len(hooks)  # a dropped retry leaves no trace
    assert kept == counts["retries_full"]
    if share == 0.0:
        assert kept == 0
    elif share == 1.0:
        assert kept == counts["retries"]
    else:
        assert 0 < kept < counts["retries"]
        again = tmp_path / "again.jsonl"
        export_sft(TINY, 2, 2, again, OverlongFirstTry(), full_retry_share=share, progress=False)
        assert again.read_bytes() == out.read_bytes()


def test_a_share_outside_0_to_1_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="full_retry_share must be within 0-1"):
        export_sft(TINY, 1, 1, tmp_path / "x.jsonl", ScriptedAvatar(), full_retry_share=1.5, progress=False)


def test_export_sft_command_with_an_openai_compatible_teacher(tmp_path):
    out = tmp_path / "sft.jsonl"
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "liveroom_sim.cli.main", "export-sft", "--env", TINY_PATH, "--episodes", "1",
             "--augment", "2", "--out", str(out), "--base-url", srv.base_url, "--model", "teacher"],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["written"] == len(_rows(out)) > 0
