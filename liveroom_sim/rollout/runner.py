"""One rollout runner, three backends: ``serial``, ``async`` and ``ray``.

``run_rollouts(config)`` plays ``episodes`` episodes in groups of ``group_size`` (all
samples of a group share a seed), streams records to a JSONL file as groups complete
(see :mod:`liveroom_sim.rollout.records`), and returns a report. Nothing takes the batch
down: an episode that raises is recorded with its error and its transcript so far; an
outage is waited out for ``patience_s`` per turn (see :mod:`liveroom_sim.episode`), and
an episode it still defeats is an infrastructure failure, kept out of its group, which
is played again (``on_infra_failure="rerun"``, up to ``infra_retries`` times) or left for
``--resume`` (``"drop"``, or when the retries run out); a Ray worker that dies has its
episodes played again elsewhere. The driver holds only the groups still in play.
"""

from __future__ import annotations

import asyncio
import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from liveroom_sim import resolve_env_id
from liveroom_sim.rollout.jobs import Job, RolloutConfig, _Queue, aplay_job, play_job  # noqa: F401 (RolloutConfig: public here too)
from liveroom_sim.rollout.records import RecordFile, episode_record


@dataclass
class Report:
    episodes: int = 0
    errors: int = 0
    truncated_by_policy: int = 0
    infra_failures: int = 0
    replayed: int = 0
    steps: int = 0
    policy_faults: int = 0
    worker_restarts: int = 0
    skipped: int = 0
    seconds: float = 0.0
    return_sum: float = 0.0
    scored: int = 0
    incomplete_groups: int = 0
    torn: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        mean = self.return_sum / self.scored if self.scored else None
        return {"episodes": self.episodes, "errors": self.errors, "truncated_by_policy": self.truncated_by_policy,
                "infra_failures": self.infra_failures, "played_again": self.replayed,
                "incomplete_groups": self.incomplete_groups, "steps": self.steps, "policy_faults": self.policy_faults, "worker_restarts": self.worker_restarts,
                "skipped_by_resume": self.skipped, **self.torn,
                "seconds": round(self.seconds, 3), "episodes_per_second": round(self.episodes / self.seconds, 3)
                if self.seconds else None, "mean_return": None if mean is None else round(mean, 4)}


def jobs_for(config: RolloutConfig, records: RecordFile) -> tuple[Iterator[Job], int, int]:
    """The episodes still to play (all, or those a resumed file lacks; made as they are
    needed), how many there are, and how many were skipped."""
    groups = math.ceil(config.episodes / config.group_size)
    skipped = sum(records.has(g, i) for g in range(groups) for i in range(config.group_size))

    def jobs() -> Iterator[Job]:
        for g in range(groups):
            for i in range(config.group_size):
                if not records.has(g, i):
                    seed = config.seed + g
                    yield Job(g, i, seed, int(np.random.SeedSequence([seed, i]).generate_state(1)[0]))

    return jobs(), groups * config.group_size - skipped, skipped


class Progress:
    """Progress on stderr: episodes done of those to play, episodes/s, mean return, errors,
    and episodes played again after an endpoint failure. On a terminal one line is redrawn
    in place; in a log (stderr not a terminal) a line is added every ``log_every_s``
    seconds, never a carriage return."""

    def __init__(self, total: int, enabled: bool, log_every_s: float = 10.0):
        self.total, self.enabled, self.started, self.last = total, enabled, time.perf_counter(), 0.0
        self.tty = enabled and sys.stderr.isatty()
        self.every, self.shown = (0.5 if self.tty else log_every_s), ""

    def update(self, report: Report, force: bool = False) -> None:
        now = time.perf_counter()
        if not self.enabled or (not force and now - self.last < self.every):
            return
        self.last = now
        rate = report.episodes / max(1e-9, now - self.started)
        mean = f"{report.return_sum / report.scored:.2f}" if report.scored else "-"
        again = f"  played again {report.replayed}" if report.replayed else ""
        line = (f"[rollout] {report.episodes}/{self.total} episodes  {rate:.2f} eps/s  mean return {mean}  "
                f"errors {report.errors}{again}")
        if self.tty:
            print("\r" + line, end="", file=sys.stderr, flush=True)
        elif line.split("  ")[0] != self.shown.split("  ")[0]:  # a log gets a line when the count moved
            print(line, file=sys.stderr, flush=True)
        self.shown = line

    def close(self, report: Report) -> None:
        if self.enabled:
            self.update(report, force=True)
            if self.tty:
                print(file=sys.stderr)


