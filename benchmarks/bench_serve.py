"""``liveroom serve`` under load: 256 sessions open at once, each stepped by its own client.

What is measured (the figures issue 29 asks for, defined so they can be checked):

- **Sessions open**: ``--sessions`` (256) OpenEnv WebSocket sessions, one
  :class:`~liveroom_sim.serve.client.LiveRoomClient` (OpenEnv's ``EnvClient``) each, all
  connected and reset before any step is timed, and held open through every pass.
- **Clients stepping at once** (``--concurrency``, 1, 8, 32, 256): that many client tasks
  step their sessions at the same time; each task steps its share of the sessions in turn
  (task ``k`` owns sessions ``k, k+c, k+2c, ...``), so every session is stepped by its own
  client and at most ``c`` steps are in flight.
- **Latency per step over the wire**: from the client's ``step`` call to its parsed
  answer (``p50``, ``p99``): what a trainer sees, serialisation and parsing included.
- **In process**: ``env.step`` of the same actions on the same seeds, ``--sessions``
  Gymnasium envs held at once in this process, stepped in turn (``p50``, ``p99``). The
  p50 overhead is the wire's p50 less this p50.
- **Throughput**: steps answered per second of wall time while the pass runs.
- **CPU per step**: the server's and the client's CPU time over a pass, per step (the
  in process side's beside it). On a shared machine latency is mostly waiting for a core;
  CPU per step is what the wire costs whatever else runs.
- **Memory per session**: the server's resident memory with every session open, reset and
  stepped, less its memory after a warm-up session (spec loaded, first room built and
  stepped), over the number of sessions; with ``--ray`` the room hosts' memory is added.

Each session plays its own seed (0..N-1) with the scripted host's actions, recorded in
process first. The passes interleave the in process side and the wire (``--rounds``
times per concurrency) because the machine is shared: both come from the same minutes.
The load average is reported beside every figure.

When the machine cannot hold the load: the server steps local rooms on one event loop
(one core), so ``c`` steps in flight queue behind each other, and a step's latency at
``c`` is at least about ``c`` x the server's CPU per step. ``saturation`` reports that
floor, and the number of cores the steps would need (``c`` x CPU per step / latency).

Run: ``python benchmarks/bench_serve.py [--sessions 256] [--steps 20] [--concurrency 1,8,32,256]
[--rounds 2] [--ray]``. ``--ray`` serves the rooms on Ray actors (``--ray-address``; the
benchmark starts a local Ray instance of ``--ray-cpus`` CPUs). Figures go to stdout as one
JSON line; progress and a table to stderr.
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


def load() -> float:
    return round(os.getloadavg()[0], 1)


def percentiles(samples: list[float]) -> dict:
    ms = sorted(s * 1e3 for s in samples)
    return {"n": len(ms), "p50_ms": round(statistics.median(ms), 3), "p99_ms": round(ms[int(0.99 * (len(ms) - 1))], 3)}


# ---------------------------------------------------------------- in process
def record(env_id: str, sessions: int, steps: int) -> list[list[str]]:
    """The scripted host's actions for seeds 0..sessions-1, ``steps`` each."""
    policy, plans = ScriptedAvatar(), []
    env = gym.make(env_id)
    for seed in range(sessions):
        obs, info = env.reset(seed=seed)
        plan = []
        for _ in range(steps):
            plan.append(policy(obs, info))
            obs, _, terminated, truncated, info = env.step(plan[-1])
            if terminated or truncated:
                raise RuntimeError("an episode ended inside the benchmark's steps: use fewer --steps")
        plans.append(plan)
    env.close()
    return plans


async def in_process(envs: list, plans: list[list[str]]) -> tuple[list[float], float]:
    """Reset every env on its seed, step them in turn with the plans; the step times and
    the CPU they took. Yields to the event loop between steps (not timed), so the open
    sessions' clients keep answering the server's keep-alive pings."""
    for seed, env in enumerate(envs):
        env.reset(seed=seed)
    times, cpu = [], 0.0
    for t in range(len(plans[0])):
        for i, env in enumerate(envs):
            c0, t0 = time.process_time(), time.perf_counter()
            env.step(plans[i][t])
            times.append(time.perf_counter() - t0)
            cpu += time.process_time() - c0
            await asyncio.sleep(0)
    return times, cpu


