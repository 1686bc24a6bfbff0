"""The optional LLM judge, against the real local OpenAI-compatible server."""

from __future__ import annotations

import json

import pytest

from liveroom_sim.llm import Endpoint
from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.judge import LLMJudge
from liveroom_sim.rewards.model import RewardModel
from liveroom_sim.spec import RewardConfig
from liveroom_sim.testing import FaultPlan, OpenAICompatServer


def _grader(request: dict, index: int) -> str:
    prompt = request["messages"][-1]["content"]
    verdict = 1.0 if "$24.99" in prompt.split("The host replied:")[1] else 0.0
    return json.dumps({"verdict": verdict, "reason": "states the price" if verdict else "no price"})


def _ctx(reply: str):
    case = RewardCase(id="j", question={"asker": "mia_22", "intent": "price", "product": "sk-serum-01",
                                         "text": "how much is glow serum"}, reply=reply)
    return build_context(case)


def test_judge_blends_its_verdict_into_engagement_and_is_deterministic():
    with OpenAICompatServer(_grader) as srv:
        judge = LLMJudge(Endpoint("judge", srv.base_url, max_retries=0))
        good = judge(_ctx("@mia_22 glow serum is $24.99 now #ad"), Score(0.5))
        bad = judge(_ctx("@mia_22 it's lovely"), Score(0.5))
        again = judge(_ctx("@mia_22 glow serum is $24.99 now #ad"), Score(0.5))
        sent = srv.requests
    assert good.value == pytest.approx(0.75) and bad.value == pytest.approx(-0.25)
    assert again == good and judge.cache_hits == 1 and judge.calls == 2
    assert all(r["temperature"] == 0 and r["seed"] == 0 for r in sent)


@pytest.mark.parametrize("fault", ["500", "malformed_json", "empty_choices", "disconnect"])
def test_judge_falls_back_to_the_rules_when_the_endpoint_fails(fault):
    with OpenAICompatServer(_grader, faults=FaultPlan(schedule={0: fault})) as srv:
        judge = LLMJudge(Endpoint("judge", srv.base_url, max_retries=0, timeout_s=5))
        score = judge(_ctx("@mia_22 glow serum is $24.99 now"), Score(0.4, ("rules",)))
    assert score.value == 0.4 and "rule-based score kept" in score.reasons[-1]
    assert judge.failures == 1


def test_judge_answering_garbage_is_a_counted_failure():
    with OpenAICompatServer(lambda req, i: "I think it's great!") as srv:
        judge = LLMJudge(Endpoint("judge", srv.base_url, max_retries=0))
        score = judge(_ctx("@mia_22 glow serum is $24.99"), Score(0.3))
    assert score.value == 0.3 and judge.failures == 1


def test_judge_is_off_by_default_and_built_from_the_spec_config():
    assert RewardModel(RewardConfig()).judge is None
    with OpenAICompatServer(_grader) as srv:
        model = RewardModel(RewardConfig(judge={"model": "judge", "base_url": srv.base_url}))
        plain = RewardModel(RewardConfig()).score(_ctx("@mia_22 it's lovely"))
        judged = model.score(_ctx("@mia_22 it's lovely"))
    assert judged.scores["engagement"].value < plain.scores["engagement"].value
    assert any("judge verdict" in r for r in judged.scores["engagement"].reasons)
