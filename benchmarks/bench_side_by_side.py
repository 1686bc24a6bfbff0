"""LiveRoom env steps/s side by side with a peer's step loop, and where the step time goes.

Installs nothing. The scripted avatar plays each episode once to record its actions; the
timed runs replay them on the same seeds (the same trajectory), so the policy's time is
left out and only the env is timed (CPU time of this process: the env is single-threaded).

What it prints (one JSON object on stdout; progress on stderr):

- ``envs``: per env, steps/s (min and median over ``--repeats`` runs), p50 and p95 step
  time, mean reset time, and mean µs per step by episode window (steps 0-50, 50-100, ...,
  200-300, ...), with the viewers present in each window.
- ``peer`` (with ``--peer CMD``): the peer's steps/s over the same number of runs,
  *interleaved* with ours (ours, peer, ours, peer, ...), so both meet the same machine
  load; and the ratio ours/peer per run (min and median) and of the medians.
- ``crowd``: µs per step by crowd size (``viewers.initial`` = ``max_present`` = N, the
  spec's knobs) in two rooms: ``spec_mix`` (N viewers of the spec's persona mix, so the
  chat grows with the room) and ``quiet`` (N viewers of whom all but 10 only watch:
  the cost of a big room itself, at the chat volume of a small one).
- ``vector`` (with ``--vector``): ``SyncVectorEnv`` of 64 rooms (with the default info,
  and with ``info="lean"``), and the serial rollout runner, against one env (same work,
  steps/s per core).

The peer command is any shell command that runs the peer's step loop and prints a line
with a JSON object holding ``steps_per_second`` (the last such line counts; an optional
``steps_per_second_with_resets`` gets its own ratio, for a peer whose episodes are only a
few steps long, where resets weigh: ours includes resets, ~1 per 500 steps); it is run
once per repeat, in its own process, and should time its own loop the same way (replayed
actions or a template user, CPU time, no policy). EcomRLVE-GYM's, for example, as used
for issue 16 (its code stays outside this repository)::

    # once: the peer's env in its own venv, outside the repo (it needs Python 3.13; its
    # env runs on a synthetic catalog with debug embeddings: numpy, pydantic, pyyaml,
    # rich and requests suffice, no torch, no model)
    git clone https://github.com/owlgebra-ai/ShopRLVE-Gym /work/wt/peer/ShopRLVE-Gym
    python3.13 -m venv /work/wt/peer/.venv
    /work/wt/peer/.venv/bin/pip install numpy pydantic pyyaml rich requests
    # its step loop (a small script kept beside it, not in this repo): EcomRLVEEnv
    # (collection C8, difficulty 2) with its template user (the Ollama phrasing call made
    # to fail at once, so the simulator uses its templates), actions of its own
    # DummyModelFn recorded once and replayed; CPU time, printing
    # {"steps_per_second": <steps alone>, "steps_per_second_with_resets": ...}
    python benchmarks/bench_side_by_side.py --peer \
        "PYTHONPATH=/work/wt/peer/ShopRLVE-Gym/src /work/wt/peer/.venv/bin/python /work/wt/peer/peer_loop.py"

Run: ``python benchmarks/bench_side_by_side.py [--env LiveRoom-v0 ...] [--episodes 3]
[--repeats 5] [--peer CMD] [--crowd 10,50,100,250,500] [--vector]``

Timing figures on a shared machine are noisy: read the minimum and the median.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR

from bench_env import record


def say(message: str) -> None:
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def windows(n: int) -> list[tuple[int, int]]:
    """Episode windows: 0-50, 50-100, 100-150, 150-200, then 200-300, 300-400, ..."""
    out = [(a, a + 50) for a in range(0, min(n, 200), 50)]
    out += [(a, a + 100) for a in range(200, n, 100)]
    return out


def replay(env: LiveRoomEnv, plans: list[tuple[int, list[str]]], detail: bool = False) -> dict:
    """Replay ``plans`` once; steps/s by CPU time, and (``detail``) each step's CPU time."""
    steps = sum(len(a) for _, a in plans)
    per_step: list[list[int]] = []
    present: list[list[int]] = []
    resets: list[int] = []
    # CPU time of this thread per step: on a shared machine wall time counts the time
    # other processes ran (a step's p95 would be the scheduler's slice, not the env)
    clock = time.thread_time_ns
    t0 = time.process_time()
    for seed, actions in plans:
        r0 = clock()
        env.reset(seed=seed)
        resets.append(clock() - r0)
        if detail:
            times, crowd = [], []
            for a in actions:
                s0 = clock()
                env.step(a)
                times.append(clock() - s0)
                crowd.append(len(env.room.crowd.present))
            per_step.append(times)
            present.append(crowd)
        else:
            for a in actions:
                env.step(a)
    cpu = time.process_time() - t0
    return {"steps": steps, "steps_per_second": steps / cpu, "per_step_ns": per_step, "present": present,
            "reset_ns": resets}


