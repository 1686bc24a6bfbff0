"""Harness-State Augmentation preserves the task and only the task."""

from __future__ import annotations

import json
import statistics

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import liveroom_sim  # noqa: F401
from liveroom_sim.episode import play
from liveroom_sim.errors import SpecError
from liveroom_sim.harness.augment import OPERATORS, AugmentConfig, augment
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.wrappers import HarnessAugmentation

operator_sets = st.sets(st.sampled_from(OPERATORS), min_size=1).map(tuple)


def _pair(seed: int, operators: tuple[str, ...]):
    plain = gym.make("LiveRoom-v0").unwrapped
    varied = gym.make("LiveRoom-v0", harness_augmentation={"operators": operators}).unwrapped
    return (plain, *plain.reset(seed=seed)), (varied, *varied.reset(seed=seed))


def _call(harness, canonical: str, **arguments) -> str:
    view = harness.tools[canonical]
    args = {view.fields.get(k, k): v for k, v in arguments.items()}
    return json.dumps({"tool_calls": [{"id": "c1", "type": "function",
                                       "function": {"name": view.name, "arguments": json.dumps(args)}}]})


def _say(harness, name: str, body: str) -> str:
    c = harness.constraints
    parts = [c.mention_format.format(name=name), c.greeting or "", body, c.sign_off or ""]
    return " ".join(p for p in parts if p)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), operators=operator_sets)
def test_augmentation_keeps_viewers_catalog_and_ground_truth(seed, operators):
    (a, _, ia), (b, _, ib) = _pair(seed, operators)
    assert [(m.viewer.name, m.text, m.truth) for m in a.room.crowd.chat] == \
           [(m.viewer.name, m.text, m.truth) for m in b.room.crowd.chat]
    assert a.room.market.prices == b.room.market.prices and a.room.market.stock == b.room.market.stock
    assert sorted(a.room.harness.tools) == sorted(b.room.harness.tools)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), operators=operator_sets, product=st.sampled_from(["sk-serum-01", "ap-hoodie-01"]))
def test_equivalent_actions_get_equal_results_and_rewards(seed, operators, product):
    (a, *_), (b, *_) = _pair(seed, operators)
    for canonical in ("get_price_stock", "get_product", "get_policy"):
        _, ra, *_, info_a = a.step(_call(a.room.harness, canonical, product_id=product))
        _, rb, *_, info_b = b.step(_call(b.room.harness, canonical, product_id=product))
        assert info_a["messages"][-1]["content"] == info_b["messages"][-1]["content"]
        assert info_a["reward_breakdown"] == info_b["reward_breakdown"]
    waiting = [m for m in a.room.crowd.pending if m.viewer.present]
    name = waiting[0].viewer.name if waiting else "someone"
    price = a.room.market.price(product)
    _, ra, *_, info_a = a.step(_say(a.room.harness, name, f"it is ${price:g} now #ad"))
    _, rb, *_, info_b = b.step(_say(b.room.harness, name, f"it is ${price:g} now #ad"))
    assert info_a["reward_breakdown"] == pytest.approx(info_b["reward_breakdown"])


def test_a_dotted_name_is_addressed_in_every_mention_format():
    # Hypothesis found it (seed 2748): "[to frugal.fran] Hey there! it is $37.9 now" was read as
    # addressing nobody (a name stopped at its dot, and "frugal" is not closed by "]"), so the
    # augmented harness paid 0.25 less for the reply the plain one paid in full.
    ops = ("reorder_skills", "vary_constraints", "rename_tools", "paraphrase_skills", "reorder_sections",
           "redescribe", "rename_fields", "reformat")
    test_equivalent_actions_get_equal_results_and_rewards.hypothesis.inner_test(
        seed=2748, operators=ops, product="ap-hoodie-01")


def test_a_tool_called_by_its_old_name_after_a_rename_gets_an_error_message():
    env = gym.make("LiveRoom-v0", harness_augmentation={"operators": ("rename_tools", "rename_fields")}).unwrapped
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(json.dumps({"tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get_price_stock", "arguments": '{"product_id": "sk-serum-01"}'}}]}))
    error = json.loads(info["messages"][-1]["content"])["error"]
    assert "unknown tool 'get_price_stock'" in error and env.room.harness.tool_name("get_price_stock") in error
    assert info["reward_breakdown"]["harness"] == -1.0 and not (terminated or truncated)


def test_augmented_tools_and_prompt_are_what_the_policy_sees():
    env = gym.make("LiveRoom-v0", harness_augmentation={"operators": OPERATORS}).unwrapped
    _, info = env.reset(seed=5)
    h = env.room.harness
    assert [t["function"]["name"] for t in info["tools"]] == [v.name for v in h.tools.values()]
    assert h.constraints.mention_format.format(name="name") in info["messages"][0]["content"]
    assert info["room"]["harness_augmented"] is True


def test_augment_is_deterministic_given_the_generator():
    env = gym.make("LiveRoom-v0").unwrapped
    h = env.world.harness
    one = augment(h, "en", np.random.default_rng(7))
    two = augment(h, "en", np.random.default_rng(7))
    other = augment(h, "en", np.random.default_rng(8))
    assert one == two and one != other


def test_unknown_operator_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown operators \\['shuffle_prices'\\]"):
        AugmentConfig(operators=("shuffle_prices",))


def test_harness_variant_env_is_registered_and_augments_every_episode():
    env = gym.make("LiveRoom-HarnessVariant-v0")
    names = set()
    for seed in range(4):
        _, info = env.reset(seed=seed)
        assert info["room"]["harness_augmented"]
        names.add(tuple(t["function"]["name"] for t in info["tools"]))
    assert len(names) > 1


def test_wrapper_turns_augmentation_on():
    env = HarnessAugmentation(gym.make("LiveRoom-v0"), operators=("vary_constraints",))
    _, info = env.reset(seed=0)
    assert info["room"]["harness_augmented"]


def test_spec_that_extends_itself_fails_clearly(tmp_path):
    from liveroom_sim.spec import load_spec

    (tmp_path / "Loop-v0.yaml").write_text("extends: Loop-v0.yaml\nid: Loop-v0\n")
    with pytest.raises(SpecError, match="extends itself"):
        load_spec(tmp_path / "Loop-v0.yaml")


def _returns(env_id, policy_factory, seeds):
    env = gym.make(env_id)
    return [play(env, policy_factory(env), seed).total for seed in seeds]


class HardCodedAvatar(ScriptedAvatar):
    """The scripted avatar, but it believes the default tool names never change."""

    def __init__(self, default_tools):
        self.default_tools = default_tools

    def __call__(self, observation, info):
        return super().__call__(observation, {**info, "tools": self.default_tools})


@pytest.mark.slow
def test_reading_the_harness_keeps_the_return_while_hard_coding_it_loses():
    seeds = range(12)
    _, base_info = gym.make("LiveRoom-v0").reset(seed=0)
    default_tools = base_info["tools"]
    plain = statistics.mean(_returns("LiveRoom-v0", lambda env: ScriptedAvatar(), seeds))
    varied = statistics.mean(_returns("LiveRoom-HarnessVariant-v0", lambda env: ScriptedAvatar(), seeds))
    hard = statistics.mean(_returns("LiveRoom-HarnessVariant-v0", lambda env: HardCodedAvatar(default_tools), seeds))
    assert abs(varied - plain) < 0.15 * plain, (plain, varied)
    assert hard < 0.6 * varied, (hard, varied)
