"""What the rollout backends share: the run's settings, one episode to play, the queue of
episodes and playing one (sync or async) into its record."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from liveroom_sim.rollout.judging import EpisodeJudge
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.records import episode_record


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
    force: bool = False
    patience_s: float | None = None
    on_infra_failure: Literal["rerun", "drop"] = "rerun"
    infra_retries: int = 1
    judge: tuple = ()  # judge Endpoints (1 to 3): their vote is applied to each record (rollout.judging)
    judge_policy: str = "stricter"

    def judge_service(self):
        """The judge service of this run's settings (``None`` without a judge)."""
        if not self.judge:
            return None
        from liveroom_sim.rewards.judge.service import JudgeService

        return JudgeService(self.judge, self.judge_policy, max_in_flight=max(64, self.in_flight))


@dataclass
class Job:
    group_id: int
    sample_index: int
    seed: int
    sample_seed: int
    attempts: int = 0
    infra_attempts: int = 0


def play_job(env_id: str, policy: PolicySpec, job: Job, record_messages: bool = True,
             patience_s: float | None = None, judge=None) -> dict:
    """Play one episode of ``job`` (sync); any exception becomes the record's error.
    With a ``judge`` (a :class:`~liveroom_sim.rewards.judge.service.JudgeService`), its
    votes are applied to the record (:mod:`liveroom_sim.rollout.judging`)."""
    import gymnasium as gym

    from liveroom_sim.episode import play

    try:
        env = gym.make(env_id)
        judging = EpisodeJudge(env, judge) if judge is not None else None
        result = play(env, policy.build(job.sample_seed), job.seed, record=record_messages,
                      patience_s=patience_s, on_step=judging and judging.on_step)
        record = episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(), result)
        return judging.settle_now(record) if judging else record
    except Exception as exc:  # noqa: BLE001 - a bad episode is data, not a crash
        return _failed(env_id, policy, job, exc)


async def aplay_job(env_id: str, policy: PolicySpec, job: Job, record_messages: bool = True,
                    patience_s: float | None = None, judge=None) -> dict:
    """:func:`play_job` for asyncio (LLM policies and the judge's votes are awaited)."""
    import gymnasium as gym

    from liveroom_sim.episode import aplay

    try:
        env = gym.make(env_id)
        judging = EpisodeJudge(env, judge) if judge is not None else None
        result = await aplay(env, policy.build(job.sample_seed), job.seed, record=record_messages,
                             patience_s=patience_s, on_step=judging and judging.on_step)
        record = episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(), result)
        return await judging.settle(record) if judging else record
    except Exception as exc:  # noqa: BLE001
        return _failed(env_id, policy, job, exc)


def _failed(env_id: str, policy: PolicySpec, job: Job, exc: Exception) -> dict:
    from liveroom_sim.episode import describe_exception

    return episode_record(job.group_id, job.sample_index, job.seed, env_id, policy.describe(),
                          error=describe_exception(exc))


class _Queue:
    """Jobs to play: the (lazy) plan, then those to play again."""

    def __init__(self, jobs: Iterator[Job]):
        self.jobs, self.retry = jobs, deque()

    def next(self) -> Job | None:
        if self.retry:
            return self.retry.popleft()
        return next(self.jobs, None)

    def again(self, job: Job | None) -> None:
        if job is not None:
            self.retry.append(job)