def env_figures(env_id: str, runs: list[dict]) -> dict:
    rates = sorted(r["steps_per_second"] for r in runs)
    flat = sorted(t for r in runs for ep in r["per_step_ns"] for t in ep)
    resets = [t for r in runs for t in r["reset_ns"]]
    by_window = []
    longest = max(len(ep) for ep in runs[0]["per_step_ns"])
    for a, b in windows(longest):
        times = [t for r in runs for ep in r["per_step_ns"] for t in ep[a:b]]
        crowd = [c for r in runs for ep in r["present"] for c in ep[a:b]]
        if times:
            by_window.append({"steps": f"{a}-{b}", "us_per_step": round(statistics.fmean(times) / 1e3, 1),
                              "viewers_present": round(statistics.fmean(crowd), 1)})
    return {"env": env_id, "steps": runs[0]["steps"], "repeats": len(runs),
            "steps_per_second_min": round(rates[0]), "steps_per_second_median": round(statistics.median(rates)),
            "step_us_p50": round(flat[len(flat) // 2] / 1e3, 1), "step_us_p95": round(flat[int(len(flat) * 0.95)] / 1e3, 1),
            "reset_ms_median": round(statistics.median(resets) / 1e6, 3), "by_window": by_window}


def run_peer(command: str) -> dict:
    """The peer's JSON line: ``steps_per_second`` (and any other figures it prints)."""
    out = subprocess.run(command, shell=True, capture_output=True, text=True, check=True).stdout
    for line in reversed(out.strip().splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "steps_per_second" in data:
            return data
    raise SystemExit(f"the peer command printed no JSON line with steps_per_second: {shlex.quote(command)}")


def crowd_world(env_id: str, size: int, quiet: bool):
    """The env's world with ``size`` viewers present from the start and kept there
    (``quiet``: all but 10 of them only watch)."""
    world = load_spec(ENVS_DIR / f"{env_id}.yaml")
    viewers = world.spec.viewers
    mix, personas = dict(viewers.mix), dict(world.personas)
    arrivals = min(600.0, max(viewers.arrivals_per_min, size / 4))  # refill the room as viewers leave
    if quiet and size > 10:
        # watchers never speak and stay the whole stream: the room keeps the chat and the
        # arrivals of a room of ten, with N viewers present
        watcher = personas["lurker"].model_copy(update={"name": "watcher", "chat_rate_per_min": 0.0, "dwell_s": 1e6})
        personas["watcher"] = watcher
        total = sum(mix.values())
        mix = {k: w * 10 / total for k, w in mix.items()} | {"watcher": float(size - 10)}
        arrivals = viewers.arrivals_per_min
    config = viewers.model_copy(update={"initial": size, "max_present": size, "mix": mix, "arrivals_per_min": arrivals})
    spec = world.spec.model_copy(update={"viewers": config})
    return world.model_copy(update={"spec": spec, "personas": personas})


def crowd_figures(env_id: str, sizes: list[int], episodes: int, repeats: int) -> dict:
    out = {}
    for quiet in (False, True):
        rows = []
        for size in sizes:
            env = LiveRoomEnv(crowd_world(env_id, size, quiet))
            plans = [(seed, record(env, seed)) for seed in range(episodes)]
            runs = [replay(env, plans, detail=True) for _ in range(repeats)]
            messages = env.room.crowd.stats.messages
            times = [t for r in runs for ep in r["per_step_ns"] for t in ep]
            crowd = [c for r in runs for ep in r["present"] for c in ep]
            rows.append({"viewers": size, "viewers_present_mean": round(statistics.fmean(crowd), 1),
                         "us_per_step_mean": round(statistics.fmean(times) / 1e3, 1),
                         "us_per_step_median": round(statistics.median(times) / 1e3, 1),
                         "chat_messages_per_step": round(messages / len(plans[-1][1]), 2)})
            say(f"crowd {'quiet' if quiet else 'spec mix'} {size}: {rows[-1]}")
        out["quiet" if quiet else "spec_mix"] = rows
    return out


def vector_figures(env_id: str, episodes: int, repeats: int) -> dict:
    """SyncVectorEnv of 64 rooms and the serial runner, each against one env doing the same work."""
    import tempfile

    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    n = 64
    single = gym.make(env_id).unwrapped
    plans = [(seed, record(single, seed)) for seed in range(n)]
    horizon = min(len(a) for _, a in plans)  # no room ends: every vector step is a real step
    vec = gym.vector.SyncVectorEnv([lambda: gym.make(env_id) for _ in range(n)])
    lean = gym.vector.SyncVectorEnv([lambda: gym.make(env_id, info="lean") for _ in range(n)])
    one, many, many_lean = [], [], []
    for _ in range(repeats):
        t0 = time.process_time()
        for seed, actions in plans:
            single.reset(seed=seed)
            for a in actions[:horizon]:
                single.step(a)
        one.append(n * horizon / (time.process_time() - t0))
        for v, rates in ((vec, many), (lean, many_lean)):
            t0 = time.process_time()
            v.reset(seed=[s for s, _ in plans])
            for t in range(horizon):
                v.step([a[t] for _, a in plans])
            rates.append(n * horizon / (time.process_time() - t0))
        say(f"vector: one env {one[-1]:,.0f} steps/s, SyncVectorEnv(64) {many[-1]:,.0f} steps/s, "
            f"with info='lean' {many_lean[-1]:,.0f} steps/s")
    # The serial runner plays the scripted policy too: compare with a plain loop of the same
    # env and policy (policy time in both).
    loop, runner = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(repeats):
            env = gym.make(env_id)
            steps, t0 = 0, time.process_time()
            for seed in range(episodes):
                policy = ScriptedAvatar()
                obs, info = env.reset(seed=seed)
                while True:
                    obs, _, term, trunc, info = env.step(policy(obs, info))
                    steps += 1
                    if term or trunc:
                        break
            loop.append(steps / (time.process_time() - t0))
            out = Path(tmp) / f"r{r}.jsonl"
            t0 = time.process_time()
            run_rollouts(RolloutConfig(env=env_id, policy=PolicySpec(kind="scripted"), episodes=episodes, out=out,
                                       progress=False))
            cpu = time.process_time() - t0
            steps = sum(json.loads(line)["steps"] for line in out.read_text().splitlines() if '"steps"' in line)
            runner.append(steps / cpu)
            say(f"runner: plain loop {loop[-1]:,.0f} steps/s, serial runner {runner[-1]:,.0f} steps/s")
    med = statistics.median
    return {"sync_vector_64": {"one_env_steps_per_second_median": round(med(one)),
                               "vector_steps_per_second_median": round(med(many)),
                               "ratio_median": round(med(m / o for m, o in zip(many, one)), 3),
                               "lean_info_vector_steps_per_second_median": round(med(many_lean)),
                               "lean_info_ratio_median": round(med(m / o for m, o in zip(many_lean, one)), 3)},
            "serial_runner": {"plain_loop_steps_per_second_median": round(med(loop)),
                              "runner_steps_per_second_median": round(med(runner)),
                              "ratio_median": round(med(r / p for r, p in zip(runner, loop)), 3)}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", action="append", help="env id (repeatable; default LiveRoom-v0)")
    ap.add_argument("--episodes", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--peer", help="shell command running the peer's step loop (prints steps_per_second as JSON)")
    ap.add_argument("--crowd", default="10,50,100,250,500", help="crowd sizes, comma-separated ('' to skip)")
    ap.add_argument("--vector", action="store_true", help="also SyncVectorEnv(64) and the serial runner")
    args = ap.parse_args()
    env_ids = args.env or ["LiveRoom-v0"]
    envs, plans = {}, {}
    for env_id in env_ids:
        say(f"recording {args.episodes} scripted episodes of {env_id}")
        envs[env_id] = gym.make(env_id).unwrapped
        plans[env_id] = [(seed, record(envs[env_id], seed)) for seed in range(args.episodes)]
        replay(envs[env_id], plans[env_id])  # warm caches
    runs = {env_id: [] for env_id in env_ids}
    peer: list[float] = []
    peer_with_resets: list[float] = []
    for r in range(args.repeats):  # interleaved: every env, then the peer, per repeat
        for env_id in env_ids:
            runs[env_id].append(replay(envs[env_id], plans[env_id], detail=True))
            say(f"repeat {r + 1}/{args.repeats} {env_id}: {runs[env_id][-1]['steps_per_second']:,.0f} steps/s")
        if args.peer:
            figures = run_peer(args.peer)
            peer.append(float(figures["steps_per_second"]))
            if "steps_per_second_with_resets" in figures:
                peer_with_resets.append(float(figures["steps_per_second_with_resets"]))
            say(f"repeat {r + 1}/{args.repeats} peer: {peer[-1]:,.0f} steps/s")
    out: dict = {"envs": [env_figures(env_id, runs[env_id]) for env_id in env_ids]}
    if peer:
        ours = [x["steps_per_second"] for x in runs[env_ids[0]]]
        ratios = sorted(o / p for o, p in zip(ours, peer))
        out["peer"] = {"command": args.peer, "steps_per_second_min": round(min(peer)),
                       "steps_per_second_median": round(statistics.median(peer)), "ours": env_ids[0],
                       "ratio_per_repeat_min": round(ratios[0], 3), "ratio_per_repeat_median": round(statistics.median(ratios), 3),
                       "ratio_of_medians": round(statistics.median(ours) / statistics.median(peer), 3)}
        if peer_with_resets:  # a peer whose episodes are short: its resets weigh
            ratios = sorted(o / p for o, p in zip(ours, peer_with_resets))
            out["peer"] |= {"with_resets_steps_per_second_median": round(statistics.median(peer_with_resets)),
                            "with_resets_ratio_per_repeat_min": round(ratios[0], 3),
                            "with_resets_ratio_per_repeat_median": round(statistics.median(ratios), 3)}
    sizes = [int(s) for s in args.crowd.split(",") if s.strip()]
    if sizes:
        out["crowd"] = crowd_figures(env_ids[0], sizes, max(1, args.episodes // 2), max(1, args.repeats // 2))
    if args.vector:
        out["vector"] = vector_figures(env_ids[0], args.episodes, max(1, args.repeats // 2))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
