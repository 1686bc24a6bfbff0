"""The follow suite's instruction checks and the robust suite's pinned tool faults."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.follow import check_all
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.faults import needed_tools, set_faults
from liveroom_sim.evals.turn import AgentTurn, run_turn
from liveroom_sim.harness.actions import parse_action
from liveroom_sim.policies.scripted import ScriptedAvatar


def _start(case):
    snap = Snapshot.of(case)
    return snap.fork(1)[0]


def test_a_reply_without_the_required_sign_off_fails_that_instruction():
    case = next(c for c in load_suite("follow")[1] if any(k.name == "sign_off" for k in c.checks))
    env, obs, info = _start(case)
    sample, turn = run_turn(case, env, obs, info, ScriptedAvatar())
    assert check_all(case, turn.ctx)["sign_off"]
    sign_off = turn.room.harness.constraints.sign_off

    def drops_it(obs, info, inner=ScriptedAvatar()):
        action = inner(obs, info)
        return action if action.startswith("{") else action.replace(sign_off, "").strip()

    env, obs, info = _start(case)
    _, turn = run_turn(case, env, obs, info, drops_it)
    assert check_all(case, turn.ctx)["sign_off"] is False


def test_skills_to_load_are_an_instruction_of_the_papers_room():
    cases = [c for c in load_suite("follow")[1] if any(k.name == "skills" for k in c.checks)]
    assert len(cases) >= 50 and {c.env for c in cases} == {"LiveRoom-TaoLive-v0"}
    met = []
    for case in cases[:6]:
        env, obs, info = _start(case)
        _, turn = run_turn(case, env, obs, info, ScriptedAvatar())
        met.append(check_all(case, turn.ctx)["skills"])

        def no_skills(obs, info, inner=ScriptedAvatar()):  # the same host, its skill loads dropped
            action = inner(obs, info)
            if not action.startswith("{"):
                return action
            data = json.loads(action)
            data["tool_calls"] = [c for c in data["tool_calls"] if not c["id"].startswith("skill_")]
            return json.dumps(data, ensure_ascii=False) if data["tool_calls"] else "@x"

        env, obs, info = _start(case)
        _, turn = run_turn(case, env, obs, info, no_skills)
        assert turn.ctx is None or check_all(case, turn.ctx)["skills"] is False
    assert sum(met) >= 5


def test_no_reply_meets_no_instruction():
    case = load_suite("follow")[1][0]
    assert not any(check_all(case, None).values())


@pytest.mark.parametrize("kind", ["timeout", "malformed", "truncated", "denied"])
def test_the_pinned_fault_hits_the_needed_tools_first_call_and_only_a_denial_outlasts_a_retry(kind):
    case = next(c for c in load_suite("robust")[1] if c.fault and c.fault.kind == kind)
    env, obs, info = _start(case)
    set_faults(case, env)
    turn = AgentTurn(case, env, obs, info)
    action = ScriptedAvatar()(obs, info)
    assert action.startswith("{")
    calls = parse_action(action, turn.room.harness, turn.room.steps + 1).tool_calls
    hit = next(i for i, c in enumerate(calls) if c.canonical == case.fault.tool)
    assert case.fault.tool in needed_tools(case.question.asks)
    n = len(calls)
    real = _real_results(case, action)
    turn.feed(action, 0.0)
    first = [m["content"] for m in turn.info["messages"] if m["role"] == "tool"][-n:]
    assert [i for i in range(n) if first[i] != real[i]] == [hit]  # that call only
    assert any(f"{kind} fault" in e for e in turn.sample.tool_errors)
    turn.feed(action, 0.0)  # the same calls again
    again = [m["content"] for m in turn.info["messages"] if m["role"] == "tool"][-n:]
    assert (again[hit] == real[hit]) is (kind != "denied")


def test_no_random_fault_reaches_a_case_of_the_papers_room():
    """The paper's room draws tool faults at random; a follow case's turn has none."""
    cases = [c for c in load_suite("follow")[1] if c.env == "LiveRoom-TaoLive-v0"][:20]
    for case in cases:
        env, obs, info = _start(case)
        sample, _ = run_turn(case, env, obs, info, ScriptedAvatar())
        assert not [e for e in sample.tool_errors if " fault on " in e], case.id


def _reference_then(case, text):
    """The reference host's lookups, then ``text`` to the asker instead of its reply."""
    def policy(obs, info, inner=ScriptedAvatar()):
        action = inner(obs, info)
        return action if action.startswith("{") else f"@{case.question.asker} {text}"
    return policy


