"""The follow suite's instruction checks and the robust suite's pinned tool faults."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.follow import check_all
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.faults import fault_hook
from liveroom_sim.evals.turn import AgentTurn, run_turn
from liveroom_sim.policies.scripted import ScriptedAvatar


def _start(case):
    snap = Snapshot(case.env, case.seed, case.operators, case.prefix)
    snap.check(case.digest)
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


def test_no_reply_meets_no_instruction():
    case = load_suite("follow")[1][0]
    assert not any(check_all(case, None).values())


@pytest.mark.parametrize("kind", ["timeout", "permission_denied", "malformed", "empty"])
def test_the_pinned_fault_replaces_the_first_call_and_a_retry_gets_the_real_result(kind):
    case = next(c for c in load_suite("robust")[1] if c.fault and c.fault.kind == kind)
    env, obs, info = _start(case)
    turn = AgentTurn(case, env, obs, info, fault_hook(case))
    action = ScriptedAvatar()(obs, info)
    assert action.startswith("{")
    turn.feed(action, 0.0)
    tool_messages = [m for m in turn.info["messages"] if m["role"] == "tool"]
    first = tool_messages[-len(json.loads(action)["tool_calls"])]
    assert first["content"] != _real_result(case, action)
    assert any("injected" in e for e in turn.sample.tool_errors)
    turn.feed(action, 0.0)  # the same calls again: no fault this time
    again = [m for m in turn.info["messages"] if m["role"] == "tool"][-len(json.loads(action)["tool_calls"])]
    assert again["content"] == _real_result(case, action)


def _real_result(case, action):
    env, obs, info = _start(case)
    _, _, _, _, info = env.step(action)
    return [m for m in info["messages"] if m["role"] == "tool"][-len(json.loads(action)["tool_calls"])]["content"]
