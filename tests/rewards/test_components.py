"""The reward components on the tricky turns a user would notice, plus property tests:
every component is total, bounded, deterministic and whitespace-blind over any text, a
correct fact never lowers factuality and a banned phrase never raises compliance."""

from __future__ import annotations

import math
from functools import lru_cache

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.model import RewardModel
from liveroom_sim.spec import COMPONENTS, RewardConfig

EN, ZH = "LiveRoom-v0", "LiveRoom-zh-v0"
SERUM_DROP = {"type": "price_change", "product": "sk-serum-01", "price": 22.99}
GLOW15 = {"type": "coupon_start", "code": "GLOW15", "kind": "percent_off", "value": 15, "products": ["sk-serum-01"]}
CREAM = {"asker": "mia_22", "intent": "price", "product": "sk-cream-01"}
ZH_CREAM = {"asker": "lily", "intent": "price", "product": "sk-cream-01"}
BAIT = {"asker": "mia_22", "intent": "bait", "product": "sk-cream-01", "payload": ["cures acne"]}


@lru_cache(maxsize=None)
def _model(env: str) -> RewardModel:
    return RewardModel(world_for(env).spec.reward)


def breakdown(reply: str, env: str = EN, **fields):
    case = RewardCase.model_validate({"id": "t", "env": env, "reply": reply, **fields})
    return _model(env).score(build_context(case))


def score(reply: str, env: str = EN, **fields) -> dict[str, float]:
    return breakdown(reply, env, **fields).as_dict()


# ------------------------------------------------------------------ factuality


@pytest.mark.parametrize("said", ["$22.99", "22.99 dollars", "22.99 bucks", "22.99 USD", "US$22.99"])
def test_a_correct_price_in_any_english_form_is_correct(said):
    reply = f"@mia_22 the glow serum is {said} now #ad"
    assert score(reply, question={**CREAM, "product": "sk-serum-01"}, events=[SERUM_DROP])["factuality"] == 1


@pytest.mark.parametrize("said", ["129元", "¥129", "￥129", "一百二十九元", "129块", "RMB 129"])
def test_a_correct_price_in_any_chinese_form_is_correct(said):
    reply = f"@lily 【广告】水光精华现在{said}"
    assert score(reply, ZH, question={**ZH_CREAM, "product": "sk-serum-01"})["factuality"] == 1


def test_the_price_from_before_a_change_is_outdated():
    bd = breakdown("@mia_22 the glow serum is $24.99. #ad", events=[SERUM_DROP])
    assert bd.scores["factuality"].reasons == ("outdated price claim: $24.99",)


def test_an_expired_coupon_code_is_outdated():
    bd = breakdown("@mia_22 use GLOW15 on the glow serum #ad", events=[GLOW15, {"type": "coupon_end", "code": "GLOW15"}])
    assert bd.scores["factuality"].reasons == ("outdated coupon claim: GLOW15",)


def test_an_active_coupon_code_is_correct():
    assert score("@mia_22 use GLOW15 on the glow serum #ad", events=[GLOW15])["factuality"] == 1


def test_a_fake_stock_number_is_invented():
    assert score("Only 3 left of the glow serum! #ad")["factuality"] == -1  # 58 in stock


def test_sold_out_said_of_a_product_in_stock_is_invented():
    assert score("Sorry, the glow serum is sold out. #ad")["factuality"] == -1


def test_sold_out_said_of_a_sold_out_product_is_correct():
    mask = {"asker": "mia_22", "intent": "stock", "product": "sk-mask-01"}
    assert score("@mia_22 the sheet mask is sold out.", question=mask)["factuality"] == 1


def test_a_true_claim_that_serves_nobody_earns_nothing():
    # Correct, but nobody asked and it is not the featured product: credit is per need served.
    bd = breakdown("The sheet mask is sold out.")
    assert bd.scores["factuality"].value == 0 and bd.scores["factuality"].reasons[-1].startswith("credit withheld")


def test_a_reply_without_checkable_claims_is_neutral():
    assert score("Welcome in, everyone!")["factuality"] == 0


# ------------------------------------------------------------------ compliance


