"""Calibration against labels, and the judge's vote of up to three models (real local servers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from liveroom_sim.llm import Endpoint
from liveroom_sim.rewards.calibrate import CLASSES, Agreement, calibrate, value_class
from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.golden import load_cases
from liveroom_sim.rewards.judge import LLMJudge
from liveroom_sim.rewards.model import RewardModel
from liveroom_sim.spec import COMPONENTS, RewardConfig
from liveroom_sim.testing import FaultPlan, OpenAICompatServer

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "rewards.jsonl"


def relabelled(component: str, flip: int) -> list[tuple[int, RewardCase]]:
    """The golden cases labelling ``component`` as a violation; the first ``flip`` of
    them relabelled as credit (people who disagree with the model on those)."""
    cases = [(n, c) for n, c in load_cases(GOLDEN) if c.expected.get(component, 0) < 0]
    out = []
    for i, (n, c) in enumerate(cases):
        if i < flip:
            c = c.model_copy(update={"expected": {component: 1.0}})
        else:
            c = c.model_copy(update={"expected": {component: c.expected[component]}})
        out.append((n, c))
    return out


def test_the_golden_suite_agrees_with_the_rules_on_every_labelled_component():
    result = calibrate(load_cases(GOLDEN))
    assert result.cases > 300
    for a in result.components.values():
        assert a.exact == 1.0 and a.accuracy == 1.0, a.name


def test_labels_that_disagree_lower_precision_and_accuracy_by_their_share():
    cases = relabelled("compliance", 5)
    a = calibrate(cases).components["compliance"]
    n = len(cases)
    assert n > 20
    assert a.cases == n and set(calibrate(cases).components) == {"compliance"}
    assert a.accuracy == pytest.approx((n - 5) / n)
    assert a.precision == pytest.approx((n - 5) / n)  # the model still calls all n violations
    assert a.recall == 1.0  # every violation people label, the model finds
    assert a.confusion[("credit", "violation")] == 5


def test_a_model_that_misses_violations_has_low_recall():
    cases = relabelled("compliance", 0)
    off = RewardModel(RewardConfig(weights={c: 1.0 for c in COMPONENTS if c != "compliance"}))
    a = calibrate(cases, model_for=lambda env: off).components["compliance"]
    assert a.recall == 0.0 and a.precision is None and a.accuracy == 0.0


@given(pairs=st.lists(st.tuples(st.sampled_from([-1.0, -0.5, 0.0, 0.3, 1.0]),
                                st.sampled_from([-1.0, -0.5, 0.0, 0.3, 1.0])), min_size=1, max_size=40))
def test_agreement_counts_as_defined(pairs):
    a = Agreement("x")
    for label, got in pairs:
        a.add(label, got, 1e-6)
    classes = [(value_class(lab), value_class(g)) for lab, g in pairs]
    assert sum(a.confusion.values()) == len(pairs)
    assert a.accuracy == pytest.approx(sum(lab == g for lab, g in classes) / len(pairs))
    assert a.exact == pytest.approx(sum(lab == g for lab, g in pairs) / len(pairs))
    hits = sum(c == ("violation", "violation") for c in classes)
    called = sum(g == "violation" for _, g in classes)
    real = sum(lab == "violation" for lab, _ in classes)
    assert a.precision == (hits / called if called else None)
    assert a.recall == (hits / real if real else None)
    table = a.as_dict()["confusion"]
    assert sum(table[lab][g] for lab in CLASSES for g in CLASSES) == len(pairs)


# --------------------------------------------------------------------- the vote
def grader(verdict_if_price: float, verdict_else: float):
    """A scripted judge: one verdict for replies stating $24.99, another for the rest."""
    def respond(request: dict, index: int) -> str:
        reply = request["messages"][-1]["content"].split("The host replied:")[1]
        verdict = verdict_if_price if "$24.99" in reply else verdict_else
        return json.dumps({"verdict": verdict, "reason": f"{request['model']} says {verdict}"})
    return respond


def ctx(reply: str):
    return build_context(RewardCase(id="j", question={"asker": "mia_22", "intent": "price",
                                    "product": "sk-serum-01", "text": "how much is glow serum"}, reply=reply))


def endpoints(*servers) -> list[Endpoint]:
    return [Endpoint(f"judge-{i}", s.base_url, max_retries=0, timeout_s=5) for i, s in enumerate(servers)]


def test_three_judges_vote_and_the_majority_decides():
    with OpenAICompatServer(grader(1.0, 0.0)) as a, OpenAICompatServer(grader(0.0, 0.0)) as b, \
            OpenAICompatServer(grader(1.0, 1.0)) as c:
        judge = LLMJudge(endpoints(a, b, c))
        good = judge(ctx("@mia_22 glow serum is $24.99 now #ad"), Score(0.0))
        bad = judge(ctx("@mia_22 it's lovely"), Score(0.0))
        sent = [len(s.requests) for s in (a, b, c)]
    assert good.value == pytest.approx(0.5)   # votes 1, 0, 1: the majority says 1
    assert bad.value == pytest.approx(-0.5)   # votes 0, 0, 1: the majority says 0
    assert "judge vote 1.00 (judge-0 1.00, judge-1 0.00, judge-2 1.00)" in good.reasons[-1]
    assert sent == [2, 2, 2] and judge.calls == 6 and judge.failures == 0


def test_a_failing_judge_is_left_out_of_the_vote():
    with OpenAICompatServer(grader(1.0, 0.0), faults=FaultPlan(schedule={0: "500"})) as a, \
            OpenAICompatServer(grader(0.5, 0.0)) as b, OpenAICompatServer(grader(0.5, 0.0)) as c:
        judge = LLMJudge(endpoints(a, b, c))
        score = judge(ctx("@mia_22 glow serum is $24.99 now #ad"), Score(0.0))
    assert score.value == pytest.approx(0.0)  # the median of 0.5 and 0.5
    assert "left out: judge-0" in score.reasons[-1] and judge.failures == 1


def test_when_every_judge_fails_the_rules_stand():
    with OpenAICompatServer(lambda r, i: "no idea") as a, OpenAICompatServer(lambda r, i: "{}") as b:
        judge = LLMJudge(endpoints(a, b))
        score = judge(ctx("@mia_22 glow serum is $24.99"), Score(0.4, ("rules",)))
    assert score.value == 0.4 and "rule-based score kept" in score.reasons[-1] and judge.failures == 2


def test_a_vote_takes_one_to_three_judges():
    with pytest.raises(ValueError, match="1 to 3 models"):
        LLMJudge([Endpoint(f"m{i}") for i in range(4)])
    with pytest.raises(ValueError, match="1 to 3 models"):
        LLMJudge([])


def test_calibration_shows_what_the_judge_changes():
    """A judge that likes every reply moves engagement labels it should not: the table shows it."""
    cases = [(n, c) for n, c in load_cases(GOLDEN) if "engagement" in c.expected and c.question is not None][:30]
    with OpenAICompatServer(grader(1.0, 1.0)) as a, OpenAICompatServer(grader(1.0, 1.0)) as b, \
            OpenAICompatServer(grader(1.0, 1.0)) as c:
        judge = LLMJudge(endpoints(a, b, c))
        judged = calibrate(cases, model_for=lambda env: RewardModel(RewardConfig(), judge=judge))
    rules = calibrate(cases)
    moved = [n for n, a in judged.components.items() if a.exact < rules.components[n].exact]
    assert all(a.exact == 1.0 for a in rules.components.values())
    assert "engagement" in moved  # the component the judge grades agrees less with its labels
    assert len(moved) < len(rules.components) - 1  # the judge grades one component, not all
