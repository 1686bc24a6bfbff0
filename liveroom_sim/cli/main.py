"""The ``liveroom`` command line.

``liveroom demo`` runs one session and prints its transcript; ``liveroom rewards check``
and ``liveroom rewards explain`` run reward regression suites; ``liveroom export-sft``
writes HSA-SFT data; ``liveroom latency`` measures complete-agent latency;
``liveroom rollout`` plays GRPO groups on any backend; ``liveroom train`` runs GRPO.
"""

from __future__ import annotations

import argparse
import sys

from liveroom_sim.cli.demo import _demo
from liveroom_sim.cli.runs import _export_sft, _latency, _rollout, _train


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="liveroom", description="LiveRoom: a live-commerce room simulator for RL.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run one session and print its transcript")
    demo.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file (default: LiveRoom-v0)")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--policy", default="scripted", help="scripted, naive or openai (default: scripted)")
    demo.add_argument("--json", action="store_true", help="print only one JSON object: the episode summary")
    _llm_options(demo)
    demo.set_defaults(func=_demo)
    lat = sub.add_parser("latency", help="measure complete-agent turn latency against an endpoint")
    lat.add_argument("--env", default="LiveRoom-v0")
    lat.add_argument("--sessions", type=int, default=4)
    lat.add_argument("--concurrency", type=int, default=4)
    lat.add_argument("--turns", type=int, default=10, help="complete agent turns per session")
    lat.add_argument("--json", action="store_true", help="print only one JSON object (times in seconds)")
    _llm_options(lat)
    lat.set_defaults(func=_latency)
    ro = sub.add_parser("rollout", help="play many episodes in GRPO groups and write JSONL records")
    ro.add_argument("--env", default="LiveRoom-v0")
    ro.add_argument("--policy", default="scripted", help="scripted, naive, openai or a checkpoint PATH")
    ro.add_argument("--episodes", type=int, required=True)
    ro.add_argument("--group-size", type=int, default=1)
    ro.add_argument("--seed", type=int, default=0, help="first group's seed (group g uses seed + g)")
    ro.add_argument("--backend", choices=("serial", "async", "ray"), default="serial")
    ro.add_argument("--workers", type=int, default=2, help="Ray workers")
    ro.add_argument("--in-flight", type=int, default=32, help="episodes in flight per worker (async and ray)")
    ro.add_argument("--ray-address", default=None, help="join a Ray cluster (default: $RAY_ADDRESS, else local)")
    ro.add_argument("--normalize", choices=("std", "mean", "none"), default="std", help="advantage normalisation")
    ro.add_argument("--out", required=True)
    ro.add_argument("--resume", action="store_true", help="skip episodes the output file already holds")
    ro.add_argument("--force", action="store_true", help="replace the output file if it exists")
    ro.add_argument("--no-messages", action="store_true", help="leave trajectories out of the records")
    _llm_options(ro)
    ro.add_argument("--direct", action="store_true",
                    help="async/ray: post LLM calls over a lean HTTP/1.1 client, not the openai client "
                         "(about half the CPU a call; no proxies; see docs/rollouts.md)")
    ro.set_defaults(func=_rollout)
    tr = sub.add_parser("train", help="GRPO-train the built-in numpy avatar; writes metrics.csv, a curve and checkpoints")
    tr.add_argument("--env", default="LiveRoom-v0")
    tr.add_argument("--iterations", type=int, default=20)
    tr.add_argument("--group-size", type=int, default=8)
    tr.add_argument("--groups", type=int, default=4, help="groups (seeds) per iteration")
    tr.add_argument("--learning-rate", type=float, default=0.5)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--backend", choices=("serial", "async", "ray"), default="serial")
    tr.add_argument("--workers", type=int, default=2)
    tr.add_argument("--out", required=True, help="output folder")
    tr.set_defaults(func=_train)
    sft = sub.add_parser("export-sft", help="write HSA-SFT teacher trajectories as chat-format JSON lines")
    sft.add_argument("--env", default="LiveRoom-v0")
    sft.add_argument("--episodes", type=int, default=10)
    sft.add_argument("--augment", type=int, default=4, help="augmented harness variants per episode (K)")
    sft.add_argument("--out", required=True, help="the JSONL file to write")
    sft.add_argument("--min-reward", type=float, default=0.0, help="drop replies whose turn reward is below this")
    sft.add_argument("--seed", type=int, default=0, help="first episode's seed")
    sft.add_argument("--teacher", default=None, help="scripted (default) or openai (implied by --base-url/--model)")
    _llm_options(sft)
    sft.set_defaults(func=_export_sft)
    try:
        from liveroom_sim.cli.rewards import add_rewards_parser
    except ImportError:  # pragma: no cover - the rewards commands ship with the package
        pass
    else:
        add_rewards_parser(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `liveroom demo | head`
        sys.stderr.close()
        return 0


def _llm_options(p) -> None:
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    p.add_argument("--model", default=None, help="model name at the endpoint")
    p.add_argument("--temperature", type=float, default=None)
    p.add_argument("--max-tokens", type=int, default=None)


if __name__ == "__main__":
    sys.exit(main())
