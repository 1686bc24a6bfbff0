"""Play one episode with any policy, recording failures as data.

Used by the command line and the rollout runners. A policy whose endpoint fails (after
its client's retries) is asked again for the same turn a few times; if it still fails,
the episode ends as truncated with the reason recorded, and nothing played so far is
lost. Measured policy time can drive the room's clock (``latency.use_measured``).
:func:`aplay` is the same for asyncio, awaiting policies that have ``acall`` (LLM
avatars), so many episodes can be in flight in one process.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from liveroom_sim.errors import LiveRoomError
from liveroom_sim.llm.client import redact
from liveroom_sim.trajectory.steps import policy_tokens, turn_entry  # segment labels, token log (issue 15)


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
    decisions: list = field(default_factory=list)
    tokens: list[dict] = field(default_factory=list)  # the policy's token turns (liveroom_sim.trajectory)

    @property
    def total(self) -> float:
        return self.returns["total"]

    def as_dict(self) -> dict:
        return {"seed": self.seed, "return": self.total, "returns": self.returns, "metrics": self.metrics,
                "steps": self.steps, "terminated": self.terminated, "truncated": self.truncated,
                "reason": self.reason, "accounting": self.accounting}


def turn_record(info: dict, entries: list[dict]) -> dict:
    """One step as rollout records keep it: its kind, segment and reward breakdown
    (:func:`~liveroom_sim.trajectory.steps.turn_entry`; ``entries`` are the steps so far),
    and under ``detail`` what a session report shows beside the turn (stream clock, viewers present,
    questions waiting, GMV, events fired, hooks, tool faults, the reward's reasons)."""
    turn, m = info["turn"], info["metrics"]
    detail = {"clock_s": m["clock_s"], "viewers": m["viewers_present"], "waiting": m["questions_waiting"],
              "gmv": m["gmv"], "delivered": turn["delivered"], "gated": turn["gated"]}
    for key, value in (("events", info["events"]), ("hooks", turn["hooks"]), ("tool_errors", turn["tool_errors"]),
                       ("answered", turn["answered"])):
        if value:
            detail[key] = value
    detail["reasons"] = {k: v for k, v in info.get("reward_reasons", {}).items() if v}
    return {**turn_entry(info, entries), "detail": detail}


class _Run:
    """The bookkeeping of one episode, shared by :func:`play` and :func:`aplay`."""

    def __init__(self, env, policy, seed, max_policy_failures, record, on_step, options):
        self.env, self.room_env, self.policy, self.seed = env, env.unwrapped, policy, seed
        self.max_failures, self.record, self.on_step = max_policy_failures, record, on_step
        self.room_env.record_transcript = record
        self.obs, self.info = env.reset(seed=seed, options=options)
        if hasattr(policy, "begin_episode"):
            policy.begin_episode(seed)
        self.turn_rewards: list[dict] = []
        self.failures, self.reason = 0, None
        self.terminated = self.truncated = False
        self.started = 0.0

    def failed(self, exc: LiveRoomError) -> bool:
        """Count a policy failure; True when the episode must stop."""
        self.failures += 1
        if self.failures >= self.max_failures:
            self.reason = redact(f"policy failed {self.failures} times in a row: {exc}")
            self.truncated = True
            return True
        return False

    def act(self, action: str) -> bool:
        """Step the env with ``action``; True when the episode is over."""
        self.failures = 0
        self.room_env.measured_latency_s = time.perf_counter() - self.started
        accounting = getattr(self.policy, "accounting", None)
        if accounting is not None:  # the policy's LLM usage, for info and summaries
            self.room_env.room.accounting.update(accounting.as_dict())
        self.obs, _, self.terminated, self.truncated, self.info = self.env.step(action)
        if self.record:
            self.turn_rewards.append(turn_record(self.info, self.turn_rewards))
        if self.on_step is not None:
            self.on_step(self.info)
        return self.terminated or self.truncated

    def result(self) -> EpisodeResult:
        room = self.room_env.room
        return EpisodeResult(
            seed=self.seed, returns=dict(room.returns), metrics=room.metrics(), steps=room.steps,
            terminated=self.terminated, truncated=self.truncated, reason=self.reason,
            accounting=dict(room.accounting), messages=room.transcript() if self.record else [],
            turn_rewards=self.turn_rewards, decisions=list(getattr(self.policy, "decisions", ())),
            tokens=policy_tokens(self.policy) if self.record else [],
        )


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
    run = _Run(env, policy, seed, max_policy_failures, record, on_step, options)
    while True:
        run.started = time.perf_counter()
        try:
            action = policy(run.obs, run.info)
        except LiveRoomError as exc:
            if run.failed(exc):
                break
            continue
        if run.act(action):
            break
    return run.result()


async def aplay(env, policy, seed: int, *, max_policy_failures: int = 3, record: bool = False,
                on_step: Callable[[dict], None] | None = None, options: dict | None = None) -> EpisodeResult:
    """:func:`play` for asyncio: awaits ``policy.acall`` when the policy has one."""
    run = _Run(env, policy, seed, max_policy_failures, record, on_step, options)
    acall = getattr(policy, "acall", None)
    while True:
        run.started = time.perf_counter()
        try:
            action = await acall(run.obs, run.info) if acall else policy(run.obs, run.info)
        except LiveRoomError as exc:
            if run.failed(exc):
                break
            continue
        if run.act(action):
            break
    return run.result()
