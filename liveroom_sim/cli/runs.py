"""``liveroom rollout``, ``train``, ``latency`` and ``export-sft``: commands that play
many episodes. Heavy layers are imported when their command runs."""

from __future__ import annotations

import json
import sys

from liveroom_sim import resolve_env_id
from liveroom_sim.cli.common import _policy
from liveroom_sim.errors import LiveRoomError


def _rollout(args) -> int:
    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    try:
        policy = PolicySpec.parse(args.policy, model=args.model, base_url=args.base_url,
                                  temperature=args.temperature, max_tokens=args.max_tokens, direct=args.direct or None)
        config = RolloutConfig(
            env=args.env, policy=policy, episodes=args.episodes, out=args.out, group_size=args.group_size,
            seed=args.seed, backend=args.backend, workers=args.workers, in_flight=args.in_flight,
            ray_address=args.ray_address, resume=args.resume, force=args.force, normalize=args.normalize,
            record_messages=not args.no_messages)
        report = run_rollouts(config)
    except (LiveRoomError, ValueError, OSError) as exc:
        print(f"liveroom rollout: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report))
    return 0


def _train(args) -> int:
    from liveroom_sim.train.grpo import train

    try:
        summary = train(args.env, args.out, iterations=args.iterations, group_size=args.group_size,
                        groups=args.groups, learning_rate=args.learning_rate, seed=args.seed,
                        backend=args.backend, workers=args.workers)
    except (LiveRoomError, ValueError, OSError) as exc:
        print(f"liveroom train: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary))
    return 0


def _latency(args) -> int:
    import asyncio

    from liveroom_sim.rollout.latency import measure

    try:
        env_id = resolve_env_id(args.env)
        avatar = _policy("openai", args)
    except (LiveRoomError, ValueError) as exc:
        print(f"liveroom latency: {exc}", file=sys.stderr)
        return 2
    report = asyncio.run(measure(env_id, avatar, args.sessions, args.concurrency, args.turns))
    if args.json:
        print(json.dumps(report))
        return 0
    print(f"{report['sessions']} sessions x {args.turns} turns against {report['model']} "
          f"(concurrency {report['concurrency']}), {report['errors']} errors")
    for name in ("turn", "call"):
        r = report[name]
        if r["count"]:
            print(f"  per {name:<4}  n={r['count']:<5} p50 {r['p50']:.3f}s  p95 {r['p95']:.3f}s  p99 {r['p99']:.3f}s")
    if report["over_budget_share"] is not None:
        print(f"  tokens/s {report['tokens_per_second']}, turns over the {report['budget_s']}s budget: "
              f"{report['over_budget_share']:.1%}")
    return 0


def _export_sft(args) -> int:
    from liveroom_sim.train.sft import export_sft

    try:
        env_id = resolve_env_id(args.env)
        teacher = _policy(args.teacher, args)
        counts = export_sft(env_id, args.episodes, args.augment, args.out, teacher,
                            min_reward=args.min_reward, seed=args.seed)
    except (LiveRoomError, ValueError, OSError) as exc:
        print(f"liveroom export-sft: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"out": args.out, **counts}))
    return 0
