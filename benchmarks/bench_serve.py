"""``liveroom serve`` under load: 256 sessions held at once, step latency over the wire vs in process.

The server runs as its own process (``liveroom serve``), on this machine; the client is
OpenEnv's async WebSocket client (:class:`liveroom_sim.serve.client.LiveRoomClient`), one
per session, all connected at once. Each session plays its own seed (0..N-1) with the
scripted host's actions, recorded in process first, so both sides play the same rooms
with the same actions.

Measured, in rounds that alternate the two sides (the machine is shared and noisy):

- **in process**: ``env.step(action)`` of N Gymnasium envs held at once, stepped round
  robin (policy time excluded);
- **over the wire, one in flight**: the same steps as round trips through the N open
  sessions, round robin: the latency a trainer sees per step, client parsing included;
- **over the wire, all in flight** (last): every session steps at once, for the
  server's throughput and the latency under full load (connecting included).

CPU per step (the server's and the client's while stepping, against the in-process
side's) is also given: on a shared machine the latency is mostly waiting for a
core, the CPU is what the wire costs.

Memory per session is the server's resident memory with N sessions open and played,
less before any was opened, over N (and the same for N envs in process).

Run: ``python benchmarks/bench_serve.py [--sessions 256] [--steps 30] [--rounds 3] [--ray-address ADDR]``
Figures go to stdout as one JSON line; progress to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar


def say(message: str) -> None:
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def rss_mib(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MiB."""
    with open(f"/proc/{pid or os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_s(pid: int) -> float:
    """CPU time (user + system) a process has used, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentiles(samples: list[float]) -> dict:
    ms = sorted(s * 1e3 for s in samples)
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 3),
            "p90_ms": round(ms[int(0.90 * (len(ms) - 1))], 3), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3)}


def record_and_time(envs: list, steps: int, plans: list[list[str]] | None) -> tuple[list[list[str]], list[float]]:
    """Reset every env on its seed and step them round robin; the first call records the
    scripted host's actions, later ones replay them. Returns the actions and step times."""
    policy = ScriptedAvatar()
    seen = [env.reset(seed=i) for i, env in enumerate(envs)]
    actions = plans or [[] for _ in envs]
    times = []
    for t in range(steps):
        for i, env in enumerate(envs):
            if plans is None:
                actions[i].append(policy(*seen[i]))
            elif t >= len(actions[i]):
                continue
            t0 = time.perf_counter()
            obs, _, term, trunc, info = env.step(actions[i][t])
            times.append(time.perf_counter() - t0)
            seen[i] = (obs, info)
            if term or trunc:  # (not within a few dozen steps of a stream)
                raise RuntimeError("an episode ended inside the benchmark's steps: use fewer --steps")
    return actions, times


async def wire_round(clients: list, plans: list[list[str]], concurrent: bool, cpu: dict | None = None,
                     server_pid: int | None = None) -> list[float]:
    """Reset every session on its seed, then replay the plans; adds the server's and this
    process's CPU time spent stepping (resets excluded) to ``cpu``."""
    from liveroom_sim.serve.client import RoomAction

    await asyncio.gather(*(c.reset(seed=i) for i, c in enumerate(clients)))
    s0, c0 = (cpu_s(server_pid) if server_pid else 0.0), time.process_time()
    times = []

    async def one(client, action):
        t0 = time.perf_counter()
        await client.step(RoomAction(message=action))
        times.append(time.perf_counter() - t0)

    for t in range(len(plans[0])):
        if concurrent:
            await asyncio.gather(*(one(c, plans[i][t]) for i, c in enumerate(clients)))
        else:
            for i, c in enumerate(clients):
                await one(c, plans[i][t])
    if cpu is not None:
        cpu["server"] += cpu_s(server_pid) - s0
        cpu["client"] += time.process_time() - c0
    return times


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(env: str, sessions: int, ray_address: str | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "liveroom_sim.cli", "serve", "--env", env, "--port", str(port),
           "--max-sessions", str(sessions), "--log-level", "error"]
    if ray_address:
        cmd += ["--ray-address", ray_address]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as r:
                if json.load(r)["status"] == "healthy":
                    return server, url
        except OSError:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with {server.returncode}") from None
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("the server did not start within 180 s")


def metrics(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/metrics", timeout=10) as r:
        return json.load(r)


async def wire_pass(url: str, plans: list[list[str]], concurrent: bool, cpu: dict | None = None,
                    server_pid: int | None = None) -> tuple[list[float], dict]:
    """Open one session per plan (all at once), play the plans, close them; returns the step
    times and the server's metrics while every session was open."""
    from liveroom_sim.serve.client import LiveRoomClient

    clients = [LiveRoomClient(base_url=url, message_timeout_s=600) for _ in plans]
    await asyncio.gather(*(c.connect() for c in clients))
    try:
        times = await wire_round(clients, plans, concurrent, cpu, server_pid)
        return times, metrics(url)
    finally:
        await asyncio.gather(*(c.close() for c in clients))


async def warm_up(url: str) -> None:
    """Load the spec and build a first room in the server before its memory is measured."""
    from liveroom_sim.serve.client import LiveRoomClient

    async with LiveRoomClient(base_url=url) as warm:
        await warm.reset(seed=0)
    await asyncio.sleep(0.5)


def over_the_wire(url: str, server_pid: int, plans: list[list[str]], rounds: int, envs: list) -> dict:
    # The two sides alternate round by round; a round's sessions are opened for it and held
    # through it (this process's event loop must not stop answering the server's keep-alive
    # pings for long, so the in-process side runs while no session is open).
    asyncio.run(warm_up(url))
    rss_before = rss_mib(server_pid)
    inproc, wire, held, rss_after = [], [], 0, rss_before
    cpu = {"inproc": 0.0, "server": 0.0, "client": 0.0}
    for r in range(rounds):
        t0 = time.process_time()
        inproc += record_and_time(envs, len(plans[0]), plans)[1]
        cpu["inproc"] += time.process_time() - t0
        times, during = asyncio.run(wire_pass(url, plans, False, cpu, server_pid))
        wire += times
        held, rss_after = max(held, during["sessions"]), max(rss_after, rss_mib(server_pid))
        say(f"round {r + 1}/{rounds}: {during['sessions']} sessions held; in process p50 "
            f"{percentiles(inproc)['p50_ms']} ms, over the wire p50 {percentiles(wire)['p50_ms']} ms")
    t0 = time.perf_counter()
    loaded, served = asyncio.run(wire_pass(url, plans, concurrent=True))
    load_s = time.perf_counter() - t0
    return {"inproc": inproc, "wire": wire, "loaded": loaded, "load_s": load_s, "held": held, "cpu": cpu,
            "rss_before": rss_before, "rss_after": rss_after, "served": served}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="LiveRoom-v0")
    p.add_argument("--sessions", type=int, default=256)
    p.add_argument("--steps", type=int, default=30, help="steps per session per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ray-address", default=None, help="serve the rooms on this Ray cluster")
    args = p.parse_args()

    gc.collect()
    rss0 = rss_mib()
    envs = [gym.make(args.env) for _ in range(args.sessions)]
    say(f"recording the scripted host's actions: {args.sessions} rooms x {args.steps} steps")
    plans, _ = record_and_time(envs, args.steps, None)
    gc.collect()
    inproc_mib = (rss_mib() - rss0) / args.sessions
    say("starting the server")
    server, url = start_server(args.env, args.sessions, args.ray_address)
    try:
        out = over_the_wire(url, server.pid, plans, args.rounds, envs)
    finally:
        server.terminate()
        server.wait(timeout=30)
    inproc, wire, loaded = percentiles(out["inproc"]), percentiles(out["wire"]), percentiles(out["loaded"])
    figures = {
        "env": args.env, "sessions": args.sessions, "sessions_held": out["held"], "steps_per_session": args.steps,
        "rounds": args.rounds, "backend": "ray" if args.ray_address else "local", "cpus": os.cpu_count(),
        "in_process": inproc, "over_the_wire": wire,
        "p50_overhead_ms": round(wire["p50_ms"] - inproc["p50_ms"], 3),
        # CPU per step (the steps alone, resets and connecting excluded): what the wire
        # costs, whatever else runs on the machine (latency on a busy machine is mostly waiting).
        "cpu_ms_per_step": {"in_process": round(out["cpu"]["inproc"] / len(out["inproc"]) * 1e3, 3),
                            "server": round(out["cpu"]["server"] / len(out["wire"]) * 1e3, 3),
                            "client": round(out["cpu"]["client"] / len(out["wire"]) * 1e3, 3)},
        "load_average": os.getloadavg()[0],
        "all_in_flight": {**loaded, "steps_per_s": round(len(out["loaded"]) / out["load_s"], 1)},
        "memory_per_session_mib": round((out["rss_after"] - out["rss_before"]) / args.sessions, 3),
        "memory_per_env_in_process_mib": round(inproc_mib, 3),
        "server_errors": out["served"]["errors"], "server_crashes": out["served"]["crashes"],
    }
    say(f"p50 in process {inproc['p50_ms']} ms, over the wire {wire['p50_ms']} ms "
        f"(+{figures['p50_overhead_ms']} ms); p99 {inproc['p99_ms']} / {wire['p99_ms']} ms; "
        f"{figures['memory_per_session_mib']} MiB per session; {out['held']} sessions held")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
