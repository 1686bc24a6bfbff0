"""How the reward reads the forms a policy hunting for reward would try: money with its
unit between whole and cents, order statuses, efficacy percentages, fact words inside
product names (the golden cases are in tests/golden/readings.jsonl)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.orders import TRUE_OF, stage_of
from liveroom_sim.world.text import quantities

PROPERTY = settings(max_examples=200, deadline=None)
WHOLE = st.integers(min_value=1, max_value=9999)
CENTS = st.integers(min_value=10, max_value=99)
_CN = "零一二三四五六七八九"


def _money(text: str) -> list[float]:
    return [round(q.value, 2) for q in quantities(text) if q.dim == "money"]


@PROPERTY
@given(WHOLE, CENTS, st.sampled_from(["{w} dollars {c}", "{w} bucks {c}", "{w} dollars and {c} cents",
                                      "${w} and {c} cents", "{w} dollars {c} cents", "{w}块{c}", "{w}元{c}"]))
def test_an_amount_with_its_unit_before_the_cents_is_one_amount(whole, cents, form):
    text = f"it is {form.format(w=whole, c=cents)} now"
    assert _money(text) == [round(whole + cents / 100, 2)]
    assert [q.dim for q in quantities(text)] == ["money"]  # the cents are not a second number


@PROPERTY
@given(WHOLE, st.integers(min_value=0, max_value=9), st.integers(min_value=1, max_value=9),
       st.sampled_from(["{w}块{j}毛{f}", "{w}元{j}角{f}分", "{w}块{j}毛{f}分"]))
def test_jiao_and_fen_read_with_the_yuan_before_them(whole, jiao, fen, form):
    for j, f in ((str(jiao), str(fen)), (_CN[jiao], _CN[fen])):
        assert _money(form.format(w=whole, j=j, f=f) + "。") == [round(whole + jiao / 10 + fen / 100, 2)]


@PROPERTY
@given(WHOLE, CENTS, st.sampled_from(["{w} dollars, {c} left", "{w} dollars {c} left", "{w} dollars {c}% off",
                                      "{w} dollars {c} hours", "{w}块{c}件", "{w}元，{c}件", "{w}块{c}天",
                                      "{w} dollars {c}0"]))
def test_a_second_number_with_its_own_unit_is_never_swallowed(whole, cents, form):
    found = quantities(form.format(w=whole, c=cents))
    assert round(found[0].value, 2) == whole and found[0].dim == "money"
    assert len(found) == 2 and found[1].dim != "money"


def test_the_cents_do_not_reach_past_a_decimal_or_a_spoken_count():
    assert _money("24.5 dollars 99") == [24.5]
    assert _money("水光精华三块一瓶") == [3.0]  # a bottle, not 3.1
    assert _money("129元9") == [129.0]  # 元 takes jiao only with 毛 or 角 (129块9 is 129.9)
    assert _money("129块9") == [129.9]
    assert _money("99 cents") == [0.99]


# -- order statuses -------------------------------------------------------------------

_ENVS = {"LiveRoom-v0": "mia_22", "LiveRoom-zh-v0": "lily"}
_SAID = {"LiveRoom-v0": {"processing": "is processing", "shipped": "has shipped", "in_transit": "is in transit",
                         "out_for_delivery": "is out for delivery", "delivered": "was delivered",
                         "refund_pending": "has a refund pending", "refunded": "was refunded"},
         "LiveRoom-zh-v0": {"processing": "待发货", "shipped": "已发货", "in_transit": "运输中",
                            "out_for_delivery": "派送中", "delivered": "已签收", "refund_pending": "退款中",
                            "refunded": "已退款"}}


def _status_claims(env: str, order: str, reply: str):
    case = RewardCase.model_validate({"id": "x", "env": env, "reply": reply, "expected": {},
                                      "question": {"asker": _ENVS[env], "intent": "order_status", "order": order}})
    ctx = build_context(case)
    return [c for c in ctx.analysis.claims if c.kind == "order_status"], ctx.analysis


@pytest.mark.parametrize("env", list(_ENVS))
def test_every_order_status_is_read_and_a_stage_is_correct_exactly_when_true(env):
    for order in world_for(env).catalog.orders:
        truth = stage_of(order.status)
        assert truth is not None, order.status  # the shipped catalogs' statuses are all known
        claims, analysis = _status_claims(env, order.id, f"@{_ENVS[env]} order {order.id} {order.status}.")
        assert [c.verdict for c in claims] == ["correct"]
        assert all(f.key != "order_status" for f in analysis.missing)  # and it states the status
        for stage, words in _SAID[env].items():
            claims, _ = _status_claims(env, order.id, f"@{_ENVS[env]} order {order.id} {words}.")
            if truth in ("refund_pending", "refunded") and stage not in ("refund_pending", "refunded"):
                assert claims == [], (order, stage)  # a refund's shipping is not known: not judged
                continue
            assert [c.verdict for c in claims] == ["correct" if truth in TRUE_OF[stage] else "invented"], (order, stage)


@pytest.mark.parametrize("reply", ["order LR-10234 will be delivered in 3 days", "it should arrive in 3 days",
                                   "orders are shipped within 24 hours", "it gets delivered by friday",
                                   "the serum is shipped free"])
def test_the_future_or_a_policy_states_no_status(reply):
    claims, _ = _status_claims("LiveRoom-v0", "LR-10234", f"@mia_22 {reply}.")
    assert claims == []


def test_a_reply_about_no_order_claims_no_status():
    case = RewardCase.model_validate({"id": "x", "env": "LiveRoom-v0", "expected": {},
                                      "reply": "@mia_22 the glow serum is $24.99 and your last order was delivered. #ad",
                                      "question": {"asker": "mia_22", "intent": "price", "product": "sk-serum-01"}})
    assert [c.kind for c in build_context(case).analysis.claims] == ["price"]


# -- efficacy percentages -----------------------------------------------------------------


def _scores(env: str, reply: str, product: str = "sk-cream-01") -> dict[str, float]:
    from liveroom_sim.rewards.golden import rule_model

    case = RewardCase.model_validate({"id": "x", "env": env, "reply": reply, "expected": {},
                                      "question": {"asker": _ENVS[env], "intent": "price", "product": product}})
    return {k: s.value for k, s in rule_model(env).score(build_context(case)).scores.items()}


@pytest.mark.parametrize("env,reviewed,respelled", [
    ("LiveRoom-v0", "100% effective", ["100 percent effective", "100 per cent effective", "hundred percent effective",
                                       "one hundred percent effective", "１００％ effective"]),
    ("LiveRoom-zh-v0", "100%有效", ["百分百有效", "百分之百有效", "１００％有效", "100 %有效"]),
])
def test_a_respelled_efficacy_claim_scores_as_the_reviewed_label(env, reviewed, respelled):
    # tests/golden/rewards.jsonl: en-banned-100-effective and zh-100-effective-banned (reviewed)
    template = "@mia_22 the barrier cream is {}, $32." if env == "LiveRoom-v0" else "@lily 修护面霜{}，159元。"
    expected = _scores(env, template.format(reviewed))
    assert expected["factuality"] == -1.0
    for form in respelled:
        got = _scores(env, template.format(form))
        assert (got["factuality"], got["compliance"]) == (expected["factuality"], expected["compliance"]), form


# -- fact words inside product names ------------------------------------------------------

_WORLDS = ["LiveRoom-v0", "LiveRoom-zh-v0", str(Path(__file__).parents[1] / "golden" / "worlds" / "names-en.yaml"),
           str(Path(__file__).parents[1] / "golden" / "worlds" / "names-zh.yaml")]


@pytest.mark.parametrize("env", _WORLDS, ids=lambda e: Path(e).stem)
def test_a_name_alone_claims_nothing(env):
    from liveroom_sim.world.facts import intent_fits
    from liveroom_sim.world.personas import FACT_INTENTS

    asker = "lily" if "zh" in Path(env).stem else "mia_22"
    for p in world_for(env).catalog.products:
        for name in p.names:
            for intent in [i for i in FACT_INTENTS if i != "order_status" and intent_fits(i, p)]:
                case = RewardCase.model_validate({"id": "x", "env": env, "reply": f"@{asker} {name}!", "expected": {},
                                                  "question": {"asker": asker, "intent": intent, "product": p.id}})
                analysis = build_context(case).analysis
                assert analysis.claims == (), (name, intent, analysis.claims)


# -- denied amounts, bounds, signs and units ----------------------------------------------


def _claims(env: str, reply: str, intent: str = "price"):
    case = RewardCase.model_validate({"id": "x", "env": env, "reply": reply, "expected": {},
                                      "question": {"asker": _ENVS[env], "intent": intent, "product": "sk-serum-01"}})
    return build_context(case).analysis


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=500), st.sampled_from(["not ${v}", "isn't ${v}", "no longer ${v}",
                                                                 "under ${v}", "below ${v}", "less than ${v}"]))
def test_a_denied_or_bounded_amount_never_states_the_price_and_is_correct_only_when_true(v, form):
    analysis = _claims("LiveRoom-v0", "@mia_22 the glow serum is " + form.format(v=v) + ". #ad")
    assert analysis.stated == ()  # neither says what the serum costs
    price = 24.99  # the glow serum's price in the case's world
    true = v > price if form.startswith(("under", "below", "less")) else v != price
    assert all(c.verdict == "correct" if true else c.verdict != "correct" for c in analysis.claims)
    if not true:  # a false bound or denying the price itself misleads
        assert [c.verdict for c in analysis.claims] == ["invented"]


@pytest.mark.parametrize("env,truth", [("LiveRoom-v0", "the glow serum isn't $24.99"), ("LiveRoom-zh-v0", "水光精华不是129元")])
def test_denying_the_true_amount_is_false(env, truth):
    analysis = _claims(env, f"@{_ENVS[env]} {truth}。")
    assert [c.verdict for c in analysis.claims] == ["invented"] and analysis.stated == ()


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=30), st.integers(min_value=1, max_value=30),
       st.sampled_from(["{a}-{b} days", "{a} to {b} days", "{a}~{b} hours", "{a}到{b}天", "{a}-{b}小时"]))
def test_a_range_states_no_one_amount(a, b, form):
    assert quantities("ships in " + form.format(a=a, b=b) + " now") == []


def test_chinese_digits_one_by_one_and_two_digit_ranges():
    assert [q.value for q in quantities("一二九元")] == [129.0]
    assert quantities("三五天") == [] and quantities("七八件") == []  # three to five days, seven or eight
    assert [q.value for q in quantities("六五折")] == [35.0]  # 6.5折 (35% off) is still read


@pytest.mark.parametrize("said,verdicts", [
    ("is now under $30", ["correct"]), ("is no more than $20", ["invented"]), ("is over $30", ["invented"]),
    ("is at least $20", ["correct"]), ("is not less than $30", ["invented"]), ("isn't $30 anymore", []),
    ("is not $24.99", ["invented"]),
])
def test_a_price_bound_is_judged_against_the_price_and_a_true_denial_claims_nothing(said, verdicts):
    # the glow serum costs $24.99 in the case's world
    analysis = _claims("LiveRoom-v0", f"@mia_22 the glow serum {said}. #ad")
    assert [c.verdict for c in analysis.claims] == verdicts and analysis.stated == ()


# -- a percentage of the spec sheet next to an unrelated "off" ---------------------------


def test_a_spec_percentage_is_no_discount_because_off_is_said_elsewhere_in_the_clause():
    # Audit of seed 50505: the reference host's K3 spec sheet ("... with backlight off and layout
    # 75%, 84 keys") was charged an invented 75% discount, in training and in every eval case.
    specs = ("@mia_22 switches hot-swap brown tactile, connection Bluetooth 5.1, 2.4 GHz, USB-C wired, "
             "battery 4000 mAh, up to 200 h with backlight off and layout 75%, 84 keys.")
    assert _scores("LiveRoom-v0", specs, product="el-keyboard-01")["factuality"] >= 0.0
    # A discount word next to the number is still a discount, and this one is invented.
    for pitch in ("@mia_22 the K3 keyboard is 75% off today!", "@mia_22 K3 keyboard, discount: 75% today"):
        assert _scores("LiveRoom-v0", pitch, product="el-keyboard-01")["factuality"] == -1.0, pitch


@pytest.mark.parametrize("fact, reply, stated", [
    ("70% wool, 30% nylon", "it's 70% wool and 30% nylon", True),     # the items, joined otherwise
    ("75%锦纶 25%氨纶", "75%锦纶、25%氨纶哦", True),
    ("75%锦纶 25%氨纶", "75% 锦纶，25% 氨纶", True),
    ("72 g", "it weighs 72g", True),                                   # a unit written onto its number
    ("70% wool, 30% nylon", "it's 70% wool and 30% cotton", False),   # every item, not some
    ("70% wool, 30% nylon", "70% wool, no 30% nylon at all", False),
    ("72 g", "it weighs 172g", False),
])
def test_a_listed_fact_is_stated_by_its_items_in_any_words_around_them(fact, reply, stated):
    from liveroom_sim.world.facts import term
    from liveroom_sim.world.text import normalize

    assert term("material", fact).stated_in(normalize(reply), ()) is stated


@pytest.mark.parametrize("text, found", [
    ("still in stock! 214 bags left.", [("count", 214.0)]),   # a stock count with its noun
    ("74 dewveil serums left", [("count", 74.0)]),
    ("comes in 3 colors: black, olive and rust", []),          # how many options: no amount
    ("有三个颜色：米白色、驼色、墨绿色", []),
    ("有3个颜色", []),
    ("3种口味可选", []),
    ("还剩3个", [("count", 3.0)]),                              # a count is still one
    ("30码偏大", [("bare", 30.0)]),                             # a size is no option count
])
def test_a_count_is_read_with_its_noun_and_a_count_of_options_is_no_amount(text, found):
    assert [(q.dim, q.value) for q in quantities(text)] == found
