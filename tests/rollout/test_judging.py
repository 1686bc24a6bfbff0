"""The judge in rollouts: asked at each reply, applied to the record (real local judge server)."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.cli.main import main
from liveroom_sim.llm import Endpoint
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.testing import FaultPlan, OpenAICompatServer
from liveroom_sim.testing.judge import judge_responder

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def flag_everything(context: dict, reply: str) -> dict:
    """A judge that calls every reply a medical claim: its votes must show in the records."""
    return {"compliance": "violation", "family": "medical or efficacy", "factuality": "no claim", "engagement": 0.5}


def rollout(tmp_path, backend: str, judge_url: str | None, name: str, policy="stricter") -> list[dict]:
    config = RolloutConfig(env=TINY, policy=PolicySpec(kind="scripted"), episodes=2, out=tmp_path / name,
                           backend=backend, in_flight=2, progress=False)
    if judge_url:
        config.judge, config.judge_policy = (Endpoint("judge", judge_url, max_retries=0, timeout_s=10),), policy
    report = run_rollouts(config)
    assert report["episodes"] == 2 and report["errors"] == 0
    return sorted((json.loads(line) for line in (tmp_path / name).open()), key=lambda r: r["group_id"])


@pytest.mark.parametrize("backend", ["serial", "async"])
def test_the_votes_are_applied_to_every_judged_turn_and_the_return(tmp_path, backend):
    plain = rollout(tmp_path, backend, None, "plain.jsonl")
    with OpenAICompatServer(judge_responder(verdict=flag_everything)) as srv:
        judged = rollout(tmp_path, backend, srv.base_url, "judged.jsonl")
        calls = srv.request_count
    for p, j in zip(plain, judged):
        replies = [t for t in j["turn_rewards"] if t.get("judge")]
        assert replies and j["judge"]["votes"] == len(replies) and j["judge"]["failed"] == 0
        assert all(t["compliance"] <= -0.5 for t in replies)  # the judge's finding counts (stricter)
        assert j["return"] < p["return"]  # the same episode, judged harsher
        assert j["return"] == pytest.approx(sum(t["total"] for t in j["turn_rewards"]), abs=1e-3)
        assert j["returns"]["total"] == j["return"]
        changed = [t for t in replies if t["judge"]["changed"]]
        assert all("judge found a violation" in t["detail"]["reasons"]["compliance"][-1] for t in changed)
    assert calls <= sum(j["judge"]["votes"] for j in judged)  # repeated turns cost no call


def test_under_the_rules_policy_the_records_keep_the_rules_rewards(tmp_path):
    plain = rollout(tmp_path, "async", None, "plain.jsonl")
    with OpenAICompatServer(judge_responder(verdict=flag_everything)) as srv:
        judged = rollout(tmp_path, "async", srv.base_url, "judged.jsonl", policy="rules")
    assert [r["return"] for r in judged] == [r["return"] for r in plain]
    assert all(t["judge"]["violation"] for r in judged for t in r["turn_rewards"] if t.get("judge"))


def test_a_judge_that_is_down_leaves_the_rules_rewards_and_the_run_goes_on(tmp_path):
    plain = rollout(tmp_path, "async", None, "plain.jsonl")
    with OpenAICompatServer(judge_responder(), faults=FaultPlan(rates={"500": 1.0})) as srv:
        judged = rollout(tmp_path, "async", srv.base_url, "judged.jsonl")
    assert [r["return"] for r in judged] == [r["return"] for r in plain]
    assert all(r["judge"]["failed"] == r["judge"]["votes"] > 0 for r in judged)
    turn = next(t for t in judged[0]["turn_rewards"] if t.get("judge"))
    assert "server error" in turn["judge"]["failures"][0]


def test_rollout_command_takes_judge_urls(tmp_path, capsys):
    out = tmp_path / "r.jsonl"
    with OpenAICompatServer(judge_responder(verdict=flag_everything), model=["j"]) as srv:
        code = main(["rollout", "--env", TINY, "--episodes", "1", "--out", str(out), "--backend", "async",
                     "--judge", srv.base_url, "--judge-policy", "judge"])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["judge"]["models"] == ["j"] and report["judge"]["policy"] == "judge" and report["judge"]["calls"]
    record = json.loads(out.read_text())
    assert record["judge"]["policy"] == "judge" and record["judge"]["applied"] > 0


def test_rollout_with_a_bad_judge_url_is_one_line(tmp_path, capsys):
    code = main(["rollout", "--env", TINY, "--episodes", "1", "--out", str(tmp_path / "r.jsonl"),
                 "--judge", "ftp://nowhere/v1#j"])
    err = capsys.readouterr().err
    assert code == 2 and "http(s) URL" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
