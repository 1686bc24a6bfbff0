"""The ``liveroom`` command line.

``liveroom demo`` runs one session and prints its transcript; ``liveroom rewards check``
and ``liveroom rewards explain`` run reward regression suites.
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
    demo.add_argument("--policy", default="scripted", help="scripted or naive (default: scripted)")
    demo.add_argument("--json", action="store_true", help="print only one JSON object: the episode summary")
    demo.set_defaults(func=_demo)
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


def _make_env(env_id: str):
    import gymnasium as gym

    import liveroom_sim
    from liveroom_sim.errors import UnknownNameError

    if env_id.endswith((".yaml", ".yml")):
        env_id = liveroom_sim.register_spec(env_id)
    if env_id not in gym.registry:
        raise UnknownNameError("env", env_id, [k for k in gym.registry if k.startswith("LiveRoom") or "liveroom" in k.lower()])
    return gym.make(env_id).unwrapped


def _demo(args) -> int:
    from liveroom_sim.errors import LiveRoomError
    from liveroom_sim.policies import make_policy

    try:
        env = _make_env(args.env)
        policy = make_policy(args.policy)
    except LiveRoomError as exc:
        print(f"liveroom demo: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    obs, info = env.reset(seed=args.seed)
    if not args.json:
        print(f"== {env.world.spec.room.name} ({env.world.spec.id}, seed {args.seed}, policy {args.policy})", file=out)
        _print_update(info, out)
    while True:
        action = policy(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        if not args.json:
            _print_turn(info, out)
        if terminated or truncated:
            break
    summary = {
        "env": env.world.spec.id, "seed": args.seed, "policy": args.policy,
        "return": round(info["episode"]["return"], 4),
        "returns": {k: round(v, 4) for k, v in info["episode"]["returns"].items() if k != "total"},
        "steps": info["episode"]["steps"], "terminated": terminated, "truncated": truncated,
        "metrics": info["metrics"],
    }
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        _print_summary(summary, out)
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
    print(f"steps {s['steps']} ({'stream over' if s['terminated'] else 'step limit'}); "
          f"questions answered {m['questions_answered']}, ignored {m['questions_ignored']}; "
          f"purchases {m['purchases']}, GMV {m['gmv']:.2f}; viewers at the end {m['viewers_present']} "
          f"(of {m['viewers_total']}), conversion {m['conversion']:.1%}", file=out)


if __name__ == "__main__":
    sys.exit(main())
