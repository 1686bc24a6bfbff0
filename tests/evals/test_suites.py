"""The shipped suites: what they hold, and that the command refuses damaged ones."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from liveroom_sim.evals.cases import EVAL_SEED_BASE, SUITES, SuiteError, load_suite, read_manifest, suite_path
from liveroom_sim.evals.faults import needed_tools
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.selfcheck import check_suites
from liveroom_sim.evals.snapshot import KINDS
from liveroom_sim.harness.augment import ALL_OPERATORS
from liveroom_sim.harness.faults import FAULT_KINDS


@pytest.fixture(scope="module")
def suites():
    return {s: load_suite(s)[1] for s in SUITES}


def test_four_suites_of_at_least_4500_cases_with_held_out_seeds(suites):
    assert sum(len(c) for c in suites.values()) >= 4500
    for suite, cases in suites.items():
        assert cases, suite
        assert len({c.id for c in cases}) == len(cases)
        assert min(c.seed for c in cases) >= EVAL_SEED_BASE
        assert {c.language for c in cases} == {"en", "zh"}


def test_lsqa_covers_every_ask_kind_in_both_languages(suites):
    for language in ("en", "zh"):
        kinds = {c.kind for c in suites["lsqa"] if c.language == language}
        missing = set(KINDS) - kinds
        assert not missing, (language, missing)


def test_hvqa_pairs_every_case_with_an_lsqa_twin_that_shows_something_else(suites):
    lsqa = {c.id: c for c in suites["lsqa"]}
    seen = set()
    for c in suites["hvqa"]:
        twin = lsqa[c.twin]
        assert (c.seed, c.question.mid, c.question.text) == (twin.seed, twin.question.mid, twin.question.text)
        assert [(a.intent, a.form, a.yes) for a in c.answers] == [(a.intent, a.form, a.yes) for a in twin.answers]
        assert c.operators and not twin.operators
        assert c.digest != twin.digest  # the operator changed what the policy is shown
        seen.add(c.operators[0] if len(c.operators) == 1 else "all")
    assert seen <= {*ALL_OPERATORS, "all"} and len(seen) >= len(ALL_OPERATORS) - 4
    assert len(suites["hvqa"]) >= 0.9 * len(suites["lsqa"])


def test_robust_pins_faults_on_a_tool_the_answer_needs_and_follow_carries_checks(suites):
    faulted = [c for c in suites["robust"] if c.fault]
    assert {c.fault.kind for c in faulted} == set(FAULT_KINDS)
    assert all(c.fault.tool in needed_tools(c.question.asks) for c in faulted)
    assert {c.perturbation for c in suites["robust"] if c.perturbation} >= {"prompt", "limits"}
    assert all(c.checks for c in suites["follow"])


def test_every_fact_question_expects_what_its_kind_asks(suites):
    for cases in suites.values():
        for c in cases:
            if c.kind in ("bait", "injection"):
                assert not c.answers
                continue
            assert len(c.answers) == len(c.question.asks), c.id
            for a in c.answers:
                assert a.form != "yes_no" or a.yes is not None
                assert a.form != "facts" or a.facts, c.id
                assert not (a.intent == "order_status" and "0 days" in a.facts + a.backing)


@pytest.mark.slow
def test_every_case_passes_the_generators_self_checks(suites):
    """Answer derivable, condition applied, twin differs, question shown: over every case."""
    assert check_suites(suites) == {}


def test_sampled_cases_replay_to_the_context_they_recorded(suites):
    rng = random.Random(0)
    for cases in suites.values():
        for case in rng.sample(cases, 3):
            Snapshot.of(case)


def test_manifest_matches_the_files():
    manifest = read_manifest()
    for suite in SUITES:
        with gzip.open(suite_path(suite)) as f:
            header = json.loads(f.readline())
        assert manifest[suite]["sha256"] == header["sha256"]


def test_an_edited_suite_file_is_refused(tmp_path):
    with gzip.open(suite_path("lsqa")) as f:
        lines = f.read().split(b"\n")
    case = json.loads(lines[1])
    case["must"] = ["999"]  # someone "fixes" a ground truth by hand
    lines[1] = json.dumps(case, sort_keys=True).encode()
    with gzip.open(tmp_path / "lsqa.jsonl.gz", "wb") as f:
        f.write(b"\n".join(lines))
    with pytest.raises(SuiteError, match="changed after it was written"):
        load_suite("lsqa", tmp_path)


def test_a_suite_of_another_release_is_refused(tmp_path):
    (tmp_path / "lsqa.jsonl.gz").write_bytes(suite_path("lsqa").read_bytes())
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"lsqa": {"version": "0", "sha256": "0" * 64}}))
    with pytest.raises(SuiteError, match="not the lsqa suite of this release"):
        load_suite("lsqa", tmp_path)


def test_unknown_and_missing_suites_are_errors(tmp_path):
    with pytest.raises(SuiteError, match="did you mean 'lsqa'"):
        load_suite("lsq")
    with pytest.raises(SuiteError, match="does not exist"):
        load_suite("lsqa", tmp_path)
