"""The context the reward reads for a reply turn, built from the room as it is now."""

from __future__ import annotations

from liveroom_sim.rewards.context import Question, TurnContext
from liveroom_sim.sim.viewers import ChatMessage


def reply_context(room, text: str, target: ChatMessage | None, latency: float) -> TurnContext:
    """What the reward reads of a reply turn: the reply, the question it answers (with its
    facts as of now), who waits, and the room's recent history."""
    q = None
    if target is not None:
        q = Question(target.viewer.name, target.intent, target.text, target.product, target.order,
                     room.clock - target.at, room._facts(target), target.payload, target.stated)
    waiting, pending = _questions_waiting(room.crowd)
    since_pitch = room.clock - room.pitched_at if room.pitched_at >= room.featured_at else 1e9
    return TurnContext(
        "reply", text, room.market, room.harness, room.words, q, pending, tuple(room.recent_replies),
        since_feature_s=room.clock - room.featured_at, replies_since_slogan=room.replies_since_slogan,
        latency_budget_s=room.spec.latency.budget_s, turn_latency_s=latency,
        lookups=frozenset(room.lookups.made), waiting=waiting, since_pitch_s=since_pitch,
        failed_lookups=frozenset(room.lookups.failed) if room.lookups.failed else None,
        unavailable_lookups=frozenset(room.lookups.unavailable) if room.lookups.unavailable else None,
    )


def _questions_waiting(crowd) -> tuple[tuple[str, ...], int]:
    """The questions of fact waiting from viewers still present: their askers' names in
    order (:meth:`Crowd.waiting_askers`) and how many there are, read in one pass (the
    waiting chat changes nearly every reply, so nothing is kept between calls; not the
    crowd's ``questions_waiting``, which counts messages of viewers who left)."""
    questions = [m for m in crowd.waiting() if m.is_fact_question]
    return tuple(dict.fromkeys(m.viewer.name for m in questions)), len(questions)
