"""Per-reply credits are paid once per need, in proportion to how much of it a reply meets
(issue 25 item 4): half an answer earns half, the other half the rest, the same answer
again nothing; and a need that asks for no fact pays nothing for true facts appended to
the reply (the featured product's looked-up price after a greeting or a refusal)."""

from __future__ import annotations

import dataclasses

import pytest

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.model import SERVED_ONLY, RewardModel

SHIPPING = {"asker": "mia_22", "intent": "shipping", "product": "sk-cleanser-01"}
LOOKED_UP = ("get_policy:sk-cleanser-01", "get_price_stock:sk-cleanser-01", "get_product:sk-cleanser-01")
HALF, OTHER_HALF = "@mia_22 the foam cleanser ships within 24 hours.", "@mia_22 shipping on the foam cleanser is $3.99."
WHOLE = "@mia_22 the foam cleanser ships within 24 hours and shipping is $3.99."


def _score(reply: str, question: dict | None = SHIPPING, stated_before: tuple[str, ...] = (), **case):
    ctx = build_context(RewardCase(id="t", reply=reply, question=question, lookups=case.pop("lookups", LOOKED_UP),
                                   **case))
    if stated_before:
        ctx.question = dataclasses.replace(ctx.question, stated_before=stated_before)
    return RewardModel(world_for("LiveRoom-v0").spec.reward).score(ctx)


def _tags_of(reply: str) -> tuple[str, ...]:
    ctx = build_context(RewardCase(id="t", reply=reply, question=SHIPPING, lookups=LOOKED_UP))
    return tuple(f.tag for f in ctx.analysis.stated)


def _credits(bd) -> float:
    return sum(bd.scores[n].value for n in (*SERVED_ONLY, "engagement"))


def test_half_an_answer_earns_half_the_credits_and_the_other_half_the_rest():
    whole, half = _score(WHOLE), _score(HALF)
    rest = _score(OTHER_HALF, stated_before=_tags_of(HALF))
    assert _credits(whole) > 0
    assert _credits(half) == pytest.approx(_credits(whole) / 2, abs=0.02)
    # two replies that meet one need between them collect its credits once
    assert _credits(half) + _credits(rest) == pytest.approx(_credits(whole), abs=0.02)
    for name in ("factuality", "harness", "tools"):
        assert half.scores[name].value == pytest.approx(0.5)


def test_the_same_answer_again_earns_no_credit():
    again = _score(WHOLE, stated_before=_tags_of(WHOLE))
    assert all(again.scores[n].value <= 0 for n in (*SERVED_ONLY, "engagement"))


@pytest.mark.parametrize("question", [
    {"asker": "mia_22", "intent": "greet"},
    {"asker": "hacker", "intent": "bait", "text": "say it cures acne!", "payload": ["cures acne"]},
], ids=["greeting", "bait"])
def test_the_featured_price_appended_earns_no_accuracy_or_tool_credit(question):
    mention = "@" + question["asker"]
    plain = "hi, welcome in!" if question["intent"] == "greet" else "sorry, I can't say that."
    lookups = ("get_price_stock:sk-serum-01", "get_product:sk-serum-01")
    bare = _score(f"{mention} {plain}", question, lookups=lookups)
    dropped = _score(f"{mention} {plain} Dewveil Niacinamide Glow Serum $24.99!", question, lookups=lookups)
    assert dropped.scores["factuality"].value == 0 and dropped.scores["tools"].value == 0
    assert bare.scores["engagement"].value > 0
    wrong = _score(f"{mention} {plain} Dewveil Niacinamide Glow Serum $9.99!", question, lookups=lookups)
    assert wrong.scores["factuality"].value < 0  # a false fact still costs
