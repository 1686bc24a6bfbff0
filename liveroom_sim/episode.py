"""Play one episode with any policy, recording failures as data.

Used by the command line and the rollout runners. What goes wrong is told apart by
whose fault it is:

- **An outage** (:class:`~liveroom_sim.llm.client.EndpointUnavailable`: connection
  refused, timeouts, 5xx after the client's retries) is waited out: the episode pauses
  and asks again for the same turn, with backoff, for up to ``patience_s`` seconds. If
  the endpoint is still down, the result is an *infrastructure failure* (``infra``):
  not a trajectory, so runners keep it out of GRPO groups and play it again.
- **A refused request** (:class:`~liveroom_sim.llm.client.EndpointRefused`, HTTP 4xx) is
  asked again ``max_policy_failures`` times, then also ends as an infrastructure failure.
- **The policy's own faults** are its actions: an endpoint that answers nothing usable (no
  choices) has said nothing, and the room scores the empty reply; malformed tool calls and
  replies that ignore the format reach the room as they are, to be penalised.
- **Any other exception** (a policy or env bug) ends the episode with ``error`` set; the
  transcript so far is kept.

Measured policy time (outage pauses excluded) can drive the room's clock
(``latency.use_measured``). :func:`aplay` is the same for asyncio, awaiting policies that
have ``acall`` (LLM avatars), so many episodes can be in flight in one process.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from liveroom_sim.llm.client import EndpointError, EndpointRefused, EndpointUnavailable, scrub
from liveroom_sim.trajectory.steps import policy_tokens, turn_entry  # segment labels, token log


DEFAULT_PATIENCE_S = 60.0


def patience(value: float | None = None) -> float:
    """``value``, else ``$LIVEROOM_PATIENCE_S``, else :data:`DEFAULT_PATIENCE_S` seconds
    (the variable sets it for commands that have no option for it)."""
    if value is not None:
        return float(value)
    try:
        return max(0.0, float(os.environ.get("LIVEROOM_PATIENCE_S", DEFAULT_PATIENCE_S)))
    except ValueError:
        return DEFAULT_PATIENCE_S


@dataclass
class EpisodeResult:
    """What one episode produced (plain data, JSON-ready through :meth:`as_dict`).

    ``error`` is set when the episode could not be played to its end (``infra`` when
    the endpoint, not the policy or the env, was the cause); ``policy_faults`` counts turns
    on which the endpoint answered nothing usable (played as empty replies).
    """

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
    error: str | None = None
    infra: bool = False
    policy_faults: int = 0
    waited_s: float = 0.0

    @property
    def total(self) -> float:
        return self.returns["total"]

    def as_dict(self) -> dict:
        return {"seed": self.seed, "return": self.total, "returns": self.returns, "metrics": self.metrics,
                "steps": self.steps, "terminated": self.terminated, "truncated": self.truncated,
                "reason": self.reason, "accounting": self.accounting, "error": self.error, "infra": self.infra}


def describe_exception(exc: BaseException) -> str:
    """``Type: message at file:line`` (the innermost frame), redacted."""
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return scrub(f"{type(exc).__name__}: {exc}{at}")[:500]


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

    def __init__(self, env, policy, seed, max_policy_failures, patience_s, record, on_step, options):
        self.env, self.room_env, self.policy, self.seed = env, env.unwrapped, policy, seed
        self.max_failures, self.patience_s = max_policy_failures, patience(patience_s)
        self.record, self.on_step = record, on_step
        self.room_env.record_transcript = record
        self.obs, self.info = env.reset(seed=seed, options=options)
        if hasattr(policy, "begin_episode"):
            policy.begin_episode(seed)
        self.turn_rewards: list[dict] = []
        self.refusals, self.reason, self.error, self.infra = 0, None, None, False
        self.outage_since: float | None = None
        self.outage_waits, self.waited, self.policy_faults = 0, 0.0, 0
        self.terminated = self.truncated = False
        self.started = 0.0
        self._jitter = random.Random()  # waits only; nothing the episode records depends on it

    def endpoint_failed(self, exc: EndpointError) -> float | None:
        """Seconds to wait before asking again for this turn, or None when the turn
        must be played now (as an empty reply) or the episode must stop (``self.error``)."""
        if isinstance(exc, EndpointUnavailable):
            now = time.monotonic()
            self.outage_since = self.outage_since if self.outage_since is not None else now
            wait = min(1.0 * 2.0**self.outage_waits, 15.0) * (1 - 0.2 * self._jitter.random())
            down = now - self.outage_since
            if down + wait > self.patience_s:
                return self._infra(f"endpoint unavailable for {down:.1f} s (patience {self.patience_s:g} s): {exc}")
            self.outage_waits += 1
            self.waited += wait
            return wait
        if isinstance(exc, EndpointRefused):
            self.refusals += 1
            if self.refusals >= self.max_failures:
                return self._infra(f"endpoint refused the request {self.refusals} times: {exc}")
            return 0.0
        self.policy_faults += 1  # answered, but nothing usable: the policy said nothing
        return None

    def _infra(self, reason: str) -> None:
        self.error = self.reason = scrub(reason)[:500]
        self.infra = self.truncated = True
        return None

    def crashed(self, exc: Exception) -> None:
        self.error = self.reason = describe_exception(exc)
        self.truncated = True

    def act(self, action: str) -> bool:
        """Step the env with ``action``; True when the episode is over."""
        self.refusals, self.outage_since, self.outage_waits = 0, None, 0
        self.room_env.measured_latency_s = time.perf_counter() - self.started
        accounting = getattr(self.policy, "accounting", None)
        if accounting is not None:  # the policy's LLM usage, for info and summaries
            self.room_env.room.ledger.note_usage(accounting.as_dict())
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
            accounting=dict(room.ledger.accounting), messages=room.transcript() if self.record else [],
            turn_rewards=self.turn_rewards, decisions=list(getattr(self.policy, "decisions", ())),
            tokens=policy_tokens(self.policy) if self.record else [],
            error=self.error, infra=self.infra, policy_faults=self.policy_faults, waited_s=round(self.waited, 3),
        )


def play(env, policy: Callable[[str, dict], str], seed: int, *, max_policy_failures: int = 3,
         patience_s: float | None = None, record: bool = False, on_step: Callable[[dict], None] | None = None,
         options: dict | None = None) -> EpisodeResult:
    """Run ``policy`` on ``env`` (a LiveRoom env, wrapped or not) for one episode.

    Args:
        max_policy_failures: Refused requests (HTTP 4xx) in a row tolerated on one turn.
        patience_s: How long an outage may last on one turn before the episode gives up
            as an infrastructure failure (waits back off from 1 s to 15 s); by default
            ``$LIVEROOM_PATIENCE_S``, else 60 s.
        record: Keep the trajectory (every action and tool result, in OpenAI format)
            and the per-turn reward breakdowns in the result.
        on_step: Called with each step's ``info`` (for transcripts and progress).
    """
    run = _Run(env, policy, seed, max_policy_failures, patience_s, record, on_step, options)
    while run.error is None:
        run.started = time.perf_counter()
        try:
            action = policy(run.obs, run.info)
        except EndpointError as exc:
            wait = run.endpoint_failed(exc)
            if wait is not None:
                time.sleep(wait)
                continue
            if run.error is not None:
                break
            action = ""
        except Exception as exc:  # noqa: BLE001 - a bad episode is data, not a crash
            run.crashed(exc)
            break
        try:
            if run.act(action):
                break
        except Exception as exc:  # noqa: BLE001
            run.crashed(exc)
    return run.result()


async def aplay(env, policy, seed: int, *, max_policy_failures: int = 3, patience_s: float | None = None,
                record: bool = False, on_step: Callable[[dict], None] | None = None,
                options: dict | None = None) -> EpisodeResult:
    """:func:`play` for asyncio: awaits ``policy.acall`` when the policy has one."""
    run = _Run(env, policy, seed, max_policy_failures, patience_s, record, on_step, options)
    acall = getattr(policy, "acall", None)
    while run.error is None:
        run.started = time.perf_counter()
        try:
            action = await acall(run.obs, run.info) if acall else policy(run.obs, run.info)
        except EndpointError as exc:
            wait = run.endpoint_failed(exc)
            if wait is not None:
                await asyncio.sleep(wait)
                continue
            if run.error is not None:
                break
            action = ""
        except Exception as exc:  # noqa: BLE001
            run.crashed(exc)
            break
        try:
            if run.act(action):
                break
        except Exception as exc:  # noqa: BLE001
            run.crashed(exc)
    return run.result()
