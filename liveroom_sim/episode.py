"""Play one episode with any policy, recording failures as data.

Used by the command line and the rollout runners. A policy whose endpoint fails (after
its client's retries) is asked again for the same turn a few times; if it still fails,
the episode ends as truncated with the reason recorded, and nothing played so far is
lost. Measured policy time can drive the room's clock (``latency.use_measured``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from liveroom_sim.errors import LiveRoomError
from liveroom_sim.llm import redact


@dataclass
class EpisodeResult:
    """What one episode produced (plain data, JSON-ready through :meth:`as_dict`)."""

    seed: int
    returns: dict[str, float]
    metrics: dict[str, Any]
    steps: int
    terminated: bool
    truncated: bool
    reason: str | None = None
    accounting: dict[str, Any] = field(default_factory=dict)
    messages: list[dict] = field(default_factory=list)
    turn_rewards: list[dict] = field(default_factory=list)

    @property
    def total(self) -> float:
        return self.returns["total"]

    def as_dict(self) -> dict:
        return {"seed": self.seed, "return": self.total, "returns": self.returns, "metrics": self.metrics,
                "steps": self.steps, "terminated": self.terminated, "truncated": self.truncated,
                "reason": self.reason, "accounting": self.accounting}


def play(env, policy: Callable[[str, dict], str], seed: int, *, max_policy_failures: int = 3,
         record: bool = False, on_step: Callable[[dict], None] | None = None, options: dict | None = None) -> EpisodeResult:
    """Run ``policy`` on ``env`` (a LiveRoom env, wrapped or not) for one episode.

    Args:
        max_policy_failures: Consecutive policy failures (:class:`LiveRoomError`, e.g.
            an endpoint down) tolerated on one turn before the episode is truncated.
        record: Keep the trajectory (every action and tool result, in OpenAI format)
            and the per-turn reward breakdowns in the result.
        on_step: Called with each step's ``info`` (for transcripts and progress).
    """
    room_env = env.unwrapped
    room_env.record_transcript = record
    obs, info = env.reset(seed=seed, options=options)
    turn_rewards: list[dict] = []
    failures, reason = 0, None
    terminated = truncated = False
    while True:
        started = time.perf_counter()
        try:
            action = policy(obs, info)
        except LiveRoomError as exc:
            failures += 1
            if failures >= max_policy_failures:
                reason = redact(f"policy failed {failures} times in a row: {exc}")
                truncated = True
                break
            continue
        failures = 0
        room_env.measured_latency_s = time.perf_counter() - started
        _account(room_env, policy)
        obs, _, terminated, truncated, info = env.step(action)
        if record:
            turn_rewards.append({"kind": info["turn"]["kind"], **info["reward_breakdown"]})
        if on_step is not None:
            on_step(info)
        if terminated or truncated:
            break
    room = room_env.room
    return EpisodeResult(
        seed=seed, returns=dict(room.returns), metrics=room.metrics(), steps=room.steps,
        terminated=terminated, truncated=truncated, reason=reason, accounting=dict(room.accounting),
        messages=room.transcript() if record else [], turn_rewards=turn_rewards,
    )


def _account(room_env, policy) -> None:
    """Copy the policy's LLM accounting (if any) into the room, for info and summaries."""
    accounting = getattr(policy, "accounting", None)
    if accounting is not None and room_env.room is not None:
        room_env.room.accounting.update(accounting.as_dict())
