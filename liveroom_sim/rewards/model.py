"""The reward model: the components, weighted and gated as the env spec says."""

from __future__ import annotations

from typing import NamedTuple

from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.conduct import credit_share
from liveroom_sim.rewards.context import TurnContext
from liveroom_sim.rewards.registry import COMPONENTS, the_one
from liveroom_sim.rewards.tooluse import outcome
from liveroom_sim.spec import RewardConfig

#: Components whose positive value a reply earns only by serving a need (see
#: :attr:`~liveroom_sim.rewards.registry.Component.served`).
SERVED_ONLY = tuple(c.name for c in COMPONENTS if c.served)
_GATE, _JUDGED, _SETTLED = (the_one(flag).name for flag in ("gates", "judged", "settles"))
_WITHHELD = "credit withheld: the reply serves no waiting need"
_OFF = Score(0.0, ("off in this spec",))
_FUNCTIONS = {c.name: c.score for c in COMPONENTS}


class RewardBreakdown(NamedTuple):
    """One turn's reward: each component's score, and the weighted total."""

    scores: dict[str, Score]
    total: float
    gated: bool = False

    def as_dict(self) -> dict[str, float]:
        """Component -> value, plus ``total`` (what ``info["reward_breakdown"]`` holds)."""
        return {**{k: s.value for k, s in self.scores.items()}, "total": self.total}

    def explain(self) -> dict[str, list[str]]:
        return {k: list(s.reasons) for k, s in self.scores.items()}


class RewardModel:
    """Scores turns with the rule-based components (and an optional judge).

    Args:
        config: Weights per component (0 turns a component off; it then scores 0 and
            is reported as such) and the compliance gate.
        judge: Optional ``judge(ctx, engagement_score) -> Score`` that grades
            engagement (:class:`~liveroom_sim.rewards.judge.LLMJudge`, built from the
            spec's ``reward.judge`` when that is set), or a judge of every component
            with ``request(ctx, scores) -> scores`` (:mod:`liveroom_sim.rewards.judge`:
            the rollouts' deferred vote, or votes already in).

    Example:
        >>> from liveroom_sim.spec import RewardConfig
        >>> RewardModel(RewardConfig()).weights["factuality"]
        1.0

    A reply earns positive reward only when it serves a need of the room (a waiting
    viewer's question, or the featured product when it is owed and nobody waits), in
    proportion to the share of that need it newly meets (half an answer, half the
    credits; the same answer again, none); its costs count always. See ``docs/rewards.md``.
    """

    def __init__(self, config: RewardConfig, judge=None):
        self.config = config
        self.weights = dict(config.weights)
        self.components = config.components
        if judge is None and config.judge is not None:
            from liveroom_sim.llm.client import Endpoint
            from liveroom_sim.rewards.judge import LLMJudge

            j = config.judge
            judge = LLMJudge(Endpoint(j.model, j.base_url, timeout_s=j.timeout_s), seed=j.seed)
        self.judge = judge
        # What score() runs, resolved once: each component's function (None when off).
        self._functions = tuple((n, _FUNCTIONS[n] if self.weights[n] != 0 else None)
                                for n in self.components)
        self._weighted = tuple((n, self.weights[n]) for n in self.components)
        # The compliance gate, resolved once: its threshold (None when it is off), the gated
        # component's weight, and the most a gated turn may earn.
        gate_weight = self.weights[_GATE]
        self._gate = (config.compliance_gate if gate_weight > 0 else None, gate_weight, -config.severe_penalty)

    def score(self, ctx: TurnContext) -> RewardBreakdown:
        """Score one turn. Pure: the same context gives the same breakdown."""
        scores = {}
        for name, fn in self._functions:
            scores[name] = fn(ctx) if fn is not None else _OFF
        reply = ctx.kind == "reply"
        vote = getattr(self.judge, "request", None)  # a judge of compliance and factuality (rewards.judge)
        if vote is None and self.judge is not None and reply and self.weights[_JUDGED]:
            scores[_JUDGED] = self.judge(ctx, scores[_JUDGED])
        if reply:
            share = credit_share(ctx)
            if share < 1.0:  # (credits are paid once per need, in proportion to the share met)
                for name in SERVED_ONLY:
                    kept = scores[name]
                    if kept.value > 0:
                        scores[name] = Score(round(kept.value * share, 6), lambda kept=kept, share=share: (
                            *kept.reasons, _WITHHELD if not share else f"{share:.0%} of the credit: share of the need newly met"))
        if vote is not None and reply:
            scores = vote(ctx, scores)
        return RewardBreakdown(scores, *self.total(scores))

    def total(self, scores: dict[str, Score]) -> tuple[float, bool]:
        """The weighted total of ``scores`` with the compliance gate applied, and whether
        the gate applied."""
        total = 0
        for n, w in self._weighted:
            total += w * scores[n].value
        gate, weight, floor = self._gate
        gated = gate is not None and scores[_GATE].value <= gate
        if gated:
            total = min(total, weight * scores[_GATE].value, floor)
        return round(total, 6), gated

    def settle(self, breakdown: RewardBreakdown, expired: int, left_unanswered: int) -> RewardBreakdown:
        """``breakdown`` with the room's losses during the step added (to the component
        that ``settles``: see :func:`liveroom_sim.rewards.tooluse.outcome`)."""
        if not expired and not left_unanswered:
            return breakdown
        lost = outcome(expired, left_unanswered)
        kept = breakdown.scores[_SETTLED]
        scores = {**breakdown.scores, _SETTLED: Score(lost.value + kept.value, (*kept.reasons, *lost.reasons))}
        total = breakdown.total + self.weights[_SETTLED] * lost.value
        return RewardBreakdown(scores, round(total, 6), breakdown.gated)
