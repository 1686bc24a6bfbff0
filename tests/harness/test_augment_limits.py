"""The HSA operators on prompt items, tool order and numeric limits preserve the task:
the ground truth and the set of correct answers are unchanged (a property test per
operator), and what the variant's prompt says is what the room enforces."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.errors import SpecError
from liveroom_sim.harness import augment_limits
from liveroom_sim.harness.augment import OPERATORS, AugmentConfig, augment, load_pools
from liveroom_sim.harness.augment_limits import sentences
from liveroom_sim.harness.prompt import tool_schemas
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"
HARNESS = {"en": load_spec(ENVS_DIR / "LiveRoom-v0.yaml").harness, "zh": load_spec(ENVS_DIR / "LiveRoom-zh-v0.yaml").harness}
seeds = st.integers(0, 2**32 - 1)
langs = st.sampled_from(["en", "zh"])


def _everything_but(h, *fields):
    return h.model_dump(exclude=set(fields))


@settings(max_examples=40, deadline=None)
@given(seed=seeds, lang=langs)
def test_reorder_items_keeps_every_sentence_of_every_section(seed, lang):
    h = HARNESS[lang]
    v = augment(h, lang, np.random.default_rng(seed), ("reorder_items",))
    assert [s.name for s in v.sections] == [s.name for s in h.sections]
    for before, after in zip(h.sections, v.sections):
        assert Counter(sentences(after.text)) == Counter(sentences(before.text))
        assert set(re_placeholders(after.text)) == set(re_placeholders(before.text))
    assert _everything_but(v, "sections") == _everything_but(h, "sections")


def re_placeholders(text: str) -> list[str]:
    import re

    return re.findall(r"\{\w+\}", text)


def test_reorder_items_does_reorder():
    h = HARNESS["en"]
    texts = {augment(h, "en", np.random.default_rng(s), ("reorder_items",)).sections[-2].text for s in range(8)}
    assert len(texts) > 1  # the reply-format section has four sentences


@settings(max_examples=40, deadline=None)
@given(seed=seeds, lang=langs)
def test_reorder_tools_offers_the_same_tools_in_another_order(seed, lang):
    h = HARNESS[lang]
    v = augment(h, lang, np.random.default_rng(seed), ("reorder_tools",))
    assert dict(v.tools) == dict(h.tools)
    schemas = lambda x: sorted(json.dumps(t, sort_keys=True) for t in tool_schemas(x))  # noqa: E731
    assert schemas(v) == schemas(h)
    assert _everything_but(v, "tools") == _everything_but(h, "tools")


@settings(max_examples=40, deadline=None)
@given(seed=seeds, lang=langs)
def test_perturb_limits_stays_within_the_business_range(seed, lang):
    h = HARNESS[lang]
    lo, hi = load_pools().limits["max_chars"][lang]
    v = augment(h, lang, np.random.default_rng(seed), ("perturb_limits",))
    assert lo <= v.constraints.max_chars <= hi
    assert _everything_but(v, "constraints") == _everything_but(h, "constraints")
    assert v.constraints.model_dump(exclude={"max_chars"}) == h.constraints.model_dump(exclude={"max_chars"})


def test_perturb_limits_draws_across_the_range():
    drawn = {augment(HARNESS["en"], "en", np.random.default_rng(s), ("perturb_limits",)).constraints.max_chars
             for s in range(40)}
    assert len(drawn) > 10 and min(drawn) >= 160 and max(drawn) <= 280


# ------------------------------------------------------- through the env's public API
def _call(harness, canonical: str, **arguments) -> str:
    view = harness.tools[canonical]
    args = {view.fields.get(k, k): v for k, v in arguments.items()}
    return json.dumps({"tool_calls": [{"id": "c1", "type": "function",
                                       "function": {"name": view.name, "arguments": json.dumps(args)}}]})


@pytest.mark.parametrize("operator", augment_limits.OPERATORS)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), product=st.sampled_from(["sk-serum-t", "ap-tee-t", "sn-bar-t"]))
def test_ground_truth_and_correct_answers_are_unchanged(operator, seed, product):
    plain, varied = LiveRoomEnv(TINY), LiveRoomEnv(TINY, harness_augmentation={"operators": (operator,)})
    _, ia = plain.reset(seed=seed)
    _, ib = varied.reset(seed=seed)
    a, b = plain.room, varied.room
    assert b.augmented
    # The ground truth: the same viewers asking the same questions of the same market.
    assert [(m.viewer.name, m.text, m.truth) for m in a.crowd.chat] == [(m.viewer.name, m.text, m.truth) for m in b.crowd.chat]
    assert a.market.prices == b.market.prices and a.market.stock == b.market.stock
    # The same lookups return the same facts and earn the same reward ...
    for canonical in ("get_price_stock", "get_product", "get_policy"):
        *_, ra = plain.step(_call(a.harness, canonical, product_id=product))
        *_, rb = varied.step(_call(b.harness, canonical, product_id=product))
        assert ra["messages"][-1]["content"] == rb["messages"][-1]["content"]
        assert ra["reward_breakdown"] == rb["reward_breakdown"]
    # ... and the same answer, within the shortest cap the business allows, is judged the same.
    waiting = [m for m in a.crowd.pending if m.viewer.present]
    name = waiting[0].viewer.name if waiting else "someone"
    answer = f"@{name} it is ${a.market.price(product):g} now #ad"
    assert len(answer) <= load_pools().limits["max_chars"]["en"][0]
    _, _, _, _, ra = plain.step(answer)
    _, _, _, _, rb = varied.step(answer)
    assert ra["reward_breakdown"] == pytest.approx(rb["reward_breakdown"])
    assert ra["turn"]["delivered"] == rb["turn"]["delivered"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_limit_the_prompt_states_is_the_limit_the_room_enforces(seed):
    env = LiveRoomEnv(TINY, harness_augmentation={"operators": ("perturb_limits",)})
    _, info = env.reset(seed=seed)
    limit = env.room.harness.constraints.max_chars
    assert f"at most {limit} characters" in info["messages"][0]["content"]
    _, _, _, _, info = env.step("a" * (limit + 1))
    assert info["turn"]["delivered"] is False and any(h.startswith("max_length") for h in info["turn"]["hooks"])
    env.reset(seed=seed)
    _, _, _, _, info = env.step("Hi " + "a" * (limit - 3))
    assert info["turn"]["delivered"] is True


def test_new_operators_are_off_by_default_and_named_like_any_other():
    assert not set(augment_limits.OPERATORS) & set(AugmentConfig().operators)
    assert set(augment_limits.OPERATORS) <= set(AugmentConfig(operators=augment_limits.OPERATORS).operators)
    assert set(OPERATORS).isdisjoint(augment_limits.OPERATORS)


def test_a_bad_business_range_is_a_clear_error(tmp_path):
    text = (ENVS_DIR / "harness" / "hsa.yaml").read_text()
    bad = tmp_path / "hsa.yaml"
    bad.write_text(text.replace("en: [160, 280]", "en: [300, 280]"))
    with pytest.raises(SpecError, match=r"limits.max_chars.en: expected \[low, high\]"):
        load_pools(str(bad))
    bad.write_text(text + "  mention_format: {en: [1, 2]}\n")
    with pytest.raises(SpecError, match="limits.mention_format: not a numeric constraint"):
        load_pools(str(bad))
