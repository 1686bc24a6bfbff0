"""Kept for callers of the old name: the context of a reply turn is the room's to build
(:meth:`liveroom_sim.sim.room.Room.reply_context`)."""

from __future__ import annotations

from liveroom_sim.rewards.context import TurnContext
from liveroom_sim.sim.room import Room
from liveroom_sim.sim.viewers import ChatMessage


def reply_context(room: Room, text: str, target: ChatMessage | None, latency: float) -> TurnContext:
    """:meth:`Room.reply_context` of ``room``."""
    return room.reply_context(text, target, latency)