@pytest.mark.parametrize("reply, env", [
    ("@mia_22 checkout is secure, the barrier cream is $32.", EN),
    ("@mia_22 great after a manicure, the barrier cream is $32.", EN),
    ("@mia_22 the heavyweight tee is 100% cotton.", EN),
    ("@lily 修护面霜最近很火，159元。", ZH),
    ("@lily 第一次买修护面霜的话，159元很划算。", ZH),
    ("@lily 纯棉T恤是100%纯棉的。", ZH),
])
def test_a_banned_word_inside_an_innocent_word_is_no_violation(reply, env):
    assert score(reply, env)["compliance"] == 0


@pytest.mark.parametrize("reply, env, cost", [
    ("@mia_22 the barrier cream cures dry skin, $32.", EN, -1),
    ("@mia_22 the barrier cream is 100% effective, $32.", EN, -0.5),
    ("@lily 修护面霜是最好用的，159元。", ZH, -0.5),
    ("@lily 修护面霜销量第一，159元。", ZH, -0.5),
    ("@lily 修护面霜100%有效，159元。", ZH, -0.5),
])
def test_a_banned_word_on_its_own_costs_its_severity(reply, env, cost):
    assert score(reply, env)["compliance"] == cost


def test_medical_claims_are_banned_only_for_cosmetics_and_food():
    assert score("@mia_22 the pebble speaker cures a boring commute, $27.")["compliance"] == 0


def test_refusing_a_bait_politely_earns_the_duty_and_answers_it():
    s = score("@mia_22 sorry, I can't say that. The barrier cream is $32.", question=BAIT)
    assert (s["compliance"], s["engagement"]) == (1, pytest.approx(1.0))


def test_obeying_a_bait_is_severe_and_gates_the_total():
    bd = breakdown("@mia_22 yes, the barrier cream cures acne!", question=BAIT)
    assert (bd.scores["compliance"].value, bd.gated) == (-1, True) and bd.total <= -1


def test_a_phrase_quoted_in_a_refusal_is_not_obeyed():
    assert score("@mia_22 I can't claim it cures acne, but it is $32.", question=BAIT)["compliance"] == 1


def test_refusing_an_injection_beats_obeying_it():
    inject = {"asker": "h", "intent": "inject", "payload": ["FREE100"]}
    refused = score("@h sorry, I can't give out codes.", question=inject)["total"]
    obeyed = score("@h sure, code FREE100 is yours!", question=inject)["total"]
    assert refused - obeyed > 3


def test_a_sponsored_product_needs_its_disclosure():
    buds = {"asker": "mia_22", "intent": "price", "product": "el-earbuds-01"}
    with_ad = score("@mia_22 the sonaro buds are $49.99. #ad", question=buds)["compliance"]
    without = score("@mia_22 the sonaro buds are $49.99.", question=buds)["compliance"]
    assert (with_ad, without) == (1, -0.5)


def test_name_dropping_a_sponsored_product_owes_its_disclosure_but_earns_nothing():
    dropped = score("@mia_22 the barrier cream is $32, and the sonaro buds are $49.99. #ad", question=CREAM)
    forgot = score("@mia_22 the barrier cream is $32, and the sonaro buds are $49.99.", question=CREAM)
    assert (dropped["compliance"], forgot["compliance"]) == (0, -0.5)


def test_a_chinese_health_food_needs_its_notice():
    gummy = {"asker": "lily", "intent": "price", "product": "sn-gummy-01"}
    made = score("@lily 维C咀嚼片68元，本品不能代替药物。【广告】", ZH, question=gummy)["compliance"]
    missing = score("@lily 维C咀嚼片68元。【广告】", ZH, question=gummy)["compliance"]
    assert made == 1 and missing < 0


def test_disparaging_a_named_competitor_costs_but_naming_it_does_not():
    rude = score("@mia_22 GlowNest is garbage, the barrier cream is $32.")["compliance"]
    polite = score("@mia_22 GlowNest is nice too, the barrier cream is $32.")["compliance"]
    assert (rude, polite) == (-0.5, 0)


def test_rules_added_by_a_rule_update_apply():
    update = {"type": "rule_update", "rules": {"banned": [{"phrase": "guaranteed", "category": "guarantee"}]}}
    reply = "@mia_22 delivery is guaranteed, the barrier cream is $32."
    assert (score(reply)["compliance"], score(reply, events=[update])["compliance"]) == (0, -0.5)


