"""The ``liveroom`` command line.

``liveroom demo`` runs one session and prints its transcript; ``liveroom rewards check``
and ``liveroom rewards explain`` run reward regression suites; ``liveroom export-sft``
writes HSA-SFT data; ``liveroom latency`` measures complete-agent latency;
``liveroom rollout`` plays GRPO groups on any backend; ``liveroom train`` runs GRPO.
"""

from __future__ import annotations

import argparse
import json
import sys

_ABBREV = {"factuality": "fact", "compliance": "comp", "engagement": "eng", "strategy": "strat", "harness": "harness"}


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
        from liveroom_sim.cli_rewards import add_rewards_parser
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


def _policy(name: str, args):
    from liveroom_sim.policies import make_policy

    if name == "openai" or (name is None and (args.base_url or args.model)):
        if not args.model:
            raise ValueError("--model is required for an OpenAI-compatible policy")
        return make_policy("openai", model=args.model, base_url=args.base_url,
                           temperature=args.temperature, max_tokens=args.max_tokens)
    return make_policy(name or "scripted")


def _env_id(env: str) -> str:
    """A registered env id for ``env`` (an id, or a spec file, which gets registered)."""
    import gymnasium as gym

    import liveroom_sim
    from liveroom_sim.errors import UnknownNameError

    if env.endswith((".yaml", ".yml")):
        env = liveroom_sim.register_spec(env)
    if env not in gym.registry:
        raise UnknownNameError("env", env, [k for k in gym.registry if k.startswith("LiveRoom") or "liveroom" in k.lower()])
    return env


def _make_env(env: str):
    import gymnasium as gym

    return gym.make(_env_id(env)).unwrapped


def _demo(args) -> int:
    from liveroom_sim.episode import play
    from liveroom_sim.errors import LiveRoomError

    try:
        env = _make_env(args.env)
        policy = _policy(args.policy, args)
    except (LiveRoomError, ValueError) as exc:
        print(f"liveroom demo: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    if not args.json:
        spec = env.world.spec
        print(f"== {spec.room.name} ({spec.id}, seed {args.seed}, policy {args.policy})", file=out)
        env.reset(seed=args.seed)
        _print_update(env._info(None), out)
    result = play(env, policy, args.seed, on_step=None if args.json else (lambda info: _print_turn(info, out)))
    summary = {
        "env": env.world.spec.id, "seed": args.seed, "policy": args.policy,
        "return": round(result.total, 4),
        "returns": {k: round(v, 4) for k, v in result.returns.items() if k != "total"},
        "steps": result.steps, "terminated": result.terminated, "truncated": result.truncated,
        "metrics": result.metrics,
    }
    if result.reason:
        summary["truncated_reason"] = result.reason
    if result.accounting:
        summary["accounting"] = result.accounting
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        _print_summary(summary, out)
    return 0


def _rollout(args) -> int:
    from liveroom_sim.errors import LiveRoomError
    from liveroom_sim.rollout.policy_spec import PolicySpec
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    try:
        policy = PolicySpec.parse(args.policy, model=args.model, base_url=args.base_url,
                                  temperature=args.temperature, max_tokens=args.max_tokens, direct=args.direct or None)
        config = RolloutConfig(
            env=args.env, policy=policy, episodes=args.episodes, out=args.out, group_size=args.group_size,
            seed=args.seed, backend=args.backend, workers=args.workers, in_flight=args.in_flight,
            ray_address=args.ray_address, resume=args.resume, normalize=args.normalize,
            record_messages=not args.no_messages)
        report = run_rollouts(config)
    except (LiveRoomError, ValueError, OSError) as exc:
        print(f"liveroom rollout: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report))
    return 0


def _train(args) -> int:
    from liveroom_sim.errors import LiveRoomError
    from liveroom_sim.train import train

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

    from liveroom_sim.errors import LiveRoomError
    from liveroom_sim.latency import measure

    try:
        env_id = _env_id(args.env)
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
    from liveroom_sim.errors import LiveRoomError
    from liveroom_sim.export import export_sft

    try:
        env_id = _env_id(args.env)
        teacher = _policy(args.teacher, args)
        counts = export_sft(env_id, args.episodes, args.augment, args.out, teacher,
                            min_reward=args.min_reward, seed=args.seed)
    except (LiveRoomError, ValueError, OSError) as exc:
        print(f"liveroom export-sft: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"out": args.out, **counts}))
    return 0


def _print_update(info: dict, out) -> None:
    last = info["messages"][-1]
    if last["role"] == "user":
        for line in last["content"].splitlines():
            print(f"   {line}", file=out)


def _print_turn(info: dict, out) -> None:
    turn = info["turn"]
    msgs = info["messages"]
    r = info["reward_breakdown"]
    parts = " ".join(f"{_ABBREV[k]} {v:+.2f}" for k, v in r.items() if k != "total")
    if turn["kind"] == "tool":
        i = len(msgs) - 1
        while msgs[i]["role"] == "tool":
            i -= 1
        for call, result in zip(msgs[i].get("tool_calls") or [], msgs[i + 1:]):
            fn = call["function"]
            print(f"   -> {fn['name']}({fn['arguments']}) = {result['content'][:160]}", file=out)
        if turn["tool_errors"]:
            print(f"      reward {r['total']:+.2f} ({parts})", file=out)
        return
    reply = next((m["content"] for m in reversed(msgs) if m["role"] == "assistant" and not m.get("tool_calls")), "")
    status = "" if turn["delivered"] else "  [NOT DELIVERED: " + ", ".join(turn["hooks"] or ["empty"]) + "]"
    print(f" >> {reply}{status}", file=out)
    print(f"      reward {r['total']:+.2f} ({parts})", file=out)
    for e in info["events"]:
        print(f"   ** event at {e['at']:.0f}s: {e['type']} {e.get('note', '')}".rstrip(), file=out)
    _print_update(info, out)


def _print_summary(s: dict, out) -> None:
    m = s["metrics"]
    print("\n== episode summary", file=out)
    print(f"return {s['return']:+.2f}: " + ", ".join(f"{k} {v:+.2f}" for k, v in s["returns"].items()), file=out)
    ending = "stream over" if s["terminated"] else s.get("truncated_reason", "step limit")
    print(f"steps {s['steps']} ({ending}); "
          f"questions answered {m['questions_answered']}, ignored {m['questions_ignored']}; "
          f"purchases {m['purchases']}, GMV {m['gmv']:.2f}; viewers at the end {m['viewers_present']} "
          f"(of {m['viewers_total']}), conversion {m['conversion']:.1%}", file=out)
    if s.get("accounting"):
        a = s["accounting"]
        print(f"LLM calls {a['calls']}, tokens {a['prompt_tokens']} in / {a['completion_tokens']} out, "
              f"{a['seconds']:.1f} s, errors {a['errors']}", file=out)


if __name__ == "__main__":
    sys.exit(main())
