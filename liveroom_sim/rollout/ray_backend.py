"""The Ray backend: async actors, each with many episodes in flight.

Joins ``ray_address`` (or ``RAY_ADDRESS``) when given, else starts a local Ray. Policies
are built on the workers from their spec. A worker that dies is replaced and its
episodes are played again elsewhere (up to ``retries`` times each); an episode that
still cannot be played is an infrastructure failure (kept out of its group, see
:mod:`liveroom_sim.rollout.runner`).
"""

from __future__ import annotations

import os

from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.jobs import Job, RolloutConfig, _Queue, aplay_job
from liveroom_sim.rollout.records import episode_record


class RolloutWorker:
    """One Ray actor: registers the env (custom specs too) and plays episodes."""

    def __init__(self, env_id: str, spec_path: str | None, judge: RolloutConfig | None = None):
        import liveroom_sim

        if spec_path:
            liveroom_sim.register_spec(spec_path, env_id)
        self.judge = judge.judge_service() if judge is not None else None  # one per worker: its cache and calls

    async def play(self, env_id: str, policy_json: str, job: dict, record_messages: bool, patience_s: float | None) -> dict:
        record = await aplay_job(env_id, PolicySpec.model_validate_json(policy_json), Job(**job), record_messages,
                                 patience_s, self.judge)
        record["worker_pid"] = os.getpid()
        return record


def ensure_ray(address: str | None = None, num_cpus: int | None = None):
    """Ray, initialised: joins ``address`` / ``RAY_ADDRESS`` or starts a local instance."""
    import ray

    if not ray.is_initialized():
        os.environ.setdefault("RAY_AUTH_MODE", "disabled")
        address = address or os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False)
    return ray


def run_ray(env_id: str, config: RolloutConfig, queue: _Queue, finished) -> int:
    """Play the jobs of ``queue`` on ``config.workers`` actors; ``finished(record, job)``
    returns a job to play again. Returns how many workers were replaced."""
    import gymnasium as gym

    ray = ensure_ray(config.ray_address, num_cpus=max(2, config.workers))
    spec_path = gym.registry[env_id].kwargs.get("spec")
    actor = ray.remote(max_concurrency=max(1, config.in_flight), num_cpus=1)(RolloutWorker)
    judge = config if config.judge else None
    spawn = lambda: actor.remote(env_id, spec_path, judge)  # noqa: E731
    workers = [spawn() for _ in range(max(1, config.workers))]
    load = [0] * len(workers)
    policy_json = config.policy.model_dump_json()
    pending, restarts = {}, 0
    window = len(workers) * max(1, config.in_flight)

    def submit(job: Job) -> None:
        w = min(range(len(workers)), key=load.__getitem__)
        ref = workers[w].play.remote(env_id, policy_json, vars(job), config.record_messages, config.patience_s)
        pending[ref] = (job, w)
        load[w] += 1

    while True:
        while len(pending) < window and (job := queue.next()) is not None:
            submit(job)
        if not pending:
            break
        ready, _ = ray.wait(list(pending), num_returns=1)
        ref = ready[0]
        job, w = pending.pop(ref)
        load[w] -= 1
        try:
            record = ray.get(ref)
        except ray.exceptions.RayActorError:
            # The worker died (killed, out of memory, node lost): replace it once, replay the job.
            restarts += _replace(ray, workers, w, spawn)
            job.attempts += 1
            if job.attempts <= config.retries:
                queue.again(job)
                continue
            record = episode_record(job.group_id, job.sample_index, job.seed, env_id, config.policy.describe(),
                                    error=f"worker died {job.attempts} times while playing this episode", infra=True)
        except ray.exceptions.RayError as exc:
            record = episode_record(job.group_id, job.sample_index, job.seed, env_id, config.policy.describe(),
                                    error=f"{type(exc).__name__}: {str(exc)[:300]}", infra=True)
        queue.again(finished(record, job))
    for w in workers:
        ray.kill(w)
    return restarts


def _replace(ray, workers, w, spawn) -> int:
    """Replace worker ``w`` unless that was done already for this death."""
    try:
        ray.get(workers[w].__ray_ready__.remote(), timeout=5)
        return 0
    except Exception:
        workers[w] = spawn()
        return 1
