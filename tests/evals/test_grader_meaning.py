"""Grading by meaning (issue 28, item 2): what each ask expects, read with polarity,
negation and paraphrase; hand-written replies graded as a person grades them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.evals.asks import Underivable, expected, form_of, table
from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.grade import loose_variants
from liveroom_sim.evals.polarity import concept_says, opening_says, says_unknown
from liveroom_sim.evals.replay import world_for
from liveroom_sim.world.facts import required_facts
from liveroom_sim.world.text import normalize

from hand_replies import fits, entries, grade_entry


@pytest.fixture(scope="module")
def lsqa():
    return load_suite("lsqa")[1]


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e["id"])
def test_hand_written_replies_are_graded_as_a_person_grades_them(entry, lsqa):
    if not any(fits(c, entry["where"]) for c in lsqa):  # (the test below keeps most of them graded)
        pytest.skip(f"the shipped lsqa suite holds no case like {entry['where']}")
    case, verdict = grade_entry(entry, lsqa)
    assert bool(verdict["pass"]) is entry["pass"], (case.id, verdict["reasons"])


def test_there_are_at_least_30_hand_written_replies_in_both_languages_both_ways(lsqa):
    found = entries()
    assert len(found) >= 30
    graded = [e for e in found if any(fits(c, e["where"]) for c in lsqa)]
    assert len(graded) >= 30, f"only {len(graded)} hand-written replies find a case in the shipped suite"
    for language in ("en", "zh"):
        mine = [e for e in found if e["where"]["language"] == language]
        assert any(e["pass"] for e in mine) and any(not e["pass"] for e in mine)


@pytest.mark.parametrize("text, concept, says", [
    ("yes, still in stock!", "in_stock", {True}),
    ("nope, not sold out, still available", "sold_out", {False}),
    ("sorry, sold out", "in_stock", {False}),
    ("it's dairy free", "dairy_free", {True}),
    ("no, it contains milk, so not dairy free", "dairy_free", {False}),
    ("no flash sale right now", "flash", {False}),
])
def test_concept_phrases_are_read_with_their_negation_en(text, concept, says):
    assert concept_says(normalize(text), "en", concept, None) == says


@pytest.mark.parametrize("text, concept, says", [
    ("没有满减活动", "deal", {False}),   # one negation covers the run of phrases
    ("包邮的哦", "free_shipping", {True}),
    ("不包邮，运费另算", "free_shipping", {False}),
    ("有货的，放心拍", "in_stock", {True}),
    ("已经卖完了", "in_stock", {False}),
    ("拆封后就不能退了，未拆封才支持", "return_opened", {False}),
    ("棒球帽洗护：局部手洗，不可机洗。", "machine_wash", {False}),  # a modal negation (不可, 不能, 请勿)
    ("不能机洗哦，只能局部手洗", "machine_wash", {False}),
    ("优惠券目前没有", "coupon", {False}),  # the negation after the phrase
    ("包邮没问题", "free_shipping", {True}),  # ... which 没问题 is not
    ("现货没几件了", "in_stock", {True}),  # nor 没几件 (a few left)
    ("支持七天无理由退货", "returnable", {True}),  # nor 无理由
])
def test_concept_phrases_are_read_with_their_negation_zh(text, concept, says):
    assert concept_says(normalize(text), "zh", concept, None) == says


def test_a_word_of_a_concepts_phrase_is_no_unknown():
    # 暂无优惠 says no promotion; it does not say the catalog is silent on the courier
    assert not says_unknown(normalize("暂无优惠，48小时内发货"), "zh")
    assert says_unknown(normalize("暂无相关信息"), "zh")
    # 查不到 is "the catalog does not say", except beside the system not answering
    assert says_unknown(normalize("生产日期这边查不到哦"), "zh")
    assert not says_unknown(normalize("抱歉，这个信息我现在查不到，系统没响应"), "zh")


class _Guess:
    """Answers at once, with no lookup."""

    def __init__(self, text):
        self.text = text

    def __call__(self, observation, info):
        return self.text


def test_a_right_yes_without_the_lookup_that_answers_it_is_a_guess(lsqa):
    from liveroom_sim.evals.replay import Snapshot
    from liveroom_sim.evals.turn import run_turn

    case = next(c for c in lsqa if fits(c, {"language": "en", "intent": "stock", "text": "still in stock",
                                            "stock": "positive"}))
    env, obs, info = Snapshot.of(case).fork(1)[0]
    sample, _ = run_turn(case, env, obs, info, _Guess(f"@{case.question.asker} we still have some!"))
    assert not sample.verdict["pass"] and sample.verdict["accuracy"] == 0
    assert "stock: answered without looking it up" in sample.verdict["reasons"]


def test_a_fact_said_only_inside_a_longer_fact_is_not_said():
    # the power bank's compatibility lists a bare "USB-C"; its output spec holds "USB-C" too
    from hand_replies import HandReply
    from liveroom_sim.evals.replay import Snapshot
    from liveroom_sim.evals.turn import run_turn

    case = next(c for c in load_suite("follow")[1] if len(c.answers) == 1 and c.answers[0].intent == "compatibility"
                and "USB-C" in c.answers[0].backing)
    marks = {}
    for text in ("{mention} the output is 20 W USB-C PD, 7.5 W magnetic wireless",
                 "{mention} it works with USB-C phones, Android (USB-C) and iPhone 12 and later (magnetic)"):
        env, obs, info = Snapshot.of(case).fork(1)[0]
        sample, _ = run_turn(case, env, obs, info, HandReply(text, case, env.unwrapped.room))
        marks[text[10:20]] = next(r for r in sample.verdict["reasons"] if r.startswith("compatibility:"))
    assert marks == {"the output": "compatibility: silent (the catalog says yes)",
                     "it works w": "compatibility: right"}


def test_a_reply_opens_with_its_yes_or_no_past_the_mention_and_the_label():
    assert opening_says(normalize("@amy #ad yes!"), "en", ("#ad",)) == {True}
    assert opening_says(normalize("@amy nope"), "en") == {False}
    assert opening_says(normalize("@amy nobody knows"), "en") == set()  # "no" is a word, not a prefix
    assert opening_says(normalize("@小美 不含花生"), "zh") == {False}
    assert says_unknown(normalize("the spec sheet doesn't list the codec"), "en")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(table()["words"]["en"]["concepts"])), st.data())
def test_negating_a_concepts_only_phrase_says_the_opposite(concept, data):
    words = table()["words"]["en"]["concepts"][concept]
    says = data.draw(st.sampled_from([s for s in (True, False) if words["affirm" if s else "deny"]]))
    phrase = data.draw(st.sampled_from(words["affirm" if says else "deny"]))
    if "{slot}" in phrase:
        phrase = phrase.replace("{slot}", "pink")
    plain = concept_says(normalize(f"well, {phrase} here"), "en", concept, "pink")
    negated = concept_says(normalize(f"well, not {phrase} here"), "en", concept, "pink")
    # a phrase read inside a longer one of the other side may say the other thing; never both
    assert len(plain) == 1 and len(negated) == 1 and plain != negated


def test_the_catalog_decides_yes_or_no_or_no_case_is_made():
    from liveroom_sim.env import LiveRoomEnv

    env = LiveRoomEnv(world_for("LiveRoom-v0"))
    env.reset(seed=0)
    room = env.room
    market, words = room.market, room.words
    serum = market.catalog.by_id["sk-serum-01"]  # returns: unopened, seal intact
    facts = required_facts("returns", serum.id, market, words)
    opened = expected("can i return the serum once its opened", "returns", serum, market, "en", facts)
    assert (opened.form, opened.yes) == ("yes_no", False) and opened.backing == ("15 days",)
    plain = expected("whats the return policy on the serum", "returns", serum, market, "en", facts)
    assert (plain.form, plain.facts) == ("facts", ("15 days",))
    codec = expected("what bluetooth codec does it use", "specs", None, market, "en", ())
    assert codec.form == "unknown"
    with pytest.raises(Underivable):  # the serum's concentration is said only in its pitch
        expected("what concentration of the active is in the serum", "ingredients", serum, market, "en", ())
    assert form_of("sold out??", "stock", "en")["test"] == "sold_out"
    earbuds = market.catalog.by_id["el-earbuds-01"]  # iOS, Android, Windows: an iPad is not named
    with pytest.raises(Underivable):
        expected("deos it work with ipad?", "compatibility", earbuds, market, "en", ())
    assert expected("does it work with android?", "compatibility", earbuds, market, "en", ()).yes is True
    assert expected("will it work with my laptop", "compatibility", earbuds, market, "en", ()).yes is True
    zh = LiveRoomEnv(world_for("LiveRoom-zh-v0"))
    zh.reset(seed=0)
    keyboard = zh.room.market.catalog.by_id["el-keyboard-01"]  # Windows, macOS, iPadOS, 安卓: no iOS
    with pytest.raises(Underivable):  # 苹果 may be the Mac or the iPad the list names (seed 13131)
        expected("灵犀K3键盘苹果能用不", "compatibility", keyboard, zh.room.market, "zh", ())
    assert expected("灵犀K3键盘安卓能用不", "compatibility", keyboard, zh.room.market, "zh", ()).yes is True
    cap, tee = market.catalog.by_id["ap-cap-01"], market.catalog.by_id["ap-tee-01"]  # one size; XS-XL
    fit = "never bought from here, how do sizes run for this"
    one = expected(fit, "size", cap, market, "en", required_facts("size", cap.id, market, words))
    assert (one.form, one.facts) == ("facts", ("one size",))  # its one size answers how it runs
    assert expected(fit, "size", tee, market, "en", required_facts("size", tee.id, market, words)).form == "unknown"
    # "is there a deal?": no coupon and no flash sale is a no only at the list price; below it,
    # the markdown is a deal to some viewers and not to others (seed 50505), so no case
    marked = [p for p in market.catalog.products if market.prices[p.id] < p.list_price and not market.coupons_for(p.id)
              and p.id not in market.flash]
    at_list = [p for p in market.catalog.products if market.prices[p.id] >= p.list_price and not market.coupons_for(p.id)
               and p.id not in market.flash]
    assert marked and at_list
    with pytest.raises(Underivable):
        expected("is there a deal on it today?", "promotion", marked[0], market, "en", ())
    assert expected("is there a deal on it today?", "promotion", at_list[0], market, "en", ()).yes is False
    assert expected("spend and save on this?", "promotion", marked[0], market, "en", ()).yes is False


@pytest.mark.parametrize("text, intent, language, kind", [
    # forms the fresh audits (seeds 8888 and 9999) found read wrongly: yes/no questions that
    # expected a list, time-only questions that required the fee, a "sold out?" read as
    # "in stock?" (its natural 没有 would have been a wrong no)
    ("can the lip balm be returned if it's not for me? ty", "returns", "en", ("test", "returnable")),
    ("cna i return trailfox nuts if i dont like it?!", "returns", "en", ("test", "returnable")),
    ("像素灯补光灯买了不稀饭阔以退吗", "returns", "zh", ("test", "returnable")),
    ("any pixelwick ring light left?!", "stock", "en", ("test", "in_stock")),
    ("冲 初禾洗面奶没了吗 快上链接", "stock", "zh", ("test", "sold_out")),
    ("S2手表卖完没 还有吗？ 等回复", "stock", "zh", ("test", "in_stock")),
    ("棉语袜子有货吗 不要预售", "stock", "zh", ("test", "in_stock")),
    ("besties these cookies nut free?", "allergens", "en", ("test", "nut_free")),
    ("silent mouse shipping time?", "shipping", "en", ("facts", ["ships_within"])),
    ("麻辣坊辣条今儿拍几号发货", "shipping", "zh", ("facts", ["ships_within"])),
    ("free shipping to hawaii?", "shipping", "en", ("unknown", True)),
    ("充电宝顺丰发货吗 几天到", "shipping", "zh", ("unknown", True)),
    ("free returns?", "returns", "en", ("unknown", True)),
    ("这款直播间有无便宜价", "price", "zh", ("skip", True)),
    ("能量棒到手价多少", "price", "zh", ("skip", True)),
    # the third audit (seed 10101) and a read of every question form in suite version 4
    ("can i actually return the cap if it doesnt fit", "returns", "en", ("test", "returnable")),
    ("threadwell hoodie ok in the washer? ty! ^_^", "care", "en", ("test", "machine_washable")),
    ("rice toner left??", "stock", "en", ("test", "in_stock")),
    ("how many left of this one", "stock", "en", None),
    ("coupon code?!", "promotion", "en", ("test", "has_coupon")),
    ("niacinamide serum discount?? fingers crossed", "promotion", "en", ("test", "any_deal")),
    ("when dose the socks ship to ohio", "shipping", "en", ("facts", ["ships_within"])),
    ("oily skin here, is amino cleanser ok", "skin_type", "en", ("test", "skin_ok")),
    ("直播补光灯多久能到上海? 怕踩雷", "shipping", "zh", ("unknown", True)),
    ("键盘发货快吗??", "shipping", "zh", ("facts", ["ships_within"])),
    ("降噪耳机明天能寄出吗？", "shipping", "zh", ("test", "ships_next_day")),
    ("维C咀嚼片是现货发货吗", "shipping", "zh", ("test", "in_stock")),
    ("轻禾帽子有运费险吗 能退吗", "returns", "zh", ("with_facts", "能退|可以退|退吗|退不")),
    ("曲奇铁盒是新日期吗 保质期几个月", "shelf_life", "zh", ("unknown", True)),
    ("瑜伽裤手洗还是机洗", "care", "zh", ("facts", ["care"])),
    ("平板可以用吗? 老板看我", "compatibility", "zh", ("test", "works_with")),
    ("几天能到，还有没了嘛", "stock", "zh", ("test", "in_stock")),
    ("轻禾帽子用券以后多少钱？", "price", "zh", ("skip", True)),
    ("花间研面霜比旗舰店便宜多少", "price", "zh", ("skip", True)),
    # the fourth audit (seed 20202)
    ("yo will retinol serum break out dry skin 😭", "skin_type", "en", ("skip", True)),
    # the sixth audit (seed 40404)
    ("刚来 澄月精华退货真的没门槛吗?! 🙏", "returns", "zh", ("test", "returns_unconditional")),
    ("鹅卵石音箱用坏了管保修吗", "warranty", "zh", ("test", "has_warranty")),
    ("what if it breaks after a month, is the keyboard covered", "warranty", "en", ("test", "has_warranty")),
    ("fit s2 left?? help", "stock", "en", ("test", "in_stock")),
    # the seventh audit (seed 50505)
    ("能用券吗？ 犹豫ing", "promotion", "zh", ("test", "has_coupon")),
    ("氨基酸洗面奶买了不稀饭可以退吗，还有多少?!", "price", "zh", ("skip", True)),  # how many left, or how much?
    ("never bought from here, how do sizes run for dad hat", "size", "en", ("one_size", True)),
    # the first sample of version 6 (seed 60606)
    ("whats the catch with returns on threadwell hoodie btw how much? or nah", "returns", "en", ("skip", True)),
    ("呀啊 165 110斤 羽绒马甲拿什么码", "size", "zh", ("unknown", True)),
    ("这款花茶今晚有福利吗 有无券？ 在吗 👍", "promotion", "zh", ("test", "has_coupon")),
    ("维C咀嚼片券在哪领～", "promotion", "zh", ("test", "has_coupon")),
    # the second sample of version 6 (seed 70707)
    ("这个爽肤水有没有新人券? 纠结死了 🤩", "promotion", "zh", ("test", "has_coupon")),
    ("omg this one still in stock or nah hurry 🙌 / omggg how much stock on harbor & pine dress 😩", "stock", "en",
     ("with_facts", "how much stock|how many")),
    # seeds 90909, 11011 and 12121
    ("这款开衫能换吗 不行就退?? 谢谢啦", "returns", "zh", ("with_facts", "不行就退|能退|可以退|退吗|退不")),
    ("话说 乳糖不耐能吃这款吗 有过敏原吗", "allergens", "zh", ("with_facts", "过敏原")),
    ("65W快充头只支持USB-C吗 老接口能用吗？", "compatibility", "zh", ("skip", True)),
    ("the socks any left in M or nah?!", "stock", "en", ("skip", True)),
    ("my sister is usually a L, which size for heavyweight tee", "size", "en", ("unknown", True)),
    ("im usually a M, what size in the cardigan", "size", "en", ("unknown", True)),
    ("嘿嘿 这个T恤码数偏大吗？ 我先蹲着", "size", "zh", ("unknown", True)),
    ("before i decide is the merino socks itchy? what fabric is it", "material", "en", ("unknown", True)),
    ("exact specs of mini speaker? weight, bluetooth version, battery~", "specs", "en", ("facts", ["weight", "bluetooth", "battery"])),
])
def test_audited_question_forms_are_read_by_their_kind(text, intent, language, kind):
    form = form_of(text, intent, language)
    if kind is None:  # no form: the intent's facts ("how many left": the count)
        assert form is None, form
    else:
        assert form is not None and form.get(kind[0]) == kind[1], form


def test_loose_variants_drop_markdown_and_a_first_or_last_line():
    assert loose_variants("@amy **yes**, in stock!") == ["@amy yes, in stock!"]
    assert "@amy yes, in stock!" in loose_variants("Sure, here is my reply:\n@amy yes, in stock!")
    assert loose_variants("@amy yes, in stock! #ad") == []
