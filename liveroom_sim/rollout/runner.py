"""One rollout runner, three backends: ``serial``, ``async`` and ``ray``.

``run_rollouts(config)`` plays ``episodes`` episodes in groups of ``group_size`` (all
samples of a group share a seed), streams records to a JSONL file as groups complete
(see :mod:`liveroom_sim.rollout.records`), and returns a report. An episode that raises
or whose policy cannot go on is recorded with its error; a Ray worker that dies has its
episodes retried elsewhere; nothing takes the batch down.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from liveroom_sim import resolve_env_id
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.records import RecordFile, episode_record


@dataclass
class RolloutConfig:
    """What to roll out and how (see ``liveroom rollout --help``)."""

    env: str
    policy: PolicySpec
    episodes: int
    out: str | Path
    group_size: int = 1
    seed: int = 0
    backend: Literal["serial", "async", "ray"] = "serial"
    workers: int = 1
    in_flight: int = 32
    ray_address: str | None = None
    resume: bool = False
    normalize: Literal["std", "mean", "none"] = "std"
    eps: float = 1e-6
    record_messages: bool = True
    progress: bool = True
    retries: int = 2


@dataclass
class Job:
    group_id: int
    sample_index: int
    seed: int
    sample_seed: int
    attempts: int = 0


@dataclass
class Report:
    episodes: int = 0
    errors: int = 0
    truncated_by_policy: int = 0
    worker_restarts: int = 0
    skipped: int = 0
    seconds: float = 0.0
    returns: list[float] = field(default_factory=list)

    def as_dict(self) -> dict:
        mean = float(np.mean(self.returns)) if self.returns else None
        return {"episodes": self.episodes, "errors": self.errors, "truncated_by_policy": self.truncated_by_policy,
                "worker_restarts": self.worker_restarts, "skipped_by_resume": self.skipped,
                "seconds": round(self.seconds, 3), "episodes_per_second": round(self.episodes / self.seconds, 3)
                if self.seconds else None, "mean_return": None if mean is None else round(mean, 4)}


def jobs_for(config: RolloutConfig, records: RecordFile) -> tuple[list[Job], int]:
    """The episodes still to play (all, or those a resumed file lacks), and how many were skipped."""
    groups = math.ceil(config.episodes / config.group_size)
    todo, skipped = [], 0
    for g in range(groups):
        for i in range(config.group_size):
            if records.has(g, i):
                skipped += 1
                continue
            seed = config.seed + g
            sample_seed = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
            todo.append(Job(g, i, seed, sample_seed))
    return todo, skipped


def play_job(env_id: str, policy: PolicySpec, job: Job, record_messages: bool = True) -> dict:
    """Play one episode of ``job`` (sync); any exception becomes the record's error."""
    import gymnasium as gym

    from liveroom_sim.episode import play

    try:
        result = play(gym.make(env_id), policy.build(job.sample_seed), job.seed, record=record_messages)
        return episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(), result)
    except Exception as exc:  # a bad episode is data, not a crash
        return _failed(env_id, policy, job, exc)


async def aplay_job(env_id: str, policy: PolicySpec, job: Job, record_messages: bool = True) -> dict:
    """:func:`play_job` for asyncio (LLM policies are awaited)."""
    import gymnasium as gym

    from liveroom_sim.episode import aplay

    try:
        result = await aplay(gym.make(env_id), policy.build(job.sample_seed), job.seed, record=record_messages)
        return episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(), result)
    except Exception as exc:
        return _failed(env_id, policy, job, exc)


def _failed(env_id: str, policy: PolicySpec, job: Job, exc: Exception) -> dict:
    from liveroom_sim.llm.client import redact

    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    at = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(),
                          error=redact(f"{type(exc).__name__}: {exc}{at}")[:500])


class Progress:
    """A one-line progress bar on stderr: episodes done, episodes/s, mean return, errors."""

    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.started, self.last = total, enabled, time.perf_counter(), 0.0

    def update(self, report: Report, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not force and now - self.last < 0.5):
            return
        self.last = now
        rate = report.episodes / max(1e-9, now - self.started)
        mean = f"{np.mean(report.returns):.2f}" if report.returns else "-"
        print(f"\r[rollout] {report.episodes}/{self.total} episodes  {rate:.2f} eps/s  mean return {mean}  "
              f"errors {report.errors}", end="", file=sys.stderr, flush=True)

    def close(self, report: Report) -> None:
        if self.enabled:
            self.update(report, force=True)
            print(file=sys.stderr)


def run_rollouts(config: RolloutConfig) -> dict:
    """Play the rollouts of ``config``; returns the closing report (also the file's
    records are complete when this returns)."""
    env_id = resolve_env_id(config.env)
    records = RecordFile(config.out, resume=config.resume)
    todo, skipped = jobs_for(config, records)
    report = Report(skipped=skipped)
    progress = Progress(len(todo), config.progress)
    started = time.perf_counter()

    def finished(record: dict) -> None:
        report.episodes += 1
        if record["error"]:
            report.errors += 1
        else:
            report.returns.append(record["return"])
            report.truncated_by_policy += bool(record["reason"])
        records.add(record, config.group_size, config.normalize, config.eps)
        progress.update(report)

    try:
        if config.backend == "serial":
            for job in todo:
                finished(play_job(env_id, config.policy, job, config.record_messages))
        elif config.backend == "async":
            asyncio.run(_run_async(env_id, config, todo, finished))
        elif config.backend == "ray":
            from liveroom_sim.rollout.ray_backend import run_ray

            report.worker_restarts = run_ray(env_id, config, todo, finished)
        else:
            raise ValueError(f"unknown backend {config.backend!r}; expected serial, async or ray")
    finally:
        records.close()
        report.seconds = time.perf_counter() - started
        progress.close(report)
    return {"env": env_id, "backend": config.backend, "workers": config.workers, "out": str(config.out),
            **report.as_dict()}


async def _run_async(env_id: str, config: RolloutConfig, todo: list[Job], finished) -> None:
    gate = asyncio.Semaphore(max(1, config.in_flight))

    async def one(job: Job) -> None:
        async with gate:
            finished(await aplay_job(env_id, config.policy, job, config.record_messages))

    await asyncio.gather(*(one(job) for job in todo))
