"""The judge tier (rewards/judge/): votes, policies, cache and failures, against real local
test servers answering with the scripted judge (liveroom_sim.testing.judge)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from liveroom_sim.llm import Endpoint
from liveroom_sim.rewards.calibrate import judge_agreement
from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.golden import rule_model
from liveroom_sim.rewards.judge.apply import PENDING, DeferredJudge, VotedJudge
from liveroom_sim.rewards.judge.request import judge_request, read_prompt
from liveroom_sim.rewards.judge.service import JudgeService, judge_endpoints
from liveroom_sim.rewards.judge.vote import JUDGE_FINDING, JudgeAnswer, parse_verdict, tally
from liveroom_sim.rewards.model import RewardModel
from liveroom_sim.testing import FaultPlan, OpenAICompatServer
from liveroom_sim.testing.judge import judge_responder, scripted_verdict

# A phrase no rule file will ever hold: the judge's own finding, whatever the rules learn.
PARAPHRASE = "@mia_22 the glow serum is $24.99 #ad, and it makes skin sparkle like a unicorn"
FLAGS = {"sparkle like a unicorn": "medical or efficacy"}
CURE = "@mia_22 the glow serum is $24.99 #ad and it cures acne"
CLEAN = "@mia_22 the glow serum is $24.99 right now #ad"


def ctx(reply: str):
    return build_context(RewardCase(id="j", question={"asker": "mia_22", "intent": "price", "product": "sk-serum-01",
                                                      "text": "how much is the glow serum"}, reply=reply))


def endpoints(*servers, retries=0, timeout=5.0):
    return [Endpoint(f"judge-{i}", s.base_url, max_retries=retries, timeout_s=timeout) for i, s in enumerate(servers)]


def judged(reply: str, service: JudgeService):
    """The breakdown of ``reply`` with the service's vote applied (as rewards score does)."""
    model = rule_model("LiveRoom-v0")
    c = ctx(reply)
    req = judge_request(c, model.score(c).scores)
    vote = service.vote_all([req])[0]
    return RewardModel(model.config, judge=VotedJudge({req.key: vote}, service.policy)).score(ctx(reply)), vote


def test_the_judge_catches_what_the_rules_miss_under_the_stricter_policy():
    rules = rule_model("LiveRoom-v0").score(ctx(PARAPHRASE))
    assert rules.scores["compliance"].value >= 0  # the rules read no rule in it
    with OpenAICompatServer(judge_responder(FLAGS)) as srv:
        bd, vote = judged(PARAPHRASE, JudgeService(endpoints(srv)))
    assert vote.violation and vote.family == "medical or efficacy"
    assert bd.scores["compliance"].value == JUDGE_FINDING and bd.total < rules.total
    assert "judge found a violation: medical or efficacy" in bd.scores["compliance"].reasons[-1]


@pytest.mark.parametrize("policy, expected", [("stricter", -1.0), ("judge", 0.0), ("rules", -1.0)])
def test_a_violation_only_the_rules_find_follows_the_policy(policy, expected):
    with OpenAICompatServer(judge_responder(flags={})) as srv:  # this judge flags nothing
        bd, vote = judged(CURE, JudgeService(endpoints(srv), policy))
    assert vote.violation is False
    assert bd.scores["compliance"].value == expected
    assert bd.gated == (expected <= -1.0)  # lifted by the judge, the gate no longer applies


def test_under_the_rules_policy_the_judge_changes_nothing_but_is_recorded():
    rules = rule_model("LiveRoom-v0").score(ctx(PARAPHRASE))
    with OpenAICompatServer(judge_responder(FLAGS)) as srv:
        bd, _ = judged(PARAPHRASE, JudgeService(endpoints(srv), "rules"))
    assert bd.as_dict() == rules.as_dict()
    assert "judge disagrees (violation: medical or efficacy)" in bd.scores["compliance"].reasons[-1]


def test_three_judges_vote_and_two_that_split_leave_the_rules():
    with OpenAICompatServer(judge_responder(FLAGS)) as a, OpenAICompatServer(judge_responder({})) as b, \
            OpenAICompatServer(judge_responder(FLAGS)) as c:
        two_of_three, _ = judged(PARAPHRASE, JudgeService(endpoints(a, b, c)))
        split, vote = judged(PARAPHRASE, JudgeService(endpoints(a, b)))
    assert two_of_three.scores["compliance"].value == JUDGE_FINDING
    assert vote.violation is None and split.scores["compliance"].value >= 0
    assert "judges split" in split.scores["compliance"].reasons[-1]


def test_a_repeated_turn_costs_no_call():
    with OpenAICompatServer(judge_responder(FLAGS)) as srv:
        service = JudgeService(endpoints(srv))
        c = ctx(CLEAN)
        req = judge_request(c, rule_model("LiveRoom-v0").score(c).scores)
        first = service.vote_all([req, req, req])  # joined while in flight
        again = service.vote_all([req])  # cached
        count = srv.request_count
    assert count == 1 and service.stats["calls"] == 1
    assert first[0] == first[1] == again[0]