def run_rollouts(config: RolloutConfig) -> dict:
    """Play the rollouts of ``config``; returns the closing report (also the file's
    records are complete when this returns)."""
    env_id = resolve_env_id(config.env)
    from liveroom_sim.provenance import env_provenance

    origin = env_provenance(env_id)
    settings = {"env": env_id, "policy": episode_record(0, 0, 0, env_id, config.policy.describe())["policy"],
                "group_size": config.group_size, "seed": config.seed, "normalize": config.normalize,
                "eps": config.eps, "provenance": origin}
    records = RecordFile(config.out, settings, resume=config.resume, force=config.force)
    todo, count, skipped = jobs_for(config, records)
    report = Report(skipped=skipped, torn=records.resumed.as_dict() if config.resume else {})
    progress = Progress(count, config.progress)
    started = time.perf_counter()

    def finished(record: dict, job: Job) -> Job | None:
        """Keep ``record``; returns ``job`` when it must be played again."""
        report.policy_faults += record.get("policy_faults") or 0
        report.steps += record.get("steps") or 0
        if record.get("infra"):
            report.infra_failures += 1
            records.failed(record)
            job.infra_attempts += 1
            if config.on_infra_failure == "rerun" and job.infra_attempts <= config.infra_retries:
                report.replayed += 1  # not done yet: the progress counts it when it ends for good
                progress.update(report)
                return job
        report.episodes += 1
        if record.get("infra"):
            if job.group_id not in records.dropped:
                records.drop(job.group_id)
                report.incomplete_groups += 1
            return None
        if record["error"]:
            report.errors += 1
        else:
            report.return_sum += record["return"]
            report.scored += 1
            report.truncated_by_policy += bool(record["reason"])
        records.add(record)
        progress.update(report)
        return None

    judge = config.judge_service() if config.backend != "ray" else None  # Ray workers build their own
    try:
        if config.backend == "serial":
            queue = _Queue(todo)
            while (job := queue.next()) is not None:
                queue.again(finished(play_job(env_id, config.policy, job, config.record_messages,
                                              config.patience_s, judge), job))
        elif config.backend == "async":
            asyncio.run(_run_async(env_id, config, _Queue(todo), finished, judge))
        elif config.backend == "ray":
            from liveroom_sim.rollout.ray_backend import run_ray

            report.worker_restarts = run_ray(env_id, config, _Queue(todo), finished)
        else:
            raise ValueError(f"unknown backend {config.backend!r}; expected serial, async or ray")
    finally:
        records.close()
        report.seconds = time.perf_counter() - started
        progress.close(report)
    workers = config.workers if config.backend == "ray" else 1  # serial and async run in this process
    judged = {"judge": {**judge.describe(), **judge.stats}} if judge is not None else {}
    return {"env": env_id, "backend": config.backend, "workers": workers, "out": str(config.out),
            **report.as_dict(), **judged, "provenance": origin}


async def _run_async(env_id: str, config: RolloutConfig, queue: _Queue,
                     finished: Callable[[dict, Job], Job | None], judge=None) -> None:
    running: dict[asyncio.Task, Job] = {}
    while True:
        while len(running) < max(1, config.in_flight) and (job := queue.next()) is not None:
            task = asyncio.ensure_future(aplay_job(env_id, config.policy, job, config.record_messages,
                                                   config.patience_s, judge))
            running[task] = job
        if not running:
            return
        done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            queue.again(finished(task.result(), running.pop(task)))
