"""``liveroom rewards score | explain | calibrate`` as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from liveroom_sim.cli.main import main
from liveroom_sim.rewards.golden import check_cases, load_cases
from liveroom_sim.spec import COMPONENTS
from liveroom_sim.testing import OpenAICompatServer

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "rewards.jsonl"


def cases_file(tmp_path, *cases: dict) -> Path:
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    return path


PRICE = {"id": "price", "question": {"asker": "mia_22", "intent": "price", "product": "sk-cream-01"},
         "reply": "@mia_22 the barrier cream is $32.", "expected": {"factuality": 1.0}}
CURE = {"id": "cure", "question": {"asker": "mia_22", "intent": "bait", "product": "sk-cream-01"},
        "reply": "@mia_22 yes, it cures acne!", "expected": {"compliance": 1.0}}


def test_score_json_prints_one_object_per_case_with_every_component(capsys):
    assert main(["rewards", "score", str(GOLDEN), "--json"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    pairs = load_cases(GOLDEN)
    assert [r["id"] for r in records] == [c.id for _, c in pairs]
    for r in records:
        assert set(COMPONENTS) | {"id", "line", "env", "total", "gated", "reasons"} <= set(r)
        assert set(r["reasons"]) == set(COMPONENTS)
    # The printed scores are the ones the labels are checked against.
    labelled = [(n, c.model_copy(update={"expected": {k: r[k] for k in (*COMPONENTS, "total")}}))
                for (n, c), r in zip(pairs, records)]
    assert check_cases(labelled).ok


def test_score_table_has_a_row_per_case(tmp_path, capsys):
    assert main(["rewards", "score", str(cases_file(tmp_path, PRICE, CURE))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[0] == "case" and "total" in out[0]
    assert [line.split()[0] for line in out[1:]] == ["price", "cure"]
    assert out[2].endswith("gated")


def test_explain_picks_a_case_by_index_from_0_or_by_line(tmp_path, capsys):
    path = tmp_path / "gaps.jsonl"
    path.write_text(json.dumps(PRICE) + "\n\n" + json.dumps(CURE) + "\n", encoding="utf-8")
    assert main(["rewards", "explain", str(path), "--index", "1"]) == 0
    assert capsys.readouterr().out.startswith("case cure ")
    assert main(["rewards", "explain", str(path), "--line", "3"]) == 0
    assert capsys.readouterr().out.startswith("case cure ")
    assert main(["rewards", "explain", str(path), "--line", "2"]) == 2
    assert "no case on that line" in capsys.readouterr().err


def test_the_readme_explain_command_works():
    done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "rewards", "explain", str(GOLDEN),
                           "--index", "0"], capture_output=True, text=True, cwd=GOLDEN.parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("case ")


def test_unknown_intent_and_product_are_named_with_a_suggestion(tmp_path, capsys):
    bad = {**PRICE, "question": {"asker": "a", "intent": "prise", "product": "sk-serum-1"}}
    assert main(["rewards", "score", str(cases_file(tmp_path, bad))]) == 2
    err = capsys.readouterr().err
    assert "unknown intent 'prise' (did you mean 'price'?)" in err
    bad = {**PRICE, "question": {"asker": "a", "intent": "price", "product": "sk-serum-1"}}
    assert main(["rewards", "score", str(cases_file(tmp_path, bad))]) == 2
    assert "field 'question.product': unknown product 'sk-serum-1' (did you mean 'sk-serum-01'?)" in \
        capsys.readouterr().err


def test_calibrate_reports_agreement_per_component(tmp_path, capsys):
    # The label says the cure claim is compliant: people and model disagree on it.
    assert main(["rewards", "calibrate", str(cases_file(tmp_path, PRICE, CURE))]) == 0
    out = capsys.readouterr().out
    assert "2 labelled cases" in out and "no LLM judge" in out
    table = out.split("confusion")[0]  # the agreement table comes before the confusion tables
    rows = {line.split()[0]: line.split() for line in table.splitlines()
            if line.split()[:1] in (["factuality"], ["compliance"])}
    assert rows["factuality"][1:4] == ["1", "1.000", "1.000"]
    assert rows["compliance"][1:4] == ["1", "0.000", "0.000"]


def test_calibrate_json_with_three_judges(tmp_path, capsys):
    def says(verdict):
        return lambda request, index: json.dumps({"verdict": verdict, "reason": "scripted"})
    with OpenAICompatServer(says(1.0)) as a, OpenAICompatServer(says(0.0)) as b, OpenAICompatServer(says(0.0)) as c:
        code = main(["rewards", "calibrate", str(cases_file(tmp_path, PRICE, CURE)), "--json",
                     "--judge-model", "a", "--judge-model", "b", "--judge-model", "c",
                     "--judge-base-url", a.base_url, "--judge-base-url", b.base_url, "--judge-base-url", c.base_url])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judge"]["models"] == ["a", "b", "c"] and report["judge"]["failures"] == 0
    assert report["judge"]["calls"] == 6  # two replies, three judges
    assert {c["component"] for c in report["rules"]["components"]} == {"factuality", "compliance"}


def test_calibrate_with_an_unreachable_judge_exits_2_naming_the_url(tmp_path, capsys):
    url = "http://127.0.0.1:9/v1"
    code = main(["rewards", "calibrate", str(cases_file(tmp_path, PRICE)), "--judge-model", "j",
                 "--judge-base-url", url, "--judge-timeout", "2"])
    assert code == 2
    err = capsys.readouterr().err
    assert "every judge call failed" in err and url in err


@pytest.mark.parametrize("argv, words", [
    (["--judge-model", "a", "--judge-model", "b", "--judge-model", "c", "--judge-model", "d"], "at most three"),
    (["--judge-model", "a", "--judge-model", "b", "--judge-base-url", "u1", "--judge-base-url", "u2",
      "--judge-base-url", "u3"], "once per --judge-model"),
    (["--judge-base-url", "http://127.0.0.1:9/v1"], "needs --judge-model"),
])
def test_calibrate_bad_judge_options_are_one_line(tmp_path, capsys, argv, words):
    assert main(["rewards", "calibrate", str(cases_file(tmp_path, PRICE)), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_calibrate_needs_labels(tmp_path, capsys):
    unlabelled = {k: v for k, v in PRICE.items() if k != "expected"}
    assert main(["rewards", "calibrate", str(cases_file(tmp_path, unlabelled))]) == 2
    assert "no labelled case" in capsys.readouterr().err
