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


def _failures(cases) -> list[str]:
    out = []
    for case in cases:
        env, obs, info = Snapshot.of(case).fork(1)[0]
        sample, _ = run_turn(case, env, obs, info, ScriptedAvatar())
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
