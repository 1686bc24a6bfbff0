"""What one step of the room did: the record the ledger books and the env reports."""

from __future__ import annotations

from dataclasses import dataclass

from liveroom_sim.rewards.model import RewardBreakdown


@dataclass(slots=True)
class Turn:
    """What one step did."""

    kind: str
    reward: RewardBreakdown
    events: list[dict]
    delivered: bool = False
    hooks: tuple[str, ...] = ()
    tool_errors: tuple[str, ...] = ()
    tool_faults: tuple[dict, ...] = ()
    answered: str | None = None
    latency_s: float = 0.0
    reply: str = ""
    reasoning_chars: int = 0
    blocked: bool = False  # a hook blocked the reply (it was not delivered)
