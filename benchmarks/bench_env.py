"""Env steps per second and memory per env, with deterministic viewers and scripted
actions, policy time excluded.

The scripted avatar plays each episode once to record its actions; the timed run
replays the same actions on the same seeds (same trajectory), so only the env is timed.

Run: ``python benchmarks/bench_env.py [--env LiveRoom-v0] [--episodes 5] [--instances 1000]``
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar


def record(env_id: str, seed: int) -> list[str]:
    env = gym.make(env_id).unwrapped
    policy = ScriptedAvatar()
    obs, info = env.reset(seed=seed)
    actions = []
    while True:
        actions.append(policy(obs, info))
        obs, _, term, trunc, info = env.step(actions[-1])
        if term or trunc:
            return actions


def steps_per_second(env_id: str, episodes: int) -> dict:
    plans = [(seed, record(env_id, seed)) for seed in range(episodes)]
    env = gym.make(env_id).unwrapped
    steps, t0 = 0, time.perf_counter()
    for seed, actions in plans:
        env.reset(seed=seed)
        for a in actions:
            env.step(a)
        steps += len(actions)
    dt = time.perf_counter() - t0
    return {"env": env_id, "episodes": episodes, "steps": steps, "seconds": round(dt, 3),
            "steps_per_second": round(steps / dt, 1)}


def memory_per_env(env_id: str, instances: int) -> dict:
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    envs = []
    for i in range(instances):
        env = gym.make(env_id).unwrapped
        env.reset(seed=i)
        envs.append(env)
    for i, env in enumerate(envs):  # live instances mid-stream, not freshly reset
        for _ in range(20):
            env.step(f"@nobody hello from env {i}")
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {"instances": instances, "total_mib": round(used / 2**20, 1), "mib_per_env": round(used / 2**20 / instances, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="LiveRoom-v0")
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--instances", type=int, default=1000)
    args = ap.parse_args()
    out = steps_per_second(args.env, args.episodes)
    out.update(memory_per_env(args.env, args.instances))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
