"""Ending a shift early: what the room loses when the host stops before the stream ends.

Questions that expire unanswered and viewers who leave unanswered cost reward at the step
they happen (the ``outcome`` component). When an episode stops early (truncated, or a
trainer stopping a rollout) the rest of the stream is played out with no host, on a copy
of the crowd, and what would then be lost is charged too: quitting is never free.
"""

from __future__ import annotations

from liveroom_sim.rewards.components import Score
from liveroom_sim.rewards.model import RewardBreakdown
from liveroom_sim.spec import COMPONENTS


def losses(room) -> tuple[int, int]:
    """``(questions expired, viewers who left unanswered)`` so far."""
    stats = room.crowd.stats
    return stats.ignored, stats.left_unanswered


def losses_since(room, before: tuple[int, int]) -> tuple[int, int]:
    """What was lost since ``before`` (a :func:`losses`), plus, when this step truncated
    the episode, what the room would lose for the rest of the stream."""
    stats = room.crowd.stats
    expired, left = stats.ignored - before[0], stats.left_unanswered - before[1]  # (losses(room) - before)
    if room.truncated and not room.settled:
        more = left_behind(room)
        expired, left = expired + more[0], left + more[1]
    return expired, left


def left_behind(room) -> tuple[int, int]:
    """Questions that would expire and viewers who would leave unanswered if the rest of
    the stream ran with no host, played out on a copy of the crowd (the room itself, its
    clock and its random stream stay as they are). Marks the room settled."""
    room.settled = True
    return room.crowd.play_out(room.clock, room.spec.stream.duration_s, room.market)


def settle(room) -> RewardBreakdown:
    """End the shift now, scoring the room it leaves.

    The rest of the stream is played out with no host: every question that then expires
    unanswered and every viewer who leaves unanswered costs what it costs during play
    (the ``outcome`` component). Call it when an episode stops before the stream ends (a
    trainer stopping a rollout); the room does it itself when it truncates. Idempotent: a
    second call (or a finished stream) settles nothing.

    Returns:
        The settlement's breakdown (also added to the room's returns).
    """
    zero = RewardBreakdown({n: Score(0.0) for n in COMPONENTS}, 0.0)
    if room.settled or room.terminated:
        room.settled = True
        return zero
    settlement = room.reward_model.settle(zero, *left_behind(room))
    room.returns["outcome"] += settlement.scores["outcome"].value
    room.returns["total"] += settlement.total
    return settlement