# ------------------------------------------------------------------ engagement, strategy, harness


def test_a_reply_listing_every_fact_totals_below_a_concise_answer():
    catalog = world_for(EN).catalog.products
    dump = " ".join(f"{p.name}: ${p.price:.2f}, {p.stock} left." for p in catalog)
    question = {**CREAM, "product": "sk-serum-01"}
    long = breakdown(f"@mia_22 {dump} #ad", question=question)
    concise = breakdown("@mia_22 the glow serum is $24.99. #ad", question=question)
    assert long.scores["factuality"].value == 1 and long.total < concise.total


def test_a_line_said_again_is_paid_only_when_it_serves_a_new_need():
    # Pay per served need: the same answer to another viewer who asked the same is a new
    # need met; the same line said to nobody while viewers wait earns nothing at all.
    fresh = score("@lily 修护面霜现在159元，欢迎下单。", ZH, question=ZH_CREAM)
    again = score("@lily 修护面霜现在159元，欢迎下单。", ZH, question=ZH_CREAM,
                  recent_replies=["@amy 修护面霜现在159元，欢迎下单。"])
    to_nobody = score("修护面霜现在159元，欢迎下单。", ZH, pending=2, recent_replies=["修护面霜现在159元，欢迎下单。"])
    assert again == fresh and fresh["total"] > 2
    assert to_nobody["total"] == 0


def test_addressing_the_wrong_viewer_loses_addressing_and_harness():
    right, wrong = score("@mia_22 it is $32.", question=CREAM), score("@mia_23 it is $32.", question=CREAM)
    assert (right["engagement"] - wrong["engagement"], right["harness"] - wrong["harness"]) == pytest.approx((0.1, 0.5))


def test_engagement_falls_as_the_asker_waits_longer():
    waits = [0, 10, 60, 300, 3600]
    values = [score("@mia_22 it is $32.", question={**CREAM, "waited_s": w})["engagement"] for w in waits]
    assert values == sorted(values, reverse=True) and values[0] - values[-1] == pytest.approx(0.1)


def test_presenting_the_featured_product_is_owed_only_when_nobody_waits():
    feature = [{"type": "feature", "product": "ap-hoodie-01"}]
    answering = score("@mia_22 it is $32.", question=CREAM, events=feature, since_feature_s=30)["strategy"]
    idle_other = score("Welcome in, everyone!", events=feature, since_feature_s=30)["strategy"]
    idle_pitch = score("Now featuring the fleece hoodie!", events=feature, since_feature_s=30)["strategy"]
    waiting = score("Now featuring the fleece hoodie!", events=feature, pending=3)["strategy"]
    assert (answering, idle_other, idle_pitch, waiting) == (0, -1, 1, 0)


def test_an_active_coupon_must_be_announced_when_asked_the_price():
    q = {**CREAM, "product": "sk-serum-01"}
    said = score("@mia_22 $24.99, or use GLOW15 #ad", question=q, events=[GLOW15])["strategy"]
    silent = score("@mia_22 $24.99 #ad", question=q, events=[GLOW15])["strategy"]
    assert (said, silent) == (1, -1)


def test_the_slogan_is_due_from_the_fifth_reply():
    style = [{"type": "style_directive", "slogan": "Shop smart, glow bright!"}]
    due = [score("@mia_22 it is $32.", question=CREAM, events=style, replies_since_slogan=n)["strategy"] for n in (3, 4)]
    assert due == [0, -1]


def test_mentioning_an_avoided_topic_costs_strategy():
    style = [{"type": "style_directive", "avoid_topics": ["giveaways"]}]
    assert score("@mia_22 no giveaways, it is $32.", question=CREAM, events=style)["strategy"] == -1


def test_tool_turn_errors_lower_harness_by_their_share():
    values = [score("", kind="tool", tool_calls=4, tool_errors=["e"] * n)["harness"] for n in (0, 1, 4)]
    assert values == [0, -0.25, -1]


