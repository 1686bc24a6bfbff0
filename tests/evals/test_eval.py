"""Running policies on cases: grading, failures as data, samples, resume, the HVQA gap."""

from __future__ import annotations

import json
import re

import pytest

from liveroom_sim.evals.baselines import BaselineSpec
from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.runner import CASES_FILE, EvalConfig, run_eval
from liveroom_sim.evals.summary import summarize
from liveroom_sim.evals.turn import run_turn
from liveroom_sim.policies.scripted import ScriptedAvatar
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.testing import FaultPlan, OpenAICompatServer, policy_responder, scripted_responder


@pytest.fixture(scope="module")
def lsqa():
    return load_suite("lsqa")[1]


def _case(cases, kind, language="en"):
    return next(c for c in cases if c.kind == kind and c.language == language and len(c.prefix) <= 4)


class Editing:
    """The reference host, whose reply is edited before it is said."""

    def __init__(self, edit):
        self.inner, self.edit = ScriptedAvatar(), edit

    def __call__(self, obs, info):
        action = self.inner(obs, info)
        return action if action.lstrip().startswith("{") else self.edit(action)


def _play(case, policy):
    snap = Snapshot.of(case)
    env, obs, info = snap.fork(1)[0]
    return run_turn(case, env, obs, info, policy)[0]


def test_a_looked_up_true_answer_passes_and_a_wrong_number_fails_accuracy(lsqa):
    case = next(c for c in lsqa if c.kind == "price_coupons" and c.language == "en"
                and _play(c, ScriptedAvatar()).verdict["pass"])
    good = _play(case, ScriptedAvatar())
    assert good.verdict["accuracy"] == 1 and good.verdict["effectiveness"] == 1.0
    assert good.tool_calls  # the complete turn: it looked the price up first
    wrong = _play(case, Editing(lambda text: re.sub(r"\$(\d+)", lambda m: f"${int(m.group(1)) + 7}", text)))
    assert wrong.verdict["accuracy"] == 0 and not wrong.verdict["pass"]
    assert any("invented" in r for r in wrong.verdict["reasons"])


def test_an_answer_that_skips_the_lookup_is_unsupported(lsqa):
    case = next(c for c in lsqa if c.kind == "price_coupons" and c.language == "en"
                and _play(c, ScriptedAvatar()).verdict["pass"])
    reply = _play(case, ScriptedAvatar()).reply
    blind = _play(case, lambda obs, info: reply)  # the same words, no tool turn
    assert blind.verdict["accuracy"] == 0
    assert any("unsupported" in r for r in blind.verdict["reasons"])


def test_obeying_a_bait_fails_and_refusing_it_is_effective(lsqa):
    case = _case(lsqa, "bait")
    obey = _play(case, lambda obs, info: f"@{case.question.asker} " + " ".join(case.must_not or ("best ever",)))
    refuse = _play(case, lambda obs, info: f"@{case.question.asker} I can't say that, but ask me anything "
                                           "about today's lineup!")
    assert obey.verdict["effectiveness"] == 0.0 and not obey.verdict["pass"]
    assert refuse.verdict["effectiveness"] == 1.0 and refuse.verdict["accuracy"] == 1


def test_scripted_beats_naive(tmp_path):
    runs = {}
    for name in ("scripted", "naive"):
        config = EvalConfig(("lsqa",), PolicySpec(kind=name), tmp_path / name, limit=40)
        headers, records = run_eval(config)
        runs[name] = summarize(records, headers, config.settings(headers))["overall"]
    assert runs["scripted"]["eff"] > runs["naive"]["eff"] + 0.3
    assert runs["scripted"]["pass@1"] > runs["naive"]["pass@1"]


def test_a_failing_endpoint_fails_each_case_with_its_reason_and_the_run_finishes(tmp_path):
    with OpenAICompatServer(faults=FaultPlan(rates={"500": 1.0})) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0, timeout_s=5)
        config = EvalConfig(("lsqa",), policy, tmp_path, limit=3, concurrency=3)
        headers, records = run_eval(config)
    assert len(records) == 3
    assert all(r["samples"][0]["error_kind"] == "endpoint" and "500" in r["samples"][0]["error"] for r in records)
    summary = summarize(records, headers, config.settings(headers))
    assert summary["errored"] == {"cases": 3, "by_kind": {"endpoint": 3}}
    assert summary["overall"]["acc"] == 0.0


def test_a_timeout_and_a_malformed_tool_call_are_recorded(tmp_path):
    with OpenAICompatServer(faults=FaultPlan(rates={"timeout": 1.0}, timeout_seconds=3)) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0, timeout_s=0.5)
        _, records = run_eval(EvalConfig(("lsqa",), policy, tmp_path / "t", limit=1))
    assert records[0]["samples"][0]["error_kind"] == "timeout"
    bad = {"content": None, "tool_calls": [{"id": "c1", "type": "function",
                                             "function": {"name": "get_product", "arguments": "{not json"}}]}
    with OpenAICompatServer(scripted_responder([bad])) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0, timeout_s=5)
        _, records = run_eval(EvalConfig(("lsqa",), policy, tmp_path / "m", limit=1))
    sample = records[0]["samples"][0]
    assert sample["error_kind"] == "malformed_tool_call" and "not valid JSON" in sample["error"]


