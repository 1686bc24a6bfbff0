"""Bad input is expected input: whatever a policy returns, ``env.step`` neither raises
nor returns a non-finite reward, and a malformed tool call comes back to the policy as
an error tool message with a ``harness`` penalty."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liveroom_sim.env import LiveRoomEnv

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"
TOOL_NAMES = {"get_product", "get_price_stock", "check_price_and_stock", "get_promotions", "get_policy",
              "get_order_status"}
PRODUCT_TOOLS = ["get_product", "get_policy"]  # not renamed by the tiny campaign
PRODUCT_IDS = {"sk-serum-t", "ap-tee-t", "sn-bar-t"}
MAX_TOTAL = 1.0 + 1.0 + 1.5 + 0.5 + 0.5 + 0.5  # the tiny spec's weights of the per-turn components
SEVERE_PENALTY = 50.0  # the least a turn at the compliance gate costs

FAST = settings(max_examples=100, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


class Driver:
    """One env reused across examples; reset every few steps and at the episode's end."""

    def __init__(self, every: int = 20):
        self.env, self.every, self.steps = LiveRoomEnv(TINY), every, 0
        self.env.reset(seed=0)

    def step(self, action):
        self.steps += 1
        if self.steps % self.every == 0:
            self.env.reset(seed=self.steps)
        obs, reward, terminated, truncated, info = self.env.step(action)
        if terminated or truncated:
            self.env.reset(seed=self.steps)
        return obs, reward, terminated, truncated, info


@pytest.fixture(scope="module")
def driver():
    return Driver()


def assert_sane(obs, reward, info):
    assert isinstance(obs, str)
    assert isinstance(reward, float) and math.isfinite(reward)
    breakdown = info["reward_breakdown"]
    # ``outcome`` (weight 1 in the tiny spec) adds what the room lost during the step.
    assert -max(MAX_TOTAL, SEVERE_PENALTY) + breakdown["outcome"] <= reward <= MAX_TOTAL
    assert breakdown["total"] == reward
    # ``outcome`` counts what the room lost in the step (unbounded below); the others lie in [-1, 1].
    assert all(math.isfinite(v) and -1.0 <= v <= 1.0 for k, v in breakdown.items() if k not in ("total", "outcome"))
    assert math.isfinite(breakdown["outcome"]) and breakdown["outcome"] <= 0
    json.dumps(info)  # loggable as it is


# ------------------------------------------------------------------ strategies
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                      st.text(max_size=20))
json_junk = st.recursive(json_leaf, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                            st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                         max_leaves=12)
cjk_emoji = st.text(alphabet=st.sampled_from("直播间价格多少钱库存优惠券😀🔥🛒👍🏽\u200d\u202e@#{}[]\": \n"), max_size=200)
broken_json = st.sampled_from([
    '{"tool_calls": [', '{"tool_calls": [{"function": {"name": "nope"}}]}', '{"tool_calls": "get_product"}',
    '{"tool_calls": [{"function": {"name": "get_product", "arguments": "{\\"product_id\\": "}}]}',
    '{"content": ', "{", "}", "{}", "[]", "null", '{"content": null}', '{"tool_calls": null}', '{"a": {"b": [',
    '{"tool_calls": [{"function": {"name": "get_product", "arguments": {"product_id": ["sk-serum-t"]}}}]}',
    "{" * 3000 + "}" * 3000, '{"a":' * 5000 + "1" + "}" * 5000,
])
any_action = st.one_of(
    st.text(),
    cjk_emoji,
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", errors="replace")),
    st.binary(max_size=300).map(lambda b: b.decode("utf-8", errors="surrogateescape")),
    broken_json,
    json_junk.map(json.dumps),
    st.dictionaries(st.sampled_from(["content", "tool_calls", "role", "x"]), json_junk, max_size=3).map(json.dumps),
)


# ------------------------------------------------------------------ never raises
@FAST
@given(action=any_action)
def test_any_action_is_a_turn_with_a_finite_reward(driver, action):
    obs, reward, _, _, info = driver.step(action)
    assert_sane(obs, reward, info)
    assert info["turn"]["kind"] in ("reply", "tool")