# ---------------------------------------------------------------- over the wire
async def wire_pass(clients: list, plans: list[list[str]], concurrency: int, server_pids: list[int]) -> dict:
    """Reset every session on its seed, then play the plans with ``concurrency`` clients
    stepping at once; the step times, wall time and CPU of the steps (resets excluded)."""
    from liveroom_sim.serve.client import RoomAction

    for seed, client in enumerate(clients):  # one at a time: a reset is tens of ms of the server's loop
        await client.reset(seed=seed)
    times: list[float] = []

    async def worker(k: int) -> None:
        mine = range(k, len(clients), concurrency)
        for t in range(len(plans[0])):
            for i in mine:
                t0 = time.perf_counter()
                await clients[i].step(RoomAction(message=plans[i][t]))
                times.append(time.perf_counter() - t0)

    s0, c0, w0 = sum(map(cpu_s, server_pids)), time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(k) for k in range(concurrency)))
    wall = time.perf_counter() - w0
    return {"times": times, "wall": wall, "server_cpu": sum(map(cpu_s, server_pids)) - s0,
            "client_cpu": time.process_time() - c0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.load(r)


def start_server(env: str, sessions: int, ray: dict | None) -> tuple[subprocess.Popen, str]:
    port = free_port()
    cmd = [sys.executable, "-m", "liveroom_sim.cli", "serve", "--env", env, "--port", str(port),
           "--max-sessions", str(sessions), "--log-level", "error"]
    if ray:
        cmd += ["--ray-address", ray["address"], "--ray-hosts", str(ray["hosts"]), "--ray-cpus", str(ray["cpus"])]
    server = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 300
    while time.time() < deadline:
        try:
            if get(f"{url}/health")["status"] == "healthy":
                return server, url
        except OSError:
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with {server.returncode}") from None
            time.sleep(0.5)
    server.kill()
    raise RuntimeError("the server did not start within 300 s")


def room_host_pids(url: str) -> list[int]:
    """The Ray room hosts' processes (``/health``), or none for local rooms."""
    backend = get(f"{url}/health")["backend"]
    return [h["pid"] for h in backend.get("hosts", []) if "pid" in h]


async def measure(url: str, server_pid: int, env_id: str, plans: list[list[str]], concurrency: list[int],
                  rounds: int) -> dict:
    from liveroom_sim.serve.client import LiveRoomClient, RoomAction

    # Warm-up: the spec, its rule books and a first room are built once per process, in
    # the server as in process; neither side's figures include that.
    async with LiveRoomClient(base_url=url, message_timeout_s=600) as warm:
        await warm.reset(seed=0)
        for action in plans[0]:
            await warm.step(RoomAction(message=action))
    await asyncio.sleep(0.5)
    hosts = room_host_pids(url)
    pids = [server_pid, *hosts]
    rss_before = sum(map(rss_mib, pids))
    envs = [gym.make(env_id) for _ in plans]
    await in_process(envs[:1], plans[:1])

    clients = [LiveRoomClient(base_url=url, message_timeout_s=600) for _ in plans]
    for client in clients:
        await client.connect()
    out: dict = {"rss_before_mib": rss_before, "passes": {}}
    try:
        for c in concurrency:
            inproc, inproc_cpu, wire = [], 0.0, []
            wall = server_cpu = client_cpu = 0.0
            loads = [load()]
            for _ in range(rounds):  # the two sides alternate: the same minutes of a shared machine
                times, cpu = await in_process(envs, plans)
                inproc += times
                inproc_cpu += cpu
                p = await wire_pass(clients, plans, c, pids)
                wire += p["times"]
                wall, server_cpu, client_cpu = wall + p["wall"], server_cpu + p["server_cpu"], client_cpu + p["client_cpu"]
                loads.append(load())
            if "rss_after_mib" not in out:
                out["rss_after_mib"] = sum(map(rss_mib, pids))
                out["sessions_held"] = get(f"{url}/metrics")["sessions"]
                out["room_hosts"] = [h.get("rooms") for h in get(f"{url}/health")["backend"].get("hosts", [])]
            a, b = percentiles(inproc), percentiles(wire)
            out["passes"][c] = {
                "in_process": a, "over_the_wire": b, "p50_overhead_ms": round(b["p50_ms"] - a["p50_ms"], 3),
                "steps_per_s": round(len(wire) / wall, 1),
                "cpu_ms_per_step": {"in_process": round(inproc_cpu / len(inproc) * 1e3, 3),
                                    "server": round(server_cpu / len(wire) * 1e3, 3),
                                    "client": round(client_cpu / len(wire) * 1e3, 3)},
                "load_average": [min(loads), max(loads)]}
            say(f"{c} stepping at once: in process p50 {a['p50_ms']} ms, over the wire p50 {b['p50_ms']} ms "
                f"p99 {b['p99_ms']} ms, {out['passes'][c]['steps_per_s']} steps/s (load {loads})")
        out["metrics"] = get(f"{url}/metrics")
    finally:
        for client in clients:
            await client.close()
    return out


def saturation(figures: dict, cores: int) -> dict:
    """At ``c`` steps in flight, the latency floor the server's CPU alone sets, and the cores
    the steps would need to keep the p50 within 2 ms of in process."""
    out = {}
    for c, p in figures["passes"].items():
        cpu_ms = p["cpu_ms_per_step"]["server"]
        budget_ms = p["in_process"]["p50_ms"] + 2.0
        out[c] = {"server_cpu_ms_per_step": cpu_ms,
                  "queue_floor_ms": round(c * cpu_ms / (1 if figures["backend"] == "local" else cores), 1),
                  "cores_needed_for_2ms": round(c * cpu_ms / budget_ms, 1), "cores": cores}
    return out


def start_ray(cpus: int) -> str:
    """A local Ray instance for the room hosts; its address."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    import ray

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    return ray.get_runtime_context().gcs_address


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--env", default="LiveRoom-v0")
    p.add_argument("--sessions", type=int, default=256)
    p.add_argument("--steps", type=int, default=20, help="steps per session per pass")
    p.add_argument("--concurrency", default="1,8,32,256", help="clients stepping at once, comma-separated")
    p.add_argument("--rounds", type=int, default=2, help="passes per concurrency (alternating with in process)")
    p.add_argument("--ray", action="store_true", help="serve the rooms on Ray actors")
    p.add_argument("--ray-address", default=None, help="an existing Ray cluster (default: start a local one)")
    p.add_argument("--ray-cpus", type=int, default=2, help="CPUs of the local Ray instance")
    p.add_argument("--ray-hosts", type=int, default=2, help="room-host actors")
    args = p.parse_args()
    concurrency = [int(c) for c in args.concurrency.split(",")]
    if max(concurrency) > args.sessions:
        p.error("--concurrency cannot exceed --sessions")

    say(f"recording the scripted host's actions: {args.sessions} rooms x {args.steps} steps")
    plans = record(args.env, args.sessions, args.steps)
    gc.collect()
    rss0 = rss_mib()
    ray = None
    if args.ray:
        ray = {"address": args.ray_address or start_ray(args.ray_cpus), "hosts": args.ray_hosts,
               "cpus": max(0.25, args.ray_cpus / args.ray_hosts / 2)}
    say(f"starting the server (load {load()})")
    server, url = start_server(args.env, args.sessions, ray)
    try:
        out = asyncio.run(measure(url, server.pid, args.env, plans, concurrency, args.rounds))
    finally:
        server.terminate()
        server.wait(timeout=60)
    figures = {
        "env": args.env, "sessions": args.sessions, "sessions_held": out["sessions_held"],
        "steps_per_session": args.steps, "rounds": args.rounds, "backend": "ray" if ray else "local",
        "room_hosts_rooms": out["room_hosts"], "cpus": os.cpu_count(), "passes": out["passes"],
        "memory_per_session_mib": round((out["rss_after_mib"] - out["rss_before_mib"]) / args.sessions, 3),
        "memory_per_env_in_process_mib": round((rss_mib() - rss0) / args.sessions, 3),
        "server_errors": out["metrics"]["errors"], "server_crashes": out["metrics"]["crashes"]}
    figures["saturation"] = saturation(figures, args.ray_cpus if ray else 1)
    say(f"{out['sessions_held']} sessions held; {figures['memory_per_session_mib']} MiB per session "
        f"(in process {figures['memory_per_env_in_process_mib']} MiB per env)")
    say("| at once | in process p50 / p99 | wire p50 / p99 | p50 overhead | steps/s | CPU/step server + client "
        "(in process) | load |")
    for c, q in out["passes"].items():
        a, b, cpu = q["in_process"], q["over_the_wire"], q["cpu_ms_per_step"]
        say(f"| {c} | {a['p50_ms']} / {a['p99_ms']} ms | {b['p50_ms']} / {b['p99_ms']} ms | {q['p50_overhead_ms']} ms "
            f"| {q['steps_per_s']} | {cpu['server']} + {cpu['client']} ({cpu['in_process']}) ms "
            f"| {q['load_average'][0]}-{q['load_average'][1]} |")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