def test_samples_give_pass_at_1_and_pass_hat_k_through_an_endpoint(tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0, timeout_s=10)
        config = EvalConfig(("lsqa",), policy, tmp_path, samples=2, limit=6, concurrency=4)
        headers, records = run_eval(config)
    assert all(len(r["samples"]) == 2 for r in records)
    assert all(r["samples"][0]["calls"] >= 1 and r["samples"][0]["prompt_tokens"] > 0 for r in records)
    s = summarize(records, headers, config.settings(headers))["overall"]
    assert s["pass^k"] <= s["pass@1"] and s["pass@1"] > 0
    # The endpoint played the reference host: the same verdicts as the host in-process.
    _, local = run_eval(EvalConfig(("lsqa",), PolicySpec(kind="scripted"), tmp_path / "local", limit=6))
    assert [r["samples"][0]["verdict"]["pass"] for r in records] == [r["samples"][0]["verdict"]["pass"] for r in local]


def test_resume_goes_on_after_a_torn_file(tmp_path):
    config = EvalConfig(("lsqa",), PolicySpec(kind="scripted"), tmp_path, limit=6)
    _, full = run_eval(config)
    path = tmp_path / CASES_FILE
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:40])  # stopped mid-write
    config.resume = True
    _, again = run_eval(config)
    assert [r["id"] for r in again] == [r["id"] for r in full]
    def played(records):  # what was said and how it was graded (latency is measured, so it varies)
        return [[(s["actions"], s["verdict"]) for s in r["samples"]] for r in records]

    assert played(again) == played(json.loads(json.dumps(full)))
    other = EvalConfig(("lsqa",), PolicySpec(kind="naive"), tmp_path, limit=6, resume=True)
    with pytest.raises(ValueError, match="other settings"):
        run_eval(other)


def test_a_case_that_no_longer_reproduces_is_an_error_of_that_case(tmp_path, lsqa):
    from liveroom_sim.evals.cases import write_suite

    broken = [lsqa[0].model_copy(update={"digest": "0" * 64}), lsqa[1]]
    write_suite(tmp_path / "lsqa.jsonl.gz", "lsqa", "1", broken)
    _, records = run_eval(EvalConfig(("lsqa",), PolicySpec(kind="scripted"), tmp_path / "out", folder=tmp_path))
    assert records[0]["error_kind"] == "stale_case" and "regenerate" in records[0]["error"]
    assert "error_kind" not in records[1]


def test_a_harness_memorising_policy_loses_on_hvqa_and_a_reading_one_does_not(tmp_path):
    lsqa_cases = load_suite("lsqa")[1]
    hvqa_cases = [c for c in load_suite("hvqa")[1] if c.operators == ("rename_tools",)][:20]
    twins = {c.twin for c in hvqa_cases}
    from liveroom_sim.evals.cases import write_suite

    write_suite(tmp_path / "lsqa.jsonl.gz", "lsqa", "1", [c for c in lsqa_cases if c.id in twins])
    write_suite(tmp_path / "hvqa.jsonl.gz", "hvqa", "1", hvqa_cases)
    gaps = {}
    for name, spec in (("reading", PolicySpec(kind="scripted")), ("memorising", BaselineSpec())):
        config = EvalConfig(("lsqa", "hvqa"), spec, tmp_path / name, folder=tmp_path)
        headers, records = run_eval(config)
        gaps[name] = summarize(records, headers, config.settings(headers))["hvqa_gap"]["overall"]["pass@1_gap"]
    assert gaps["reading"] == pytest.approx(0.0, abs=0.05)
    assert gaps["memorising"] > 0.2


def test_the_llm_judge_grades_on_request_and_both_grades_are_recorded(tmp_path):
    from liveroom_sim.llm.client import Endpoint
    from liveroom_sim.evals.summary import markdown

    verdict = '{"verdict": 1.0, "reason": "answers the viewer"}'
    with OpenAICompatServer(scripted_responder([verdict])) as srv:
        judges = [Endpoint(m, srv.base_url, max_retries=0) for m in ("j1", "j2", "j3")]
        config = EvalConfig(("lsqa",), PolicySpec(kind="scripted"), tmp_path, limit=3, judge=judges)
        headers, records = run_eval(config)
        assert len(srv.requests) >= 3 * 3  # three judges voted on each reply
    judged = [s for r in records for s in r["samples"] if s.get("reply")]
    assert judged and all("judge vote 1.00" in s["judge"]["reason"] for s in judged)
    assert all("verdict" in s and "accuracy" in s["verdict"] for s in judged)  # the rules' grade stays
    summary = summarize(records, headers, config.settings(headers))
    assert summary["settings"]["judge"] == ["j1", "j2", "j3"] and "LLM judge" in markdown(summary)
