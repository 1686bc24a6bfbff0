"""The reference host answers what each question asks (issue 27: the default SFT teacher).

On the eval suites of version 8 it passed 0.814 of LSQA: it skipped a viewer's new question
as served when the viewer had asked the same kind of thing before ("how much is it now?"
after the tea's price; pitched the featured product instead), split a two-part question
only at the joiners as written (not as viewers also type them: 顺便问问, 再打听下), left the
second part of a short answer pair for a later reply, answered "when is the flash sale?"
with "no coupon", read "asking for a friend" as a skin-type question, answered what no
listing says (delivery by Friday, who pays return shipping, true to size?) with the
listing's shipping or sizes as if that were the answer, and said "I can't check" for every
part of a question when one lookup was denied, also the parts whose lookups came back.
"""

from __future__ import annotations

import random

import pytest

from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.turn import run_turn
from liveroom_sim.policies import ScriptedAvatar


def _failures(cases, host=ScriptedAvatar) -> list[str]:
    out = []
    for case in cases:
        env, obs, info = Snapshot.of(case).fork(1)[0]
        sample, _ = run_turn(case, env, obs, info, host())
        if not sample.verdict["pass"]:
            out.append(f"{case.id} {case.question.text!r} -> {sample.reply!r}")
    return out


def test_the_reference_host_answers_nearly_every_question_of_a_sample_of_lsqa():
    cases = random.Random(27).sample([c for c in load_suite("lsqa")[1] if c.kind not in ("bait", "injection")], 240)
    failed = _failures(cases)
    assert len(failed) <= 0.04 * len(cases), "\n".join(failed)  # 76 of 240 failed before


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_part_of_a_two_part_question_is_answered(language):
    cases = [c for c in load_suite("lsqa")[1] if c.kind == "multi_intent" and c.language == language]
    failed = _failures(cases)
    assert len(failed) <= 0.06 * len(cases), "\n".join(failed)


def test_a_host_told_to_answer_one_ask_per_reply_leaves_the_second_part_for_later():
    # The not-gameable suite's "one ask per reply" hunter: the same host, each part its own reply.
    cases = random.Random(25).sample([c for c in load_suite("lsqa")[1] if c.kind == "multi_intent"], 40)
    one_by_one = _failures(cases, lambda: ScriptedAvatar(asks_per_reply=1))
    assert len(_failures(cases)) <= 0.1 * len(cases)
    assert len(one_by_one) >= 0.6 * len(cases), "\n".join(one_by_one)  # 31 of 40: a part left unsaid
    with pytest.raises(ValueError, match="asks_per_reply"):
        ScriptedAvatar(asks_per_reply=0)


def test_what_no_listing_says_is_said_to_be_unlisted():
    """"can it ship straight to my sister?", "true to size?", 运费谁出, 会缩水吗: the honest
    answer says the listing does not say, and gives what it does say."""
    cases = [c for c in load_suite("lsqa")[1] if any(a.form == "unknown" for a in c.answers)]
    assert len(cases) >= 40
    failed = _failures(cases)
    assert len(failed) <= 0.05 * len(cases), "\n".join(failed)


def test_a_denied_lookup_leaves_what_came_back_answered():
    """One tool denied: the parts whose lookups came back are answered, the rest said to be
    unchecked (it said "I can't check" for all of them)."""
    cases = [c for c in load_suite("robust")[1] if c.fault is not None and c.fault.kind == "denied"]
    assert len(cases) >= 100
    failed = _failures(cases)
    assert len(failed) <= 0.05 * len(cases), "\n".join(failed)


@pytest.mark.parametrize("word", ["charger", "秒杀"])
def test_questions_with_a_word_that_misled_the_host_are_answered(word):
    """"this charger how much?" read as a battery question (the cue "charge" in the kind
    word that named the product), and "什么时候秒杀" answered "今天没有优惠券" (no coupon
    says nothing of a flash sale): such LSQA cases failed."""
    cases = [c for c in load_suite("lsqa")[1] if word in c.question.text.lower() and c.kind not in ("bait", "injection")]
    assert len(cases) >= 8
    failed = _failures(cases)
    assert len(failed) <= 0.05 * len(cases), "\n".join(failed)


