"""Rollout throughput.

1. ``llm``: episodes against the local OpenAI-compatible test server (run in its own
   process) answering every call ``--latency`` seconds (200 ms by default) after it
   arrives, with ``--in-flight`` episodes in flight in one asyncio process (or split over
   Ray workers with ``--backend ray``). Ideal throughput is ``in_flight / latency`` calls
   per second; the figure is the share of it reached, once through the openai client and
   once with ``Endpoint(direct=True)`` (``liveroom rollout --direct``).
2. ``ray``: the scripted policy on 1 and on 2 Ray workers; the figure is the speed-up.

Run: ``python benchmarks/bench_rollout.py [llm|ray|both]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TINY = str(ROOT / "tests" / "fixtures" / "tiny" / "tiny-v0.yaml")


def say(message: str) -> None:
    """Progress on stderr (the figures alone go to stdout, as one JSON line)."""
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(latency: float, responder: str):
    """The local test server in a process of its own (so it shares no interpreter with
    the client), answering each call ``latency`` seconds after it arrives; yields its
    base URL and stops it on exit."""
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "liveroom_sim.testing.openai_server", "--port", str(port),
                               "--latency", str(latency), "--responder", responder],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait()


def llm(latency: float, in_flight: int, episodes: int, responder: str = "scripted-avatar", backend: str = "async",
        workers: int = 1, direct: bool = False) -> dict:
    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    say(f"llm: {episodes} episodes, {in_flight} in flight, {latency * 1000:.0f} ms per call, "
        f"{'direct' if direct else 'openai'} client, backend {backend}")
    with serving(latency, responder) as base_url:
        policy = PolicySpec(kind="openai", model="m", base_url=base_url, max_retries=0, timeout_s=60,
                            direct=direct)
        with tempfile.TemporaryDirectory() as tmp:
            config = RolloutConfig(env=TINY, policy=policy, episodes=episodes, out=Path(tmp) / "r.jsonl",
                                   backend=backend, workers=workers, in_flight=in_flight // workers,
                                   record_messages=False, progress=True)
            started = time.perf_counter()
            report = run_rollouts(config)
            wall = time.perf_counter() - started
            with open(Path(tmp) / "r.jsonl") as f:
                rows = [json.loads(line) for line in f]
    calls = sum(r["accounting"].get("calls", 0) for r in rows)
    ideal = in_flight / latency
    return {"client": "direct" if direct else "openai", "backend": backend, "workers": workers, "responder": responder, "latency_s": latency, "in_flight": in_flight, "episodes": report["episodes"], "errors": report["errors"],
            "calls": calls, "wall_s": round(wall, 2), "calls_per_second": round(calls / wall, 1),
            "ideal_calls_per_second": ideal, "share_of_ideal": round(calls / wall / ideal, 3)}


def ray_scaling(episodes: int) -> dict:
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.ray_backend import ensure_ray
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    ensure_ray(num_cpus=2)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2, 1, 2):  # twice each, best kept: the machine's speed varies
            config = RolloutConfig(env="LiveRoom-v0", policy=PolicySpec(kind="scripted"), episodes=episodes,
                                   out=Path(tmp) / f"r{workers}.jsonl", backend="ray", workers=workers,
                                   in_flight=4, record_messages=False, progress=True, force=True)
            say(f"ray: {episodes} scripted episodes on {workers} worker(s)")
            report = run_rollouts(config)
            out[workers] = max(out.get(workers, 0.0), report["episodes_per_second"])
    return {"episodes": episodes, "eps_per_second_1_worker": out[1], "eps_per_second_2_workers": out[2],
            "speedup": round(out[2] / out[1], 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="?", default="both", choices=("llm", "ray", "both"))
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--in-flight", type=int, default=256)
    ap.add_argument("--episodes", type=int, default=512)
    ap.add_argument("--ray-episodes", type=int, default=48)
    ap.add_argument("--backend", default="async", choices=("async", "ray"), help="for llm: ray splits --in-flight over --workers")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--client", choices=("openai", "direct", "both"), default="both",
                    help="for llm: the openai client, the direct client (--direct), or both")
    ap.add_argument("--responder", default="scripted-avatar", help="the test server's responder (fixed is cheapest)")
    args = ap.parse_args()
    if args.which in ("llm", "both"):
        for client in ("openai", "direct") if args.client == "both" else (args.client,):
            figures = llm(args.latency, args.in_flight, args.episodes, args.responder, args.backend, args.workers,
                          direct=client == "direct")
            print(json.dumps({"llm": figures}), flush=True)
    if args.which in ("ray", "both"):
        print(json.dumps({"ray": ray_scaling(args.ray_episodes)}), flush=True)


if __name__ == "__main__":
    main()
