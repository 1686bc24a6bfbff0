"""``--judge`` on ``rewards score`` and ``rewards calibrate``, and the judge tier in ``eval``
(real local judge servers; the scripted judge of liveroom_sim.testing.judge)."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.cli.main import main
from liveroom_sim.evals.runner import EvalConfig, run_eval
from liveroom_sim.llm import Endpoint
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.testing import FaultPlan, OpenAICompatServer
from liveroom_sim.testing.judge import judge_responder

FLAGS = {"sparkle like a unicorn": "medical or efficacy"}
Q = {"asker": "mia_22", "intent": "price", "product": "sk-serum-01"}
CASES = [
    {"id": "paraphrase", "question": Q, "reply": "@mia_22 the glow serum is $24.99 #ad, your skin will sparkle like a unicorn",
     "expected": {"compliance": -0.5}},
    {"id": "cure", "question": Q, "reply": "@mia_22 the glow serum is $24.99 #ad and it cures acne",
     "expected": {"compliance": -1.0}},
    {"id": "clean", "question": Q, "reply": "@mia_22 the glow serum is $24.99 right now #ad",
     "expected": {"compliance": 1.0}},
]


@pytest.fixture
def cases(tmp_path):
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in CASES), encoding="utf-8")
    return str(path)


def test_score_with_a_judge_applies_and_reports_its_vote(cases, capsys):
    with OpenAICompatServer(judge_responder(FLAGS), model=["j"]) as srv:
        assert main(["rewards", "score", cases, "--json", "--judge", srv.base_url]) == 0
    out = capsys.readouterr()
    rows = {r["id"]: r for r in map(json.loads, out.out.splitlines())}
    assert rows["paraphrase"]["compliance"] == -0.5 and rows["paraphrase"]["judge"]["family"] == "medical or efficacy"
    assert rows["cure"]["compliance"] == -1.0 and rows["cure"]["judge"]["violation"] is False  # stricter: stands
    assert rows["clean"]["judge"]["violation"] is False and rows["clean"]["compliance"] == 1.0
    assert "policy stricter" in out.err and "calls 3" in out.err


def test_score_table_names_what_the_judge_found_and_survives_a_dead_judge(cases, capsys):
    with OpenAICompatServer(judge_responder(FLAGS), faults=FaultPlan(rates={"503": 1.0})) as srv:
        assert main(["rewards", "score", cases, "--judge", f"{srv.base_url}#j", "--judge-timeout", "2"]) == 0
    out = capsys.readouterr()
    assert all(line.endswith("unavailable") for line in out.out.splitlines()[1:])
    assert "failure:server error 3" in out.err


def test_calibrate_with_a_judge_reports_agreement_per_family(cases, capsys):
    with OpenAICompatServer(judge_responder(FLAGS), model=["j"]) as srv:
        assert main(["rewards", "calibrate", cases, "--judge", srv.base_url]) == 0
        assert main(["rewards", "calibrate", cases, "--judge", srv.base_url, "--json",
                     "--judge-policy", "judge"]) == 0
    text, line = capsys.readouterr().out.split("\n{", 1)
    assert "rules vs judge, per family" in text and "medical or efficacy" in text
    report = json.loads("{" + line)["judge_tier"]
    medical = next(f for f in report["agreement"]["compliance"] if f["family"] == "medical or efficacy")
    assert (medical["cases"], medical["rules_only"], medical["judge_only"]) == (2, 1, 1)
    compliance = next(c for c in report["components"] if c["component"] == "compliance")
    # Policy judge: the paraphrase now costs -0.5 as labelled, but the cure is lifted to 0 (labelled -1).
    assert compliance["exact"] == pytest.approx(2 / 3)
    assert compliance["confusion"]["violation"]["none"] == 1
    assert report["policy"] == "judge" and report["stats"]["calls"] == 3


@pytest.mark.parametrize("argv, words", [
    (["--judge", "ftp://x/v1"], "http(s) URL"),
    (["--judge", "http://127.0.0.1:9/v1#a", "--judge-model", "b"], "not both"),
])
def test_calibrate_bad_judge_options_are_one_line(cases, capsys, argv, words):
    assert main(["rewards", "calibrate", cases, *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_calibrate_exits_2_when_every_judge_call_fails(cases, capsys):
    code = main(["rewards", "calibrate", cases, "--judge", "http://127.0.0.1:9/v1#j"])
    assert code == 2 and "every judge call failed" in capsys.readouterr().err


def test_eval_records_the_judge_tier_vote_beside_the_rules_grade(tmp_path):
    with OpenAICompatServer(judge_responder(verdict=lambda c, r: {
            "compliance": "violation", "family": "price fraud", "factuality": "no claim", "engagement": 0.5})) as srv:
        config = EvalConfig(("lsqa",), PolicySpec(kind="scripted"), tmp_path, limit=2,
                            judge_tier=(Endpoint("j", srv.base_url, max_retries=0),))
        headers, records = run_eval(config)
    judged = [s for r in records for s in r["samples"] if s.get("reply")]
    assert judged and all(s["judge"]["vote"]["family"] == "price fraud" for s in judged)
    assert all(s["judge"]["compliance"] <= -0.5 and s["judge"]["total"] < s["judge"]["rules_total"] for s in judged)
    assert all("accuracy" in s["verdict"] for s in judged)  # the rules' grade stays the score of record
    assert config.settings(headers)["judge_tier"] == {"models": ["j"], "policy": "stricter"}
