"""Token-level records: their size per episode, and rollout throughput with tokens on and off.

Rolls out the scripted host through ``OpenAIAvatar`` against the test server (which
answers with token ids and logprobs from its toy tokenizer when asked), with the async
backend, once with ``tokens=False`` and once with ``tokens=True``, and reports the
episodes and steps per second, the record bytes per episode and the token ids and
training rows per episode. The server runs in its own process (its tokenising is the
engine's work, not the rollout's), on the same machine: the figures compare the two
settings, and they are noisy on a shared machine.

Run: ``python benchmarks/bench_tokens.py [--env LiveRoom-v0] [--episodes 8] [--in-flight 8]``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.rollout.tokens import record_size


@contextlib.contextmanager
def server():
    """The test server with the scripted host, in a process of its own; yields its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "liveroom_sim.testing.openai_server", "--port", str(port),
                             "--responder", "scripted-avatar"], stdout=subprocess.PIPE, text=True)
    try:
        proc.stdout.readline()  # "Serving ... at <url>"
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait()


def run(env: str, episodes: int, in_flight: int, tokens: bool) -> dict:
    with server() as base_url, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        spec = PolicySpec(kind="openai", model="m", base_url=base_url, direct=True, tokens=tokens)
        started = time.perf_counter()
        run_rollouts(RolloutConfig(env=env, policy=spec, episodes=episodes, group_size=1, out=out, progress=False,
                                   backend="async", in_flight=in_flight))
        seconds = time.perf_counter() - started
        records = [json.loads(line) for line in out.open(encoding="utf-8")]
    steps = sum(r["steps"] for r in records)
    sizes = [record_size(r) for r in records]
    figures = {"tokens": tokens, "episodes": len(records), "seconds": round(seconds, 2),
               "episodes_per_s": round(len(records) / seconds, 3), "steps_per_s": round(steps / seconds, 1),
               "mean_steps": statistics.mean(r["steps"] for r in records),
               "record_mb": round(statistics.mean(s["json_bytes"] for s in sizes) / 1e6, 3)}
    if tokens:
        figures.update(ids_per_episode=round(statistics.mean(s["ids_stored"] for s in sizes)),
                       rows_per_episode=round(statistics.mean(s["rows"] for s in sizes), 1),
                       extending_steps=round(statistics.mean(
                           sum(bool(t and t["extends"]) for t in r["tokens"]) for r in records), 1))
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--env", default="LiveRoom-v0")
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--in-flight", type=int, default=8)
    args = ap.parse_args()
    for tokens in (False, True):
        print(json.dumps(run(args.env, args.episodes, args.in_flight, tokens)), flush=True)


if __name__ == "__main__":
    main()
