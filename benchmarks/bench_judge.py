"""Rollout throughput with the judge tier on, against a judge that takes 200 ms a call.

The policy is the test server's ``scripted-avatar`` answering every call ``--latency``
seconds after it arrives (200 ms), in a process of its own; the judge is a second test
server, ``--responder judge`` (the scripted judge, ``liveroom_sim.testing.judge``),
answering every call ``--judge-latency`` seconds after it arrives (200 ms), in a third.
``--in-flight`` episodes (256) play at once on the async backend. Runs alternate without
and with the judge (``--rounds`` times each; the machine's speed drifts) and the figure
is the share of the judge-less throughput (episodes per second, every record written
with the judge's votes applied) that the judged runs keep: the goal is >= 0.9.

Run: ``python benchmarks/bench_judge.py [--episodes 512] [--rounds 2]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rollout import TINY, say, serving  # noqa: E402 (the test server in its own process)


def run(policy_url: str, judge_url: str | None, in_flight: int, episodes: int, direct: bool) -> dict:
    from liveroom_sim.rewards.judge.service import judge_endpoints
    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    policy = PolicySpec(kind="openai", model="m", base_url=policy_url, max_retries=0, timeout_s=60, direct=direct)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.jsonl"
        config = RolloutConfig(env=TINY, policy=policy, episodes=episodes, out=out, backend="async",
                               in_flight=in_flight, record_messages=False, progress=False)
        if judge_url:
            config.judge = judge_endpoints(judge_url + "#judge", timeout_s=60, direct=direct)
        started = time.perf_counter()
        report = run_rollouts(config)
        wall = time.perf_counter() - started
        rows = [json.loads(line) for line in out.open()]
    judged = [r["judge"] for r in rows if r.get("judge")]
    return {"judge": bool(judge_url), "episodes": report["episodes"], "errors": report["errors"],
            "steps": report["steps"], "wall_s": round(wall, 2), "episodes_per_second": round(report["episodes"] / wall, 2),
            "votes": sum(j["votes"] for j in judged), "votes_applied": sum(j["applied"] for j in judged),
            "votes_failed": sum(j["failed"] for j in judged), "judge_stats": report.get("judge", {})}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="the policy server's seconds per call")
    ap.add_argument("--judge-latency", type=float, default=0.2, help="the judge server's seconds per call")
    ap.add_argument("--in-flight", type=int, default=256)
    ap.add_argument("--episodes", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=2, help="runs without and with the judge, alternating")
    ap.add_argument("--direct", action="store_true", help="both clients on the direct HTTP/1.1 client")
    args = ap.parse_args()
    with serving(args.latency, "scripted-avatar") as policy_url, serving(args.judge_latency, "judge") as judge_url:
        runs = []
        for i in range(args.rounds):
            for url in (None, judge_url) if i % 2 == 0 else (judge_url, None):
                say(f"round {i + 1}: {args.episodes} episodes, {args.in_flight} in flight, "
                    f"{'with' if url else 'without'} the judge")
                runs.append(run(policy_url, url, args.in_flight, args.episodes, args.direct))
                print(json.dumps({"run": runs[-1]}), flush=True)
    plain = [r["episodes_per_second"] for r in runs if not r["judge"]]
    judged = [r["episodes_per_second"] for r in runs if r["judge"]]
    print(json.dumps({"judge": {"in_flight": args.in_flight, "policy_latency_s": args.latency,
                                "judge_latency_s": args.judge_latency, "client": "direct" if args.direct else "openai",
                                "eps_without_judge": plain, "eps_with_judge": judged,
                                "share_kept": round(statistics.median(judged) / statistics.median(plain), 3)}}),
          flush=True)


if __name__ == "__main__":
    main()