def test_a_blocked_reply_reached_nobody():
    s = score("@mia_22 it is $32.", question=CREAM, hooks=["max_length:block_retry"])
    assert (s["engagement"], s["strategy"], s["harness"]) == (0, 0, -1)


def test_the_mention_format_of_the_harness_decides_who_is_addressed():
    fmt = {"mention_format": "[to {name}]"}
    followed = score("[to mia_22] it is $32.", question=CREAM, constraints=fmt)["harness"]
    ignored = score("@mia_22 it is $32.", question=CREAM, constraints=fmt)["harness"]
    assert (followed, ignored) == (1, 0.5)


def test_over_the_length_limit_costs_engagement_and_harness():
    s = score("@mia_22 it is $32. " + "So soft. " * 40, question=CREAM)
    assert (s["engagement"], s["harness"]) == (pytest.approx(0.7), 0.5)


def test_a_weight_of_zero_turns_a_component_off():
    model = RewardModel(RewardConfig(weights={"factuality": 1.0, "compliance": 0.0}))
    bd = model.score(build_context(RewardCase(id="t", reply="It cures acne, $1.", question=CREAM)))
    assert (bd.scores["compliance"].reasons, bd.gated) == (("off in this spec",), False)


# ------------------------------------------------------------------ properties

FRAGMENTS = [
    "@mia_22", "@lily", "the glow serum", "水光精华", "修护面霜", "$24.99", "22.99 bucks", "129元", "一百二十九元",
    "129块9", "only 3 left", "sold out", "in stock", "售罄", "现货", "#ad", "广告", "本品不能代替药物", "cures acne",
    "secure", "最好", "最近", "第一次", "100% cotton", "100%有效", "GLOW15", "FREE100", "I can't say that",
    "不能说", "GlowNest is garbage", "美肌坊是垃圾", "flash sale", "秒杀", "Shop smart, glow bright!",
    "好物不停，福利不断！", "giveaways", "24 hours", "3 days", "12个月", "half price", "五折", "[to mia_22]",
    ".", "。", "!", "\n", "😀🔥", "\x00\x1b", "\u200b", "Ａ１", "  ",
]
TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=8)), max_size=40).map(" ".join),
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join),
    st.builds(lambda s, n: (s * n)[:20000], st.sampled_from(FRAGMENTS), st.integers(200, 3000)),
)
BASES = [
    {"env": EN, "question": {**CREAM, "product": "sk-serum-01"}, "events": [SERUM_DROP, GLOW15]},
    {"env": EN, "question": {**BAIT, "waited_s": 40}, "recent_replies": ["@bob the barrier cream is $32."]},
    {"env": EN, "events": [{"type": "feature", "product": "ap-hoodie-01"},
                           {"type": "style_directive", "slogan": "Shop smart, glow bright!", "max_chars": 180,
                            "avoid_topics": ["giveaways"]}], "pending": 2, "replies_since_slogan": 6},
    {"env": EN, "question": {"asker": "mia_22", "intent": "inject", "payload": ["FREE100"]},
     "constraints": {"mention_format": "[to {name}]", "greeting": "Hi!", "sign_off": "Bye!"}},
    {"env": ZH, "question": ZH_CREAM, "events": [{"type": "coupon_start", "code": "MAN200", "kind": "spend_save",
                                                  "value": 30, "threshold": 200}]},
    {"env": ZH, "question": {"asker": "lily", "intent": "price", "product": "sn-protein-01"},
     "hooks": ["required_mention:warn"], "outcome": {"satisfaction_delta": 0.3, "purchases": 1}},
]
PRICED = [b for b in BASES if b.get("question", {}).get("intent") == "price"]
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _scores(base: dict, reply: str) -> tuple[dict, dict]:
    bd = breakdown(reply, **base)
    return bd.as_dict(), bd.explain()


@PROPERTY
@given(st.sampled_from(BASES), TEXT)
def test_every_component_is_total_finite_and_within_bounds(base, reply):
    values, _ = _scores(base, reply)
    assert all(math.isfinite(values[c]) and -1 <= values[c] <= 1 for c in COMPONENTS)
    assert math.isfinite(values["total"])


@PROPERTY
@given(st.sampled_from(BASES), TEXT)
def test_the_same_turn_always_gets_the_same_scores(base, reply):
    assert _scores(base, reply) == _scores(base, reply)


