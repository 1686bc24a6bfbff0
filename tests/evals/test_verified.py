"""The human-verified subset (issue 28 item 4): cases a person read and signed off, held
only for the case as read, reported as its own row."""

from __future__ import annotations

import datetime
from collections import Counter

import pytest

from liveroom_sim.errors import SpecError
from liveroom_sim.evals.cases import SUITES, case_sha, load_suite
from liveroom_sim.evals.review import MIN_VERIFIED, SignOff, card, load_signoffs, signed
from liveroom_sim.evals.runner import evaluate_case
from liveroom_sim.evals.summary import markdown, summarize
from liveroom_sim.rollout.policy_spec import PolicySpec


@pytest.fixture(scope="module")
def cases():
    return [c for s in SUITES for c in load_suite(s)[1]]


def test_the_shipped_subset_holds_300_current_cases_of_every_suite_and_language_none_wrong(cases):
    signoffs = load_signoffs()
    held, stale = signed(cases, signoffs)
    assert not stale, f"{len(stale)} sign-offs whose case changed since it was read, e.g. {stale[0].id}: " \
                      "read them again (liveroom eval-suites --review) or drop them"
    wrong = [s.id for s in held.values() if s.verdict == "wrong"]
    assert not wrong, f"cases a reader found wrong are still shipped: {wrong[:5]}"
    by_id = {c.id: c for c in cases}
    right = [by_id[i] for i, s in held.items() if s.verdict == "right"]
    assert len(right) >= MIN_VERIFIED
    cells = Counter((c.suite, c.language) for c in right)
    assert {(s, lang) for s in SUITES for lang in ("en", "zh")} <= set(cells), cells
    for s in held.values():
        assert s.who.strip() and datetime.date.fromisoformat(s.when)
    assert len({s.id for s in signoffs}) == len(signoffs), "a case signed twice"


def test_a_sign_off_does_not_carry_over_to_a_changed_case(cases):
    case = cases[0]
    read = SignOff(id=case.id, sha=case_sha(case), verdict="right", who="r", when="2026-12-02")
    assert case.id in signed([case], (read,))[0]
    changed = case.model_copy(update={"must": (*case.must, "something else")})
    held, stale = signed([changed], (read,))
    assert not held and stale == [read]


def test_a_broken_sign_off_file_names_its_file_and_field(tmp_path):
    path = tmp_path / "verified.yaml"
    path.write_text("- id: x\n  sha: y\n  verdict: maybe\n  who: r\n  when: '2026-12-02'\n")
    with pytest.raises(SpecError) as err:
        load_signoffs(path)
    assert "verified.yaml" in str(err.value) and "verdict" in str(err.value)


def test_an_eval_reports_the_verified_subset_as_its_own_row(cases):
    read = {s.id for s in load_signoffs() if s.verdict == "right"}
    by_id = {c.id: c for c in cases}
    ran = [by_id[i] for i in sorted(read)[:2] if i in by_id] + [c for c in cases if c.id not in read][:2]
    records = [evaluate_case(c, PolicySpec(kind="scripted")) for c in ran]
    summary = summarize(records, {}, {"policy": {"kind": "scripted"}, "samples": 1, "suites": {}})
    assert summary["verified"]["cases"] == len([c for c in ran if c.id in read])
    assert "| verified by a person |" in markdown(summary)


def test_a_card_shows_what_the_reader_judges(cases):
    case = next(c for c in cases if c.suite == "robust" and c.fault)
    text = card(case)
    assert case.question.text in text and "EXPECTS" in text and f"FAULT: {case.fault.kind}" in text
    assert "scripted [" in text and "naive [" in text
