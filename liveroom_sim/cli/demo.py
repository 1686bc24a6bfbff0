"""``liveroom demo``: one session, its transcript and a summary."""

from __future__ import annotations

import json
import sys

from liveroom_sim.cli.common import _make_env, _policy
from liveroom_sim.episode import play
from liveroom_sim.errors import LiveRoomError

_ABBREV = {"factuality": "fact", "compliance": "comp", "engagement": "eng", "strategy": "strat", "harness": "harness"}


def _demo(args) -> int:
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
