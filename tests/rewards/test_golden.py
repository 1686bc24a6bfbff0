"""The golden reward suite, and the ``liveroom rewards check/explain`` commands over it."""

from __future__ import annotations

import doctest
import json
from collections import Counter
from pathlib import Path

import pytest

from liveroom_sim.cli.rewards import main
from liveroom_sim.errors import SpecError
from liveroom_sim.rewards import golden
from liveroom_sim.rewards.golden import assert_reward_cases, check_cases, load_cases
from liveroom_sim.spec import COMPONENTS

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "rewards.jsonl"


def _lines() -> list[dict]:
    return [json.loads(line) for line in GOLDEN.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, cases: list[dict]) -> Path:
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in cases), encoding="utf-8")
    return path


def test_golden_suite_matches_its_labels():
    result = assert_reward_cases(GOLDEN)
    assert result.ok and result.cases >= 220


@pytest.mark.parametrize("path", sorted(GOLDEN.parent.glob("*.jsonl")), ids=lambda p: p.name)
def test_every_golden_file_matches_its_labels(path):
    # Topic files (tests/golden/<topic>.jsonl) sit beside rewards.jsonl; each must pass whole.
    assert assert_reward_cases(path).ok


def _all_lines() -> list[dict]:
    return [json.loads(line) for path in sorted(GOLDEN.parent.glob("*.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_suite_labels_every_component_many_times_in_both_languages():
    cases = _all_lines()
    langs = Counter("zh" if c["env"] == "LiveRoom-zh-v0" else "en" for c in cases)
    labelled = Counter((k, c["env"]) for c in cases for k in c["expected"])
    assert langs["zh"] >= 70 and langs["en"] >= 70
    for env in ("LiveRoom-v0", "LiveRoom-zh-v0"):
        # outcome is the room's (what a step lost), never one reply's: cases cannot label it.
        for name in set(COMPONENTS) - {"outcome", "tools"}:
            assert labelled[(name, env)] >= 40, (name, env)
        assert labelled[("tools", env)] >= 4, env
        assert labelled[("total", env)] >= 15, env


def test_every_case_has_tags_and_a_note():
    assert all(c["tags"] and c["note"] for c in _lines())


def test_a_reply_listing_every_fact_totals_below_the_concise_answer():
    result = {c.id: c for _, c in load_cases(GOLDEN)}
    for lang in ("en", "zh"):
        long_total = result[f"{lang}-lists-every-fact"].expected["total"]
        concise_total = result[f"{lang}-concise-correct-serum"].expected["total"]
        assert long_total < concise_total


def test_check_exits_0_on_the_suite(capsys):
    assert main(["rewards", "check", str(GOLDEN)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    n = len(_lines())
    assert out == [f"{n} cases: {n} passed, 0 failed"]


def test_check_exits_1_and_prints_a_readable_diff(tmp_path, capsys):
    cases = _lines()
    i = next(i for i, c in enumerate(cases) if c["id"] == "en-price-outdated-after-change")
    cases[i]["expected"]["factuality"] = 1.0
    path = _write(tmp_path / "cases.jsonl", cases)
    assert main(["rewards", "check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"FAIL en-price-outdated-after-change (line {i + 1}): factuality: expected +1, got -1 "
                      "[outdated price claim: $24.99]")
    assert out[-1] == f"{len(cases)} cases: {len(cases) - 1} passed, 1 failed"


def test_check_tolerance_option(tmp_path):
    cases = [c for c in _lines() if c["id"] == "en-waited-30s"]
    cases[0]["expected"]["engagement"] += 1e-4
    path = _write(tmp_path / "cases.jsonl", cases)
    assert main(["rewards", "check", str(path)]) == 1
    assert main(["rewards", "check", str(path), "--tolerance", "1e-3"]) == 0


@pytest.mark.parametrize("line, problem", [
    ('{"id": "x", "question": {"intent": "price"}, "reply": "hi"}', "line 2: field 'question.asker': Field required"),
    ('{"id": "x", "reply": "hi", "expected": {"factuality": "high"}}', "line 2: field 'expected.factuality'"),
    ('{"id": "x", "reply": "hi", "expected": {"fact": 1}}', "line 2: field 'expected.fact': unknown key"),
    ('{"id": "x", "reply": "hi"', "line 2: broken JSON at column"),
    ('{"id": "x", "env": "LiveRoom-v9", "reply": "hi"}', "line 2: field 'env': cannot load env spec 'LiveRoom-v9'"),
    ('{"id": "x", "events": [{"type": "price_hike"}], "reply": "hi"}', "line 2: field 'events.0'"),
    ('{"id": "x", "events": [{"type": "stock_out", "product": "nope"}], "reply": "hi"}',
     "line 2: field 'events.0.product': unknown product 'nope'"),
    ('{"id": "x", "question": {"asker": "a", "intent": "price", "product": "sk-serum-1"}}',
     "line 2: field 'question.product': unknown product 'sk-serum-1' (did you mean 'sk-serum-01'?)"),
    ('{"id": "x", "question": {"asker": "a", "intent": "prise", "product": "sk-serum-01"}}',
     "line 2: field 'question.intent': Value error, unknown intent 'prise' (did you mean 'price'?)"),
    ('{"id": "x", "question": {"asker": "a", "intent": "order_status", "order": "LR-1"}}',
     "line 2: field 'question.order': unknown order 'LR-1'"),
    ('{"id": "x", "question": {"asker": "a", "intent": "stock"}}',
     "line 2: field 'question.product': intent 'stock' asks about a product"),
    ('{"id": "x", "reply": "hi", "constraints": {"mention_fmt": "@{name}"}}', "line 2: field 'constraints.mention_fmt'"),
    ('{"id": "en-greet-addressed", "reply": "hi"}', "line 2: field 'id': duplicate id"),
])
def test_check_exits_2_naming_file_line_and_field(tmp_path, capsys, line, problem):
    path = tmp_path / "broken.jsonl"
    first = next(c for c in _lines() if c["id"] == "en-greet-addressed")
    path.write_text(json.dumps(first) + "\n" + line + "\n", encoding="utf-8")
    assert main(["rewards", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and problem in err and "Traceback" not in err


def test_load_cases_reports_every_bad_line_at_once(tmp_path):
    path = tmp_path / "broken.jsonl"
    path.write_text('{"id": "a", "reply": 3}\n\n{"id": "b", "kind": "speech"}\n', encoding="utf-8")
    with pytest.raises(SpecError) as info:
        load_cases(path)
    assert [p.split(":")[0] for p in info.value.problems] == ["line 1", "line 3"]


def test_check_exits_2_on_a_missing_file(tmp_path, capsys):
    assert main(["rewards", "check", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read file" in capsys.readouterr().err


def test_explain_names_every_component_and_the_total(capsys):
    assert main(["rewards", "explain", str(GOLDEN), "--id", "en-bait-obeyed"]) == 0
    out = capsys.readouterr().out
    for name in (*COMPONENTS, "total"):
        assert f"\n  {name} " in out
    assert "obeyed a viewer's bait" in out and "capped the total" in out


def test_explain_by_index_counts_from_zero_as_the_readme_writes_it(capsys):
    assert main(["rewards", "explain", str(GOLDEN), "--index", "0"]) == 0
    assert capsys.readouterr().out.startswith(f"case {_lines()[0]['id']} ")
    assert main(["rewards", "explain", str(GOLDEN), "--index", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"case {_lines()[1]['id']} ")


def test_explain_unknown_id_suggests_the_closest(capsys):
    assert main(["rewards", "explain", str(GOLDEN), "--id", "en-bait-obeyd"]) == 2
    assert "did you mean 'en-bait-obeyed'" in capsys.readouterr().err


@pytest.mark.parametrize("index", ["-1", str(len(GOLDEN.read_text().splitlines()))])
def test_explain_index_out_of_range(capsys, index):
    assert main(["rewards", "explain", str(GOLDEN), "--index", index]) == 2
    err = capsys.readouterr().err
    assert "out of range" in err and "indexed 0 to" in err


def test_assert_reward_cases_lists_every_diff(tmp_path):
    cases = [c for c in _lines() if c["id"] in ("en-bait-obeyed", "zh-bait-obeyed")]
    for c in cases:
        c["expected"]["compliance"] = 1.0
    with pytest.raises(AssertionError) as info:
        assert_reward_cases(_write(tmp_path / "cases.jsonl", cases))
    message = str(info.value)
    assert "FAIL en-bait-obeyed (line 1): compliance: expected +1, got -1" in message
    assert "FAIL zh-bait-obeyed (line 2): compliance: expected +1, got -1" in message
    assert message.endswith("2 cases: 0 passed, 2 failed")


def test_check_is_deterministic():
    first, second = check_cases(GOLDEN), check_cases(GOLDEN)
    assert first == second


def test_golden_docstring_examples_run():
    result = doctest.testmod(golden, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0 and result.attempted >= 3


def _lang(case: dict) -> str:
    return "zh" if case.get("env") == "LiveRoom-zh-v0" else "en"


def test_every_failure_of_issue_11_is_covered_in_each_of_its_languages():
    # The list is written once, in golden.FAILURES; a case names what it covers.
    covered = Counter((name, _lang(c)) for c in _all_lines() for name in c.get("covers", ()))
    missing = [(name, lang) for name, (_, langs) in golden.FAILURES.items() for lang in langs
               if covered[(name, lang)] < 3]
    assert not missing, f"failures covered by fewer than 3 cases: {missing}"


def test_the_suite_holds_at_least_600_cases_in_both_languages():
    cases = _all_lines()
    langs = Counter(_lang(c) for c in cases)
    assert len(cases) >= 600 and langs["en"] >= 250 and langs["zh"] >= 250


def test_every_case_written_for_a_failure_was_reviewed_and_has_a_note():
    for c in _all_lines():
        if c.get("covers"):
            assert c.get("reviewed") is True and c["note"] and c["tags"], c["id"]
    assert all(c.get("reviewed") for c in _lines())  # rewards.jsonl: reviewed by hand


def test_a_case_naming_an_unknown_failure_is_an_error(tmp_path, capsys):
    first = next(c for c in _lines() if c["id"] == "en-greet-addressed")
    path = _write(tmp_path / "cases.jsonl", [{**first, "covers": ["ignore-and-pitchh"]}])
    assert main(["rewards", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "field 'covers': unknown failure 'ignore-and-pitchh' (did you mean 'ignore-and-pitch'?)" in err