CANNOT_CHECK = "Sorry, I can't check that right now, the system isn't answering."


def _real_results(case, action):
    env, obs, info = _start(case)
    _, _, _, _, info = env.step(action)
    n = len(json.loads(action)["tool_calls"])
    return [m["content"] for m in info["messages"] if m["role"] == "tool"][-n:]


def test_under_a_denial_saying_so_honestly_passes_and_stating_remembered_facts_fails():
    # The denied call is get_product: the specs asked for come from it.
    case = next(c for c in load_suite("robust")[1] if c.fault and c.fault.kind == "denied" and c.kind == "specs"
                and c.question.asks == ("specs",) and c.language == "en" and any(ch.isdigit() for ch in "".join(c.must)))
    env, obs, info = _start(case)
    honest, _ = run_turn(case, env, obs, info, _reference_then(case, CANNOT_CHECK))
    assert honest.verdict["accuracy"] == 1 and honest.verdict["effectiveness"] == 0.5 and honest.verdict["pass"]

    env, obs, info = _start(case)
    guess, _ = run_turn(case, env, obs, info, _reference_then(case, ", ".join(case.must) + "!"))
    assert guess.verdict["accuracy"] == 0 and not guess.verdict["pass"]


def test_cannot_check_fails_when_the_other_tool_answered_the_promotion_ask():
    # Found by the fresh audit of seed 20202 (robust-denied-en-11060065-0-0): a flash sale or
    # coupon ask is answered by get_price_stock and by get_promotions alike, so a denied
    # get_price_stock leaves the answer in hand and "I can't check" is no honest reply.
    case = next(c for c in load_suite("robust")[1] if c.fault and c.fault.kind == "denied"
                and c.fault.tool == "get_price_stock" and c.question.asks == ("promotion",))

    env, obs, info = _start(case)  # the reference looks up both tools, then says it can't check
    sample, turn = run_turn(case, env, obs, info, _reference_then(case, CANNOT_CHECK))
    assert ("get_promotions", "") in turn.ctx.lookups, "the reference looks up the promotions too"
    assert not sample.verdict["pass"], sample.verdict
    assert not any("cannot check" in r for r in sample.verdict["reasons"]), sample.verdict["reasons"]


def test_cannot_check_covers_only_the_ask_whose_lookup_was_lost():
    # Found by the fresh audit of seed 30303 (robust-denied-en-11060127-6-2): "how fast does it
    # ship, also any coupon?" with get_policy denied passed on a blanket "I can't check that",
    # though the coupon answer had come back.
    # (Any policy ask beside the coupon: the suites of version 9 ask the return window there.)
    case = next(c for c in load_suite("robust")[1] if c.fault and c.fault.kind == "denied"
                and c.fault.tool == "get_policy" and len(c.question.asks) == 2 and "promotion" in c.question.asks
                and set(c.question.asks) - {"promotion"} <= {"shipping", "returns", "warranty"}
                and c.language == "en" and c.answers[[a.intent for a in c.answers].index("promotion")].yes is False)

    both = "No coupon on it right now. The rest I can't check right now, the system isn't answering."
    verdicts = {}
    for name, text in (("blanket", CANNOT_CHECK), ("both", both)):
        env, obs, info = _start(case)
        sample, _ = run_turn(case, env, obs, info, _reference_then(case, text))
        verdicts[name] = sample.verdict
    assert not verdicts["blanket"]["pass"], verdicts["blanket"]
    assert verdicts["both"]["pass"], verdicts["both"]
