"""``liveroom eval`` throughput.

1. ``scripted``: the reference host over every case of all four suites in this process
   (one core); the figure is wall seconds (the goal: under 2 minutes).
2. ``llm``: an LLM policy against the local OpenAI-compatible test server (its own
   process) answering every call ``--latency`` seconds (200 ms) after it arrives, with
   ``--concurrency`` cases in flight (64). A case's turn is a chain of calls (a tool turn,
   then the reply), so the ideal is ``concurrency / (calls per case x latency)`` cases per
   second; the figure is the share of it reached.

Run: ``python benchmarks/bench_eval.py [scripted|llm|both] [--repeat N]`` (figures on stdout
as JSON lines; the machine is shared, so take the best of a few runs).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench_rollout import serving


def say(message: str) -> None:
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def scripted(limit: int | None) -> dict:
    from liveroom_sim.evals.cases import SUITES
    from liveroom_sim.evals.runner import EvalConfig, run_eval
    from liveroom_sim.rollout.policy_spec import PolicySpec

    with tempfile.TemporaryDirectory() as tmp:
        config = EvalConfig(SUITES, PolicySpec(kind="scripted"), Path(tmp), limit=limit)
        started = time.perf_counter()
        _, records = run_eval(config)
        wall = time.perf_counter() - started
    return {"policy": "scripted", "cases": len(records), "wall_s": round(wall, 2),
            "cases_per_second": round(len(records) / wall, 1)}


def llm(latency: float, concurrency: int, limit: int, responder: str, direct: bool = False) -> dict:
    from liveroom_sim.evals.cases import SUITES
    from liveroom_sim.evals.runner import EvalConfig, run_eval
    from liveroom_sim.rollout.policy_spec import PolicySpec

    with serving(latency, responder) as base_url:
        policy = PolicySpec(kind="openai", model="m", base_url=base_url, max_retries=0,
                            timeout_s=60, direct=direct)
        with tempfile.TemporaryDirectory() as tmp:
            config = EvalConfig(SUITES, policy, Path(tmp), concurrency=concurrency, limit=limit)
            started = time.perf_counter()
            _, records = run_eval(config)
            wall = time.perf_counter() - started
    samples = [s for r in records for s in r["samples"]]
    calls = sum(s.get("calls", 0) for s in samples)
    errored = sum(1 for r in records if r.get("error_kind") or any(s.get("error_kind") for s in r["samples"]))
    per_case = calls / max(1, len(records))
    ideal = concurrency / (per_case * latency) if per_case else 0.0
    rate = len(records) / wall
    return {"policy": f"openai ({responder} responder)", "client": "direct" if direct else "openai", "latency_s": latency, "concurrency": concurrency,
            "cases": len(records), "errored": errored, "calls": calls, "calls_per_case": round(per_case, 2),
            "wall_s": round(wall, 2), "cases_per_second": round(rate, 1), "ideal_cases_per_second": round(ideal, 1),
            "share_of_ideal": round(rate / ideal, 3) if ideal else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("which", nargs="?", default="both", choices=("scripted", "llm", "both"))
    ap.add_argument("--repeat", type=int, default=1, help="runs of each; every run is printed")
    ap.add_argument("--limit", type=int, default=None, help="scripted: cases per suite (default: all)")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--llm-limit", type=int, default=200, help="llm: cases per suite")
    ap.add_argument("--responder", default="scripted-avatar")
    ap.add_argument("--direct", action="store_true", help="llm: the lean direct client (Endpoint(direct=True))")
    args = ap.parse_args()
    for _ in range(args.repeat):
        if args.which in ("scripted", "both"):
            say("scripted over the suites")
            print(json.dumps({"scripted": scripted(args.limit)}), flush=True)
        if args.which in ("llm", "both"):
            say(f"llm: {args.llm_limit} cases per suite, {args.concurrency} in flight, {args.latency * 1000:.0f} ms a call")
            print(json.dumps({"llm": llm(args.latency, args.concurrency, args.llm_limit, args.responder,
                                               args.direct)}), flush=True)


if __name__ == "__main__":
    main()
