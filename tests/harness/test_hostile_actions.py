"""Hostile actions against the action parser: nesting, too many calls, huge numbers.

Whether an action parses never depends on the caller's stack depth, every call past the
limit gets its own error tool message, and nothing raises."""

from __future__ import annotations

import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liveroom_sim.harness.actions import MAX_NESTING, MAX_TOOL_CALLS, parse_action
from liveroom_sim.harness.core import load_harness
from liveroom_sim.world.paths import ENVS_DIR

HARNESS = load_harness(ENVS_DIR / "harness" / "default-en")


def call(name="get_product", arguments=None, cid=None):
    out = {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments or {"product_id": "sk-serum-01"})}}
    if cid:
        out["id"] = cid
    return out


def test_every_call_past_the_limit_gets_an_error_of_its_own():
    action = parse_action(json.dumps({"tool_calls": [call(cid=f"c{i}") for i in range(MAX_TOOL_CALLS + 4)]}), HARNESS, 1)
    assert action.kind == "tool" and len(action.tool_calls) == MAX_TOOL_CALLS + 4
    ran, extra = action.tool_calls[:MAX_TOOL_CALLS], action.tool_calls[MAX_TOOL_CALLS:]
    assert all(c.error is None for c in ran)
    assert [c.id for c in extra] == [f"c{i}" for i in range(MAX_TOOL_CALLS, MAX_TOOL_CALLS + 4)]
    assert all(f"more than {MAX_TOOL_CALLS} tool calls" in c.error and c.name == "get_product" for c in extra)


def test_extra_calls_come_back_to_the_policy_as_error_tool_messages():
    from liveroom_sim.env import LiveRoomEnv

    env = LiveRoomEnv(ENVS_DIR / "LiveRoom-v0.yaml")
    env.reset(seed=0)
    _, reward, _, _, info = env.step(json.dumps({"tool_calls": [call(cid=f"c{i}") for i in range(20)]}))
    tool_messages = [m for m in info["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 20
    assert sum("more than 16 tool calls" in m["content"] for m in tool_messages) == 4
    assert info["reward_breakdown"]["harness"] < 0


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1000, 100_000])
def test_deep_nesting_is_a_clear_error_in_the_action_and_in_arguments(depth):
    deep = "[" * depth + "]" * depth
    whole = parse_action('{"tool_calls": [{"function": {"name": "get_product", "arguments": ' + deep + "}}]}", HARNESS, 1)
    assert whole.kind == "tool" and f"nested deeper than {MAX_NESTING}" in whole.error
    inner = parse_action(json.dumps({"tool_calls": [{"function": {"name": "get_product", "arguments": "[" * depth}}]}),
                         HARNESS, 1)
    assert f"nested deeper than {MAX_NESTING}" in inner.tool_calls[0].error


def test_nesting_within_the_limit_parses():
    args = {"product_id": "sk-serum-01", "x": json.loads("[" * (MAX_NESTING - 6) + "]" * (MAX_NESTING - 6))}
    action = parse_action(json.dumps({"tool_calls": [call(arguments=args)]}), HARNESS, 1)
    assert action.tool_calls[0].error is None


def test_parsing_does_not_depend_on_the_callers_stack_depth():
    text = json.dumps({"tool_calls": [call(arguments={"product_id": "sk-serum-01", "x": [[[[[]]]]]})]})
    shallow = parse_action(text, HARNESS, 1)

    def deep(n):
        return parse_action(text, HARNESS, 1) if n == 0 else deep(n - 1)

    room = sys.getrecursionlimit() - len(__import__("inspect").stack()) - 60
    assert deep(max(0, room)) == shallow


def test_huge_numbers_and_unreadable_objects_are_errors_not_exceptions():
    big = parse_action('{"tool_calls": [{"function": {"name": "get_product", "arguments": {"product_id": ' + "9" * 10_000 + "}}}]}",
                       HARNESS, 1)
    assert big.kind == "tool" and big.error
    circular: dict = {}
    circular["self"] = circular
    odd = parse_action(circular, HARNESS, 1)
    assert odd.kind == "tool" and "could not be read" in odd.error


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 3000), st.sampled_from("[{"), st.booleans())
def test_any_nesting_of_any_bracket_never_raises(depth, bracket, closed):
    close = {"[": "]", "{": "}"}[bracket]
    body = bracket * depth + (close * depth if closed else "")
    for text in ('{"tool_calls": [{"function": {"name": "get_product", "arguments": ' + (body or "{}") + "}}]}",
                 json.dumps({"tool_calls": [{"function": {"name": "get_product", "arguments": body}}]}),
                 "{" + body):
        parse_action(text, HARNESS, 1)


HOSTILE_ARGUMENTS = ["[" * 1000, "{" * 1000, '{"product_id": ' + "9" * 5000 + "}", '{"product_id": 1e400}',
                     '{"product_id": -1e400, "x": NaN}', '{"product_id": "' + "\u200b" * 5000 + '"}',
                     '{"product_id": ' + "[" * 60 + "]" * 60 + "}", '"' + "\\" * 999]


@pytest.fixture(scope="module")
def env():
    from liveroom_sim.env import LiveRoomEnv

    e = LiveRoomEnv(ENVS_DIR / "LiveRoom-v0.yaml")
    e.reset(seed=1)
    return e


@pytest.mark.parametrize("arguments", HOSTILE_ARGUMENTS)
def test_hostile_tool_arguments_through_env_step_give_an_error_tool_message(env, arguments):
    action = json.dumps({"tool_calls": [{"id": "c1", "type": "function",
                                         "function": {"name": "get_product", "arguments": arguments}}]})
    _, reward, terminated, truncated, info = env.step(action)
    assert isinstance(reward, float) and reward == reward
    if terminated or truncated:
        env.reset(seed=2)
        return
    last = info["messages"][-1]
    assert last["role"] == "tool" and last["tool_call_id"] == "c1"


@settings(max_examples=40, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(min_size=1, max_size=64).map(lambda s: (s * (65_536 // len(s) + 1))[:65_536]))
def test_a_64kb_reply_of_any_repeated_text_steps(env, unit):
    _, reward, terminated, truncated, info = env.step(unit)
    assert isinstance(reward, float) and reward == reward
    # each component is in [-1, 1] but outcome, the unclamped (negative) cost of the room's losses
    assert all(-1.0 <= v <= 1.0 for k, v in info["reward_breakdown"].items() if k not in ("total", "outcome"))
    assert info["reward_breakdown"]["outcome"] <= 0
    if terminated or truncated:
        env.reset(seed=3)
