"""Env steps per second and memory per env, with deterministic viewers and scripted
actions, policy time excluded.

The scripted avatar plays each episode once to record its actions; the timed run
replays the same actions on the same seeds (same trajectory), so only the env is timed.

Run: ``python benchmarks/bench_env.py [--env LiveRoom-v0] [--episodes 5] [--repeats 5] [--instances 1000]``
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import tracemalloc
from pathlib import Path

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar


def say(message: str) -> None:
    """Progress on stderr (the figures alone go to stdout, as one JSON line)."""
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def record(env, seed: int) -> list[str]:
    """The scripted avatar's actions for one episode of ``env`` (replayed when timed)."""
    policy = ScriptedAvatar()
    obs, info = env.reset(seed=seed)
    actions = []
    while True:
        actions.append(policy(obs, info))
        obs, _, term, trunc, info = env.step(actions[-1])
        if term or trunc:
            return actions


def steps_per_second(env_id: str, episodes: int, repeats: int) -> dict:
    say(f"recording {episodes} scripted episodes of {env_id}")
    plans = [(seed, record(gym.make(env_id).unwrapped, seed)) for seed in range(episodes)]
    env = gym.make(env_id).unwrapped
    steps = sum(len(actions) for _, actions in plans)
    rates = []
    for _ in range(repeats):
        # CPU time of this process (the env is single-threaded); the machine's speed
        # varies from run to run, so the best and the median of several runs are shown.
        t0 = time.process_time()
        for seed, actions in plans:
            env.reset(seed=seed)
            for a in actions:
                env.step(a)
        rates.append(steps / (time.process_time() - t0))
        say(f"repeat {len(rates)}/{repeats}: {rates[-1]:,.0f} steps/s")
    rates.sort()
    return {"env": env_id, "episodes": episodes, "steps": steps, "repeats": repeats,
            "steps_per_second": round(rates[-1], 1), "steps_per_second_median": round(rates[len(rates) // 2], 1)}


def memory_per_env(env_id: str, instances: int) -> dict:
    gc.collect()
    rss0 = _rss_mib()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    envs = []
    say(f"memory: {instances} live envs")
    for i in range(instances):
        if i and i % 250 == 0:
            say(f"  {i}/{instances} envs made")
        env = gym.make(env_id).unwrapped
        env.reset(seed=i)
        envs.append(env)
    for i, env in enumerate(envs):  # live instances mid-stream, not freshly reset
        for _ in range(20):
            env.step(f"@nobody hello from env {i}")
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return {"instances": instances, "traced_mib": round(used / 2**20, 1), "mib_per_env": round(used / 2**20 / instances, 3),
            "rss_growth_mib": round(_rss_mib() - rss0, 1)}


def _rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="LiveRoom-v0")
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--instances", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    out = steps_per_second(args.env, args.episodes, args.repeats)
    out.update(memory_per_env(args.env, args.instances))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
