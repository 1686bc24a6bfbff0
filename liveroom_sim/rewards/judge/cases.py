"""The judge over a file of reward cases (``liveroom rewards score|calibrate --judge``).

Every case is scored by the rules once, its judge request built, and all requests go to
the judges in one batch (:meth:`~liveroom_sim.rewards.judge.service.JudgeService.vote_all`);
then :func:`judged_models` scores the cases again with the votes applied.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.golden import rule_model
from liveroom_sim.rewards.judge.apply import VotedJudge
from liveroom_sim.rewards.judge.request import JudgeRequest, judge_request
from liveroom_sim.rewards.judge.service import JudgeService
from liveroom_sim.rewards.judge.vote import Vote
from liveroom_sim.rewards.model import RewardModel


@dataclass(frozen=True)
class JudgedCase:
    """A case, its judge request (``None``: nothing was said to judge) and the vote."""

    case: RewardCase
    request: JudgeRequest | None
    vote: Vote | None


def judge_cases(cases: Iterable[tuple[int, RewardCase]], service: JudgeService) -> list[JudgedCase]:
    """Ask the judges about every case at once; one :class:`JudgedCase` per case, in order."""
    models: dict[str, RewardModel] = {}
    pairs = []
    for _, case in cases:
        model = models.get(case.env) or models.setdefault(case.env, rule_model(case.env))
        ctx = build_context(case)
        pairs.append((case, judge_request(ctx, model.score(ctx).scores)))
    votes = service.vote_all(r for _, r in pairs)
    return [JudgedCase(case, req, vote) for (case, req), vote in zip(pairs, votes)]


def judged_models(judged: list[JudgedCase], policy: str) -> Callable[[str], RewardModel]:
    """``env -> RewardModel``: each env's rule-based model with these votes applied."""
    votes = {j.request.key: j.vote for j in judged if j.request is not None and j.vote is not None}
    judge = VotedJudge(votes, policy)
    return lambda env: RewardModel(rule_model(env).config, judge=judge)