@pytest.mark.parametrize("fault, kind", [("500", "server error"), ("malformed_json", "garbage"),
                                         ("timeout", "timeout"), ("empty_choices", "garbage")])
def test_a_failing_judge_leaves_the_rules_verdict_with_the_reason_and_is_counted(fault, kind):
    rules = rule_model("LiveRoom-v0").score(ctx(PARAPHRASE))
    plan = FaultPlan(schedule={0: fault}, timeout_seconds=3)
    with OpenAICompatServer(judge_responder(FLAGS), faults=plan) as srv:
        service = JudgeService(endpoints(srv, timeout=1.0))
        bd, vote = judged(PARAPHRASE, service)
    assert not vote.counted and bd.scores["compliance"].value == rules.scores["compliance"].value
    assert f"judge unavailable (judge-0: {kind}" in bd.scores["compliance"].reasons[-1]
    assert service.stats["failures"] == 1 and service.stats[f"failure:{kind}"] == 1


def test_a_judge_answering_garbage_is_left_out_and_the_others_vote():
    with OpenAICompatServer(lambda req, i: "I think it's great!") as bad, \
            OpenAICompatServer(judge_responder(FLAGS)) as good:
        service = JudgeService(endpoints(bad, good))
        bd, vote = judged(PARAPHRASE, service)
    assert vote.violation and [v.model for v in vote.verdicts] == ["judge-1"]
    assert service.stats["failure:garbage"] == 1 and bd.scores["compliance"].value == JUDGE_FINDING


def test_the_deferred_judge_leaves_the_step_reward_the_rules_and_says_so():
    model = rule_model("LiveRoom-v0")
    with OpenAICompatServer(judge_responder(FLAGS)) as srv:
        tap = DeferredJudge(JudgeService(endpoints(srv)))
        step = RewardModel(model.config, judge=tap).score(ctx(PARAPHRASE))
        votes = tap.votes_now()
    assert step.as_dict() == model.score(ctx(PARAPHRASE)).as_dict()
    assert PENDING in step.scores["compliance"].reasons and len(tap.tickets) == 1
    assert votes[0].violation


def test_judge_urls_name_their_model_or_ask_the_server():
    with OpenAICompatServer(judge_responder(), model=["served-judge"]) as srv:
        named, asked = judge_endpoints(f"{srv.base_url}#mine,{srv.base_url}")
    assert (named.model, asked.model) == ("mine", "served-judge")
    for bad, words in (("ftp://x/v1", "http(s) URL"), (",".join(["http://127.0.0.1:9/v1#m"] * 4), "one to three"),
                       ("http://127.0.0.1:9/v1", "no model named")):
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
            judge_endpoints(bad, timeout_s=1)


def test_the_scripted_judge_reads_its_prompt_back():
    c = ctx("@mia_22 the glow serum is $19.99, no other serum comes close")
    context, reply = read_prompt(judge_request(c, rule_model("LiveRoom-v0").score(c).scores).prompt)
    verdict = scripted_verdict(context, reply)
    assert reply == c.reply and context["products"]["sk-serum-01"]["price"] == 24.99
    assert verdict["compliance"] == "violation" and verdict["factuality"] == "error"


def test_agreement_is_reported_per_family():
    rules = rule_model("LiveRoom-v0")
    replies = [CURE, PARAPHRASE, CLEAN]
    with OpenAICompatServer(judge_responder(FLAGS)) as srv:
        service = JudgeService(endpoints(srv))
        reqs = [judge_request(ctx(r), rules.score(ctx(r)).scores) for r in replies]
        votes = service.vote_all(reqs)
    agreement = judge_agreement((r.rules, v) for r, v in zip(reqs, votes))
    medical = agreement.compliance["medical or efficacy"]
    assert (medical.cases, medical.rules_only, medical.judge_only) == (2, 1, 1) and medical.agreement == 0.0
    assert agreement.compliance["none found"].agreement == 1.0
    assert agreement.factuality["price"].cases == 3


@given(st.lists(st.booleans(), min_size=1, max_size=3))
def test_the_majority_is_what_more_than_half_say(flags):
    vote = tally([JudgeAnswer(f"j{i}", f, "absolute or ranking" if f else None, False, None, 0.5)
                  for i, f in enumerate(flags)])
    yes = sum(flags)
    assert vote.violation == (True if 2 * yes > len(flags) else False if 2 * yes < len(flags) else None)


@pytest.mark.parametrize("answer", ["", "{}", "[1, 2]", '{"compliance": "maybe", "factuality": "correct"}',
                                    '{"compliance": "clean", "factuality": "correct", "engagement": 7}',
                                    '{"compliance": "clean", "factuality": "correct", "engagement": "high"}'])
def test_answers_that_are_no_verdict_are_refused(answer):
    with pytest.raises(ValueError):
        parse_verdict(answer, "j")


def test_a_verdict_names_families_as_the_families_file_does():
    v = parse_verdict(json.dumps({"compliance": "violation", "family": "绝对化用语", "factuality": "no claim"}), "j")
    assert v.family == "absolute or ranking" and v.engagement == 0.5