@settings(max_examples=8, deadline=None, database=None, suppress_health_check=[HealthCheck.data_too_large])
@given(unit=st.text(min_size=1, max_size=8), n=st.integers(100_000, 200_000), as_json=st.booleans())
def test_huge_actions_are_cut_not_fatal(driver, unit, n, as_json):
    text = (unit * (n // len(unit) + 1))[:n]
    action = json.dumps({"content": text}) if as_json else text
    obs, reward, _, _, info = driver.step(action)
    assert_sane(obs, reward, info)
    assert info["turn"]["delivered"] is False  # far past the harness's length limit


@settings(max_examples=30, deadline=None, database=None)
@given(action=st.one_of(st.none(), st.integers(), st.binary(max_size=50), st.lists(st.integers(), max_size=3)))
def test_non_string_actions_do_not_raise(driver, action):
    obs, reward, _, _, info = driver.step(action)
    assert_sane(obs, reward, info)


# ------------------------------------------------------------------ malformed tool calls
not_a_string = st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
                         st.lists(st.text(max_size=5), max_size=2), st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


def _fn(name, arguments):
    return {"id": "c", "type": "function", "function": {"name": name, "arguments": arguments}}


malformed_call = st.one_of(
    # a tool no harness state of the tiny spec offers
    st.builds(_fn, st.text(min_size=1, max_size=30).filter(lambda n: n not in TOOL_NAMES), st.just("{}")),
    # a product tool with an argument of the wrong type
    st.builds(lambda name, v: _fn(name, json.dumps({"product_id": v})), st.sampled_from(PRODUCT_TOOLS), not_a_string),
    # a product id the catalog does not have
    st.builds(lambda name, v: _fn(name, {"product_id": v}), st.sampled_from(PRODUCT_TOOLS),
              st.text(max_size=20).filter(lambda v: v not in PRODUCT_IDS)),
    # arguments that are not a JSON object, or not JSON at all
    st.builds(_fn, st.sampled_from(PRODUCT_TOOLS),
              st.sampled_from(["[1, 2]", "42", '"sk-serum-t"', "{bad", '{"product_id": ', "null", "true"])),
    # an unknown extra argument, and a missing required one
    st.builds(lambda name, k: _fn(name, {"product_id": "sk-serum-t", k: 1}), st.sampled_from(PRODUCT_TOOLS),
              st.text(min_size=1, max_size=10).filter(lambda k: k != "product_id")),
    st.builds(_fn, st.sampled_from(PRODUCT_TOOLS + ["get_order_status"]), st.just({})),
    # no usable function name, or a call that is not an object at all
    st.builds(lambda f: {"id": "c", "function": f}, st.one_of(st.text(max_size=10), st.integers(), st.just({"arguments": "{}"}))),
    st.one_of(st.integers(), st.text(min_size=1, max_size=10), st.lists(st.integers(), min_size=1, max_size=2)),
)


@FAST
@given(calls=st.one_of(st.lists(malformed_call, min_size=1, max_size=4),
                       st.one_of(st.integers().filter(bool), st.text(min_size=1, max_size=20), st.just(True))),
       content=st.one_of(st.none(), st.text(max_size=20)))
def test_malformed_tool_calls_get_error_messages_and_a_harness_penalty(driver, calls, content):
    action = json.dumps({"content": content, "tool_calls": calls})
    obs, reward, _, _, info = driver.step(action)
    assert_sane(obs, reward, info)
    assert info["turn"]["kind"] == "tool"
    n = len(calls) if isinstance(calls, list) else 1
    results = info["messages"][-n:]
    assert all(m["role"] == "tool" for m in results)
    assert all("error" in json.loads(m["content"]) for m in results)
    assert info["messages"][-n - 1]["role"] == "assistant" and len(info["messages"][-n - 1]["tool_calls"]) == n
    assert len(info["turn"]["tool_errors"]) == n
    assert info["reward_breakdown"]["harness"] < 0


def test_unknown_tool_error_names_the_tools_in_force(driver):
    *_, info = driver.step(json.dumps({"tool_calls": [_fn("get_prodcut", "{}")]}))
    error = json.loads(info["messages"][-1]["content"])["error"]
    assert "did you mean 'get_product'" in error and "get_promotions" in error


def test_a_valid_call_is_not_penalised(driver):
    *_, info = driver.step(json.dumps({"tool_calls": [_fn("get_product", {"product_id": "ap-tee-t"})]}))
    assert json.loads(info["messages"][-1]["content"])["sizes"] == ["S", "M", "L"]
    assert info["turn"]["tool_errors"] == [] and info["reward_breakdown"]["harness"] >= 0


@pytest.mark.parametrize("action", ['{"tool_calls": [', '{"tool_calls": [{"function": {"name": "get_product"',
                                    '{"tool_calls": 0}', '{"tool_calls": ""}', '{"tool_calls": {}}'])
def test_broken_tool_call_json_is_an_error_not_speech(action):
    env = LiveRoomEnv(TINY)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(action)
    assert info["turn"]["kind"] == "tool"
    assert "error" in json.loads(info["messages"][-1]["content"])
    assert info["reward_breakdown"]["harness"] < 0
