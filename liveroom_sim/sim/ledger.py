"""The episode's ledger: what the room has earned, lost and counted so far.

Each step's reward is booked here with what the step lost (questions that expired
unanswered, viewers who left unanswered: the ``outcome`` component). When an episode
stops before the stream ends (truncated, or a trainer stopping a rollout) the rest of the
stream is played out with no host, on a copy of the crowd, and what would then be lost is
charged too (the settlement): quitting is never free.

The ledger is the one owner of the returns, the settlement and the room's counters
(replies, blocked replies, tool errors, latency, the policy's LLM usage); the room asks
it to book, the env and the runners read it.
"""

from __future__ import annotations

from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.model import RewardBreakdown, RewardModel
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.turn import Turn
from liveroom_sim.spec import COMPONENTS
from liveroom_sim.world.market import Market


class EpisodeLedger:
    """Returns by reward component, the settlement of an early end, and the counters
    the metrics report.

    Args:
        reward_model: Weighs what a step or a settlement lost.
        crowd: The room's crowd (its stats count the losses; a settlement plays a copy
            of it out).
        end_s: When the stream's scheduled time is over.

    Attributes:
        returns: Component -> summed value, and ``total``.
        settled: Whether the rest of the stream has been charged (or there was none).
        replies, blocked, tool_errors: Delivered replies, replies a hook blocked, and
            the policy's tool errors so far.
        latency_total, last_latency: Turn latencies, summed, and the last one.
        accounting: The policy's LLM usage (calls, tokens, time), as its avatar counts it.
    """

    def __init__(self, reward_model: RewardModel, crowd: Crowd, end_s: float):
        self.returns = dict.fromkeys((*reward_model.components, "total"), 0.0)
        self.settled = False
        self.replies = 0
        self.blocked = 0
        self.tool_errors = 0
        self.latency_total = 0.0
        self.last_latency = 0.0
        self.accounting: dict = {}
        self._model, self._crowd, self._end_s = reward_model, crowd, end_s

    # ------------------------------------------------------------------ booking
    def losses(self) -> tuple[int, int]:
        """``(questions expired, viewers who left unanswered)`` so far."""
        stats = self._crowd.stats
        return stats.ignored, stats.left_unanswered

    def book(self, turn: Turn, lost_before: tuple[int, int], clock: float, market: Market,
             truncated: bool) -> RewardBreakdown:
        """Count ``turn`` and book its reward with what was lost since ``lost_before`` (a
        :meth:`losses`) charged, plus, when this step truncated the episode, what the
        room would lose for the rest of the stream. Returns the reward as booked."""
        if turn.kind == "reply":
            self.replies += turn.delivered
            self.blocked += turn.blocked
        self.tool_errors += len(turn.tool_errors)
        self.latency_total += turn.latency_s
        self.last_latency = turn.latency_s
        stats = self._crowd.stats
        expired, left = stats.ignored - lost_before[0], stats.left_unanswered - lost_before[1]
        if truncated and not self.settled:
            more = self._left_behind(clock, market)
            expired, left = expired + more[0], left + more[1]
        reward = self._model.settle(turn.reward, expired, left)
        returns = self.returns
        for k, score in reward.scores.items():
            returns[k] += score.value
        returns["total"] += reward.total
        return reward

    def settle(self, clock: float, market: Market, over: bool) -> RewardBreakdown:
        """End the shift now, scoring the room it leaves.

        The rest of the stream is played out with no host: every question that then
        expires unanswered and every viewer who leaves unanswered costs what it costs
        during play (the ``outcome`` component). Idempotent: a second call, or a stream
        that is ``over``, settles nothing.

        Returns:
            The settlement's breakdown (also added to :attr:`returns`).
        """
        zero = RewardBreakdown({n: Score(0.0) for n in COMPONENTS}, 0.0)
        if self.settled or over:
            self.settled = True
            return zero
        settlement = self._model.settle(zero, *self._left_behind(clock, market))
        self.returns["outcome"] += settlement.scores["outcome"].value
        self.returns["total"] += settlement.total
        return settlement

    def _left_behind(self, clock: float, market: Market) -> tuple[int, int]:
        """Questions that would expire and viewers who would leave unanswered if the
        rest of the stream ran with no host, played out on a copy of the crowd (the room,
        its clock and its random stream stay as they are). Marks the ledger settled."""
        self.settled = True
        return self._crowd.play_out(clock, self._end_s, market)

    def restart(self) -> None:
        """Returns from zero again (a segment's policy is scored from its first step)."""
        self.returns = dict.fromkeys(self.returns, 0.0)

    def note_usage(self, accounting: dict) -> None:
        """Keep the policy's LLM usage so far (for ``info`` and summaries)."""
        self.accounting.update(accounting)

    # ------------------------------------------------------------------ reading
    def summary(self, steps: int, metrics: dict) -> dict:
        """The episode's summary, as ``info["episode"]`` holds it at the end."""
        return {"return": self.returns["total"], "returns": dict(self.returns), "steps": steps,
                "metrics": metrics, "accounting": dict(self.accounting)}
