"""Complete-agent latency: replay turns from simulated sessions against an endpoint.

A *turn* is everything the agent does for one room update: its tool calls, the tools'
results, and the reply. Sessions run concurrently (asyncio), each for a bounded number
of turns; the report gives P50, P95 and P99 per turn and per call (seconds), tokens per
second, and the share of turns over the spec's latency budget (the TaoLive agent: P50
3.407 s, P95 8.114 s on one H20).
"""

from __future__ import annotations

import asyncio
import sys
import time

import gymnasium as gym
import numpy as np

from liveroom_sim.llm.avatar import EndpointError, OpenAIAvatar


def percentiles(values: list[float]) -> dict:
    """``count``, ``mean``, ``p50``, ``p95`` and ``p99`` of ``values`` (seconds)."""
    if not values:
        return {"count": 0, "mean": None, "p50": None, "p95": None, "p99": None}
    a = np.asarray(values, dtype=float)
    return {"count": len(values), "mean": round(float(a.mean()), 4),
            **{f"p{q}": round(float(np.percentile(a, q)), 4) for q in (50, 95, 99)}}


async def _session(env_id: str, avatar: OpenAIAvatar, seed: int, turns: int, out: dict) -> None:
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=seed)
    done = 0
    turn_start = None
    while done < turns:
        started = time.perf_counter()
        turn_start = turn_start or started
        try:
            action = await avatar.acall(obs, info)
        except EndpointError as exc:
            out["errors"] += 1
            out["last_error"] = str(exc)
            if out["errors"] > 3 * max(1, out["sessions"]):
                return
            turn_start = None
            continue
        out["calls"].append(time.perf_counter() - started)
        obs, _, terminated, truncated, info = env.step(action)
        if info["turn"]["kind"] == "reply":
            out["turns"].append(time.perf_counter() - turn_start)
            turn_start = None
            done += 1
            total = out["sessions"] * turns
            if out["progress"] and (sys.stderr.isatty() or len(out["turns"]) % max(1, total // 10) == 0):
                # redrawn in place on a terminal; in a log, a line every tenth of the run
                tty = sys.stderr.isatty()
                print(f"{chr(13) if tty else ''}[latency] {len(out['turns'])}/{total} turns, {out['errors']} errors",
                      end="" if tty else "\n", file=sys.stderr, flush=True)
        if terminated or truncated:
            return


async def measure(env_id: str, avatar: OpenAIAvatar, sessions: int = 4, concurrency: int = 4, turns: int = 10,
                  progress: bool = False) -> dict:
    """Run ``sessions`` sessions, ``concurrency`` at a time; returns the report
    (``last_error`` holds the last endpoint error, if any; ``progress`` prints a line on stderr)."""
    out = {"turns": [], "calls": [], "errors": 0, "sessions": sessions, "last_error": None, "progress": progress}
    gate = asyncio.Semaphore(concurrency)

    async def one(seed: int) -> None:
        async with gate:
            await _session(env_id, avatar, seed, turns, out)

    started = time.perf_counter()
    await asyncio.gather(*(one(seed) for seed in range(sessions)))
    wall = time.perf_counter() - started
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    budget = gym.make(env_id).unwrapped.world.spec.latency.budget_s
    acc = avatar.accounting
    return {
        "env": env_id, "model": avatar.endpoint.model, "sessions": sessions, "concurrency": concurrency,
        "turn": percentiles(out["turns"]), "call": percentiles(out["calls"]),
        "tokens_per_second": round(acc.completion_tokens / acc.seconds, 2) if acc.seconds else None,
        "budget_s": budget,
        "over_budget_share": round(sum(t > budget for t in out["turns"]) / len(out["turns"]), 4) if out["turns"] else None,
        "errors": out["errors"], "last_error": out["last_error"], "wall_s": round(wall, 3),
        "prompt_tokens": acc.prompt_tokens, "completion_tokens": acc.completion_tokens,
    }
