"""The judge in rollouts: asked at each reply, applied to the record before a trainer reads it.

The env computes each step's reward inside ``env.step``; a judge's 200 ms call there
would stall the episode at every reply. So the rollout gives the episode's env a reward
model with a :class:`~liveroom_sim.rewards.judge.apply.DeferredJudge`: at each reply the
vote is requested as a task on the worker's event loop and the episode goes on at once;
the step's reward (``info["reward_breakdown"]``) is the rules', and its reasons say the
vote is pending. When the episode ends, its votes (long since in, for all but the last
replies) are applied to its record: each judged step's components and total, the
episode's ``returns`` and ``return`` (hence the group's advantages, computed when the
group completes). Each such turn record carries ``judge`` (the vote, the rules' total,
and what changed); the record carries ``judge`` (votes, applied, failures, policy).

With the serial backend there is no event loop during the episode: its votes are asked
in one batch when it ends.
"""

from __future__ import annotations

from liveroom_sim.rewards.judge.apply import JUDGED, DeferredJudge
from liveroom_sim.rewards.judge.service import JudgeService
from liveroom_sim.rewards.judge.vote import blend
from liveroom_sim.rewards.model import RewardModel


class EpisodeJudge:
    """The judge of one episode: wires a deferred judge into ``env`` and notes which step
    asked which vote (pass :meth:`on_step` to ``play``/``aplay``)."""

    def __init__(self, env, service: JudgeService):
        room_env = env.unwrapped
        config = room_env.world.spec.reward.model_copy(update={"judge": None})
        self.service, self.tap = service, DeferredJudge(service)
        self.model = room_env.reward_model = RewardModel(config, judge=self.tap)
        self.steps: list[int] = []  # the step index of each ticket
        self._step = 0

    def on_step(self, info) -> None:
        while len(self.steps) < len(self.tap.tickets):
            self.steps.append(self._step)
        self._step += 1

    async def settle(self, record: dict) -> dict:
        """``record`` with the episode's votes applied (awaiting those still in flight).
        Should applying them fail, the record keeps the rules' rewards and says why: the
        judge never costs an episode."""
        try:
            return self.apply(record, await self.tap.votes())
        except Exception as exc:  # noqa: BLE001
            return self._unjudged(record, exc)

    def settle_now(self, record: dict) -> dict:
        """:meth:`settle` from synchronous code."""
        try:
            return self.apply(record, self.tap.votes_now())
        except Exception as exc:  # noqa: BLE001
            return self._unjudged(record, exc)

    def _unjudged(self, record: dict, exc: Exception) -> dict:
        from liveroom_sim.episode import describe_exception

        self.service.stats["failures"] += 1
        record["judge"] = {**self.service.describe(), "votes": 0, "applied": 0, "failed": len(self.tap.tickets),
                           "error": describe_exception(exc)}
        return record

    def apply(self, record: dict, votes: list) -> dict:
        """Apply ``votes`` (one per ticket) to ``record``: see the module docstring."""
        policy = self.service.policy
        turns, returns = record.get("turn_rewards") or [], record.get("returns") or {}
        applied = failed = 0
        for ticket, step, vote in zip(self.tap.tickets, self.steps, votes):
            failed += not vote.counted
            new = blend(ticket.scores, ticket.request.rules, vote, policy)
            (before, _), (after, gated) = self.model.total(ticket.scores), self.model.total(new)
            changes = {n: round(new[n].value - s.value, 6) for n, s in ticket.scores.items()
                       if new[n].value != s.value}
            applied += bool(changes) or after != before
            for name, delta in (*changes.items(), ("total", round(after - before, 6))):
                if name in returns and delta:
                    returns[name] = round(returns[name] + delta, 6)
            if step < len(turns):
                turn = turns[step]
                for name, delta in (*changes.items(), ("total", round(after - before, 6))):
                    if name in turn and delta:
                        turn[name] = round(turn[name] + delta, 6)
                turn["judge"] = {**vote.as_dict(), "rules_total": before, "changed": changes, "gated": gated}
                reasons = (turn.get("detail") or {}).get("reasons")
                if reasons is not None:
                    for name in JUDGED:
                        if name in new:
                            reasons[name] = [r for r in new[name].reasons]
        if record.get("error") is None and "total" in returns:
            record["return"] = returns["total"]
        record["judge"] = {**self.service.describe(), "votes": len(votes), "applied": applied, "failed": failed}
        return record