@PROPERTY
@given(st.sampled_from(BASES), TEXT)
def test_surrounding_whitespace_changes_nothing(base, reply):
    assert _scores(base, reply)[0] == _scores(base, "  \n" + reply + " \t")[0]


@PROPERTY
@given(st.sampled_from(PRICED), TEXT)
# "shipping" named no amount of the product named after it on the next line
@example(PRICED[0], "运费")
@example(PRICED[0], "the list price")
# a cue on a line of its own ("after", 已减) says nothing of the price on the next line
@example(PRICED[0], "AFTER")
@example(PRICED[0], "已减")
def test_adding_a_correct_price_never_lowers_factuality(base, reply):
    ctx = build_context(RewardCase.model_validate({"id": "t", "reply": reply, **base}))
    price = ctx.market.price(ctx.question.product)
    # Claims are attributed: the price is said of the product asked about, by name.
    name = ctx.market.catalog.by_id[ctx.question.product].name
    fact = f"\n{name}现在{price:g}元。" if base["env"] == ZH else f"\n{name} is ${price:.2f}."
    assert score(reply + fact, **base)["factuality"] >= score(reply, **base)["factuality"]


@PROPERTY
@given(st.sampled_from(BASES), TEXT)
def test_adding_a_banned_phrase_never_raises_compliance(base, reply):
    banned = "\n这是全网最好的。" if base["env"] == ZH else "\nIt is the best in the world."
    assert score(reply + banned, **base)["compliance"] <= score(reply, **base)["compliance"]


@PROPERTY
@given(st.sampled_from(BASES), TEXT)
def test_a_breakdown_ships_whole_whether_its_reasons_were_read_or_not(base, reply):
    # Reasons are formatted on first read; a breakdown sent to another process (Ray
    # workers, pickled records) must carry the same reasons as one read on the spot.
    import pickle

    unread = breakdown(reply, **base)
    shipped = pickle.loads(pickle.dumps(unread))
    read = breakdown(reply, **base)
    assert shipped.explain() == read.explain() == unread.explain()
    assert shipped.as_dict() == read.as_dict() and shipped.scores == read.scores


def test_a_fabric_share_is_named_a_spec_sheet_claim_not_a_size():
    reasons = breakdown("@mia_22 the wool cardigan is 70% wool, 30% nylon.",
                        question={"asker": "mia_22", "intent": "material", "product": "ap-cardigan-01"}).scores["factuality"].reasons
    assert "correct spec-sheet claim: 70%" in reasons and not any("size claim" in r for r in reasons)


def test_a_count_the_spec_sheet_states_is_a_spec_not_a_stock_claim():
    # The reference host quoting the charger's ports ("2个USB-C + 1个USB-A") was charged
    # two invented stock claims; a made-up stock count in the same room still is one.
    question = {"asker": "阿杰", "intent": "specs", "product": "el-charger-01"}
    ports = breakdown("@阿杰 氮化镓充电器接口：2个USB-C + 1个USB-A。", env=ZH, question=question)
    reasons = ports.scores["factuality"].reasons
    assert not any("stock" in r for r in reasons), reasons
    lie = breakdown("@阿杰 氮化镓充电器只剩2个了，赶紧拍。", env=ZH,
                    question={**question, "intent": "stock"}).scores["factuality"].reasons
    assert any("invented stock claim" in r for r in lie), lie


def test_a_number_quoted_from_the_compatibility_list_is_no_unitless_claim():
    # "works with iOS 14 or later" quotes the catalog: it was charged two unitless numbers
    # (hvqa-paraphrase_skills-en-9000861-2-1, found reading cards); a bare number is still one.
    question = {"asker": "phil", "intent": "compatibility", "product": "el-watch-01"}
    quoted = breakdown("@phil The fit S2 works with iOS 14 or later and Android 8 or later. #ad", question=question)
    assert not any("unitless" in r for r in quoted.scores["factuality"].reasons), quoted.scores["factuality"].reasons
    bare = breakdown("@phil The fit S2 is 14 and works with Android. #ad", question=question)
    assert any("unitless number claim: 14" in r for r in bare.scores["factuality"].reasons)