@pytest.mark.parametrize("field, value", [("beyond_listing", {"shipping": "(ship"}), ("quality", {"count": ["(x"]})])
def test_a_host_file_with_a_broken_pattern_is_refused_naming_it(tmp_path, field, value):
    import yaml

    from liveroom_sim.policies.host_lines import HostLines
    from liveroom_sim.world import datafile
    from liveroom_sim.world.paths import ENVS_DIR
    from liveroom_sim.errors import SpecError

    data = yaml.safe_load((ENVS_DIR / "host" / "en.yaml").read_text())
    path = tmp_path / "en.yaml"
    path.write_text(yaml.safe_dump({**data, field: value}, allow_unicode=True))
    with pytest.raises(SpecError) as err:
        datafile.load(HostLines, path)
    key = next(iter(value))
    assert f"{field}.{key}" in str(err.value) and "not a regular expression" in str(err.value)


@pytest.fixture(scope="module")
def system_en():
    import gymnasium as gym

    from liveroom_sim.policies.reading import system_text

    _, info = gym.make("LiveRoom-v0").reset(seed=0)
    return system_text(info["messages"])


@pytest.mark.parametrize("text, featured, asks", [
    # a joiner joins words, not parts of one: "hand wash", "standard", "spend and save"
    ("is a hand wash ok and how much?", "ap-dress-01", [("care", None), ("price", None)]),
    ("be honest does spend and save work on beef jerky btw price pls", "ap-dress-01",
     [("promotion", "sn-jerky-01"), ("price", "sn-jerky-01")]),
    # a kind word that is a cue asks, and names nothing ("battery" of the "magnetic battery")
    ("can u read the specs of this one btw battery? just curious", "el-keyboard-01", [("specs", None), ("battery", None)]),
    ("how long does the magnetic battery last?", "el-keyboard-01", [("battery", "el-powerbank-01")]),
    # ... but the kind a product's full name ends with still names it ("the nuts"), after any other kind
    ("real q whats the shelf life on the nuts", "ap-dress-01", [("shelf_life", "sn-nuts-01")]),
    ("any nuts in the cookies?", "ap-dress-01", [("allergens", "sn-cookie-01")]),
    # "the light wash one" points at the jeans on stage, not at the ring light
    ("hi! question the light wash one true to size?", "ap-jeans-01", [("size", None)]),
])
def test_the_reference_reads_each_ask_of_a_message_as_a_viewer_means_it(system_en, text, featured, asks):
    from liveroom_sim.policies.reading import asks_in

    assert [(i, p) for i, p, _ in asks_in(text, system_en, "en", featured)] == asks


def test_where_is_my_refund_of_an_order_with_none_says_there_is_none():
    """The reference said "你的退款：订单LR-20325运输中" (your refund is in transit) of an order
    with no refund at all; it now says there is none, and where the order is."""
    cases = [c for s in ("lsqa", "follow") for c in load_suite(s)[1]
             if ("退款" in c.question.text or "refund" in c.question.text.lower()) and c.question.order]
    assert len(cases) >= 20
    none = 0
    for case in cases:
        env, obs, info = Snapshot.of(case).fork(1)[0]
        sample, _ = run_turn(case, env, obs, info, ScriptedAvatar())
        status = next(o.status for o in env.unwrapped.world.catalog.orders if o.id == case.question.order)
        if status in ("refund requested", "退款中"):
            assert "no refund" not in sample.reply.lower() and "没有退款" not in sample.reply, sample.reply
        else:
            none += 1
            assert "no refund" in sample.reply.lower() or "没有退款" in sample.reply, (case.id, sample.reply)
            assert sample.verdict["pass"], (case.id, sample.reply)
    assert none >= 10
