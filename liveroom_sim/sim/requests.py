"""Requests: how a viewer's messages reach the host (issue 13's crowd realism).

The chat typed before the stream opens, and the messages a viewer sends close together,
which reach the host as one request with every ask and its truth.
"""

from __future__ import annotations

import dataclasses

from liveroom_sim.sim.viewers import ChatMessage
from liveroom_sim.world.personas import FACT_INTENTS as _FACT_INTENTS

#: Seconds of chat before the stream opens: the viewers already in the room have been
#: typing, so the first observation shows who spoke first and what (it differs by seed).
OPENING_CHAT_S = 45.0
#: A viewer's messages this close together reach the host as one request.
MERGE_WINDOW_S = 10.0


def opening_start(now: float, messages_so_far: int) -> float:
    """When a viewer arriving at ``now`` starts to chat: viewers present at the opening
    (time 0, nothing said yet) started typing before it."""
    return now - OPENING_CHAT_S if now == 0.0 and messages_so_far == 0 else now


def merge_target(pending: list[ChatMessage], msg: ChatMessage) -> ChatMessage | None:
    """The waiting request of ``msg``'s viewer that ``msg`` joins: the viewer's latest,
    when ``msg`` came within :data:`MERGE_WINDOW_S` of it (baits stand alone)."""
    if msg.intent in ("bait", "inject"):
        return None
    for req in reversed(pending):
        if req.viewer is msg.viewer and not req.answered:
            ok = msg.at - req.at <= MERGE_WINDOW_S and req.intent not in ("bait", "inject")
            return req if ok else None
    return None


def merge_into(req: ChatMessage, msg: ChatMessage) -> ChatMessage:
    """The request ``req`` with ``msg`` folded in: one request with every ask, each with
    its truth. Both messages stay in the chat as they were typed."""
    req = dataclasses.replace(req)
    if not req.is_fact_question and msg.is_fact_question:
        # a greeting then a question: the question leads the request
        req.asks = msg.asks + tuple(a for a in req.asks if a.intent in _FACT_INTENTS)
        req.ref, req.deadline = msg.ref, msg.deadline
    else:
        have = {(a.intent, a.product, a.order) for a in req.asks}
        req.asks = req.asks + tuple(a for a in msg.asks
                                    if (a.intent, a.product, a.order) not in have and a.intent in _FACT_INTENTS)
    req.text = f"{req.text} / {msg.text}"
    req.body = f"{req.body} / {msg.body}"
    req.parts += 1
    return req
