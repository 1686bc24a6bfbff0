"""The judge as a reward model sees it: ``judge.request(ctx, scores) -> scores``.

A :class:`~liveroom_sim.rewards.model.RewardModel` given one of these calls it on every
reply, after the rule-based components:

- :class:`DeferredJudge` (rollouts) asks for the vote the moment the reply is scored,
  as a task on the running event loop (or, with none, in one batch when the episode
  ends), and returns the rules' scores with a reason saying the vote is pending. The
  reward the env reports for the step is the rules'; the rollout applies the vote to
  the episode's record before any trainer reads it (:mod:`liveroom_sim.rollout.judging`).
  An episode never waits for the judge between steps.
- :class:`VotedJudge` applies votes already in (``liveroom rewards score`` and
  ``calibrate`` ask for a whole file's in one batch first).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.judge.request import JudgeRequest, judge_request
from liveroom_sim.rewards.judge.service import JudgeService
from liveroom_sim.rewards.judge.vote import Vote, blend

PENDING = "judge vote pending: asked at this step, applied to the rollout record when the episode ends"
JUDGED = ("compliance", "factuality", "engagement")


@dataclass
class Ticket:
    """One reply's request, the rules' scores it was asked with, and the vote's task
    (``None`` until asked, when no event loop was running at the step)."""

    request: JudgeRequest
    scores: dict[str, Score]
    task: asyncio.Task | None = None


class DeferredJudge:
    """Asks the service at each reply; keeps the episode's :class:`Ticket` s in order."""

    def __init__(self, service: JudgeService):
        self.service = service
        self.tickets: list[Ticket] = []

    def request(self, ctx, scores: dict[str, Score]) -> dict[str, Score]:
        req = judge_request(ctx, scores)
        if req is None:
            return scores
        try:
            task = asyncio.get_running_loop().create_task(self.service.vote(req))
        except RuntimeError:  # no event loop at this step (the serial backend): asked when the episode ends
            task = None
        self.tickets.append(Ticket(req, dict(scores), task))
        return {n: Score(s.value, lambda s=s: (*s.reasons, PENDING)) if n in JUDGED else s for n, s in scores.items()}

    async def votes(self) -> list[Vote]:
        """Every ticket's vote, in order (those not yet asked are asked now, together)."""
        return list(await asyncio.gather(*(t.task if t.task is not None else self.service.vote(t.request)
                                           for t in self.tickets)))

    def votes_now(self) -> list[Vote]:
        """:meth:`votes` from synchronous code (no event loop running)."""
        return self.service.vote_all(t.request for t in self.tickets)


class VotedJudge:
    """Applies votes already in, by request key, under ``policy``; a reply with no vote
    keeps the rules' scores."""

    def __init__(self, votes: dict[str, Vote], policy: str):
        self.votes, self.policy = votes, policy

    def request(self, ctx, scores: dict[str, Score]) -> dict[str, Score]:
        req = judge_request(ctx, scores)
        vote = self.votes.get(req.key) if req is not None else None
        return scores if vote is None else blend(scores, req.rules, vote, self.policy)


async def judge_turn(service: JudgeService, model, ctx, scores: dict[str, Score]) -> dict | None:
    """One scored turn judged now (``liveroom eval``): the blended values of the judged
    components and the total, the rules' values, and the vote; ``None`` for a turn with
    nothing said to judge."""
    req = judge_request(ctx, scores)
    if req is None:
        return None
    vote = await service.vote(req)
    new = blend(scores, req.rules, vote, service.policy)
    total, gated = model.total(new)
    return {**{n: round(new[n].value, 4) for n in JUDGED if n in new}, "total": total, "gated": gated,
            "rules": {n: scores[n].value for n in JUDGED if n in scores}, "rules_total": model.total(scores)[0],
            "vote": vote.as_dict(), "policy": service.policy,
            "reason": vote.verdicts[0].reason if vote.verdicts else "; ".join(vote.failures)}
