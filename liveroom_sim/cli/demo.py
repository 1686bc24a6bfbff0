"""``liveroom demo``: one session, its transcript (or a one-screen ``--brief``) and a summary.

Exit codes: 0 when the episode ran, 1 when the policy's endpoint was unreachable, wrong or
kept failing (one line on stderr names the URL and the cause), 2 for bad options.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

from liveroom_sim.cli.common import EXIT_ENDPOINT, check_endpoint, endpoint_url, fail, make_env, policy_spec
from liveroom_sim.cli.transcript import FIRST_TURNS, Transcript, contributions, legend
from liveroom_sim.episode import play
from liveroom_sim.errors import LiveRoomError


def add_demo_parser(sub, llm_options) -> None:
    from liveroom_sim.cli.common import int_at_least

    demo = sub.add_parser("demo", help="run one session and print its transcript",
                          description="Run one session and print its transcript and a summary.")
    demo.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file")
    demo.add_argument("--seed", type=int_at_least(0), default=0, help="the episode's seed")
    demo.add_argument("--policy", default=None,
                      help="scripted, naive, openai, a checkpoint PATH (a policy.json or a `liveroom train` "
                           "folder), or your own policy as package.module:factory or path/file.py:factory (see "
                           "docs/eval.md); default: scripted, or openai when --base-url/--model is given")
    out = demo.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print only one JSON object: the episode summary")
    out.add_argument("--brief", action="store_true", help="print a one-screen summary instead of the transcript")
    out.add_argument("--full", action="store_true",
                     help="print every turn (by default: the first turns, one exchange a stream minute and every "
                          "campaign event)")
    demo.add_argument("--verbose", action="store_true", help="print every tool result in full")
    llm_options(demo)
    demo.set_defaults(func=run_demo)


def run_demo(args) -> int:
    try:
        env = make_env(args.env)
        spec = policy_spec(args)
    except (LiveRoomError, ValueError) as exc:
        return fail("demo", str(exc))
    if spec.kind == "openai" and (problem := check_endpoint(args)):
        return fail("demo", problem, EXIT_ENDPOINT)
    try:
        policy = spec.build(args.seed)
    except ValueError as exc:  # a factory of the user's that fails or returns no policy
        return fail("demo", str(exc))
    label = {"learned": f"checkpoint {spec.checkpoint}", "openai": f"openai model {spec.model}",
             "python": f"factory {spec.factory}"}.get(spec.kind, spec.kind)
    weights = dict(env.world.spec.reward.weights)
    out = sys.stdout
    tally: Counter = Counter()
    transcript = Transcript(out, weights, verbose=args.verbose, full=args.full,
                            count_waiting=lambda: len(env.room.crowd.waiting())) if not (args.json or args.brief) else None

    def on_step(info: dict) -> None:
        turn = info["turn"]
        # a reply a hook stopped: said, not delivered (a silent turn says nothing and is no blocked reply)
        tally["blocked"] += turn["kind"] == "reply" and not turn["delivered"] and bool(turn["reply"])
        tally["tool_faults"] += len(turn["tool_errors"])
        tally["events"] += len(info.get("events") or [])
        tally["gated"] += bool(turn.get("gated"))
        if transcript is not None:
            transcript.turn(info)
        elif tally["steps"] % 50 == 0 and sys.stderr.isatty():
            print(f"\r[demo] step {tally['steps']}, stream clock {info['metrics']['clock_s']:.0f}s",
                  end="", file=sys.stderr, flush=True)
        tally["steps"] += 1

    if transcript is not None:
        print(f"== {env.world.spec.room.name} ({env.world.spec.id}, seed {args.seed}, policy {label})", file=out)
        print(legend(env.world.spec.reward.components), file=out)
        shown = "every turn" if args.full else (f"the first {FIRST_TURNS} turns, then one exchange a stream minute "
                                                 "and every campaign event")
        print(f"showing {shown}; the episode summary is at the end" + ("" if args.full else " (--full prints every turn)"),
              file=out)
        _, info = env.reset(seed=args.seed)
        tally["events"] += len(info.get("events") or [])
        transcript.start(info)
    else:
        _, info = env.reset(seed=args.seed)
        tally["events"] += len(info.get("events") or [])
    result = play(env, policy, args.seed, on_step=on_step)
    if transcript is None and sys.stderr.isatty():
        print("\r" + " " * 50 + "\r", end="", file=sys.stderr)
    summary = _episode_summary(env, args.seed, label, result, tally)
    if result.reason and not result.steps:
        pass  # the endpoint failed before the first turn: a summary would be all zeros
    elif args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print_summary(summary, out, brief=args.brief)
    if result.reason:
        return fail("demo", f"the endpoint {endpoint_url(args)} kept failing: {result.reason}", EXIT_ENDPOINT)
    return 0


def _episode_summary(env, seed: int, label: str, result, tally: Counter) -> dict:
    """The summary ``--json`` prints of an episode ``play`` returned as ``result``, with
    the counts of blocked replies, tool faults, events and gated turns in ``tally``."""
    spec = env.world.spec
    summary = {
        "env": spec.id, "seed": seed, "policy": label,
        "return": round(result.total, 4),
        "returns": {k: round(v, 4) for k, v in result.returns.items()},
        "weights": dict(spec.reward.weights),
        "steps": result.steps, "terminated": result.terminated, "truncated": result.truncated,
        "metrics": result.metrics,
        "events": tally["events"], "replies_blocked": tally["blocked"], "tool_faults": tally["tool_faults"],
        "gated_turns": tally["gated"],
    }
    if result.reason:
        summary["truncated_reason"] = result.reason
    summary["latency_kind"] = ("measured: the policy's time plus the spec's tool time" if spec.latency.use_measured
                               else "simulated by the spec's latency model, not measured")
    if result.accounting:
        summary["accounting"] = result.accounting
    return summary


def print_summary(s: dict, out, brief: bool = False) -> None:
    """The episode summary; ``brief`` adds the room's story in a few lines."""
    m = s["metrics"]
    minutes = m["clock_s"] / 60
    print(f"\n== episode summary ({s['env']}, seed {s['seed']}, policy {s['policy']})", file=out)
    parts = contributions(s["returns"], s["weights"])
    print(f"return {s['return']:+.2f} = " + " + ".join(
        f"{k} {v:+.2f} (weight {s['weights'].get(k, 1.0):g} x {s['returns'][k]:+.2f})" for k, v in parts.items()),
        file=out)
    if s.get("gated_turns"):
        print(f"  {s['gated_turns']} turns capped by the compliance gate: the parts sum to "
              f"{sum(parts.values()):+.2f}, the return is lower", file=out)
    ending = "stream over" if s["terminated"] else s.get("truncated_reason", "step limit")
    print(f"steps {s['steps']} ({ending}), {minutes:.1f} min of stream", file=out)
    print(f"questions asked {m['questions_asked']}, answered {m['questions_answered']}, ignored "
          f"{m['questions_ignored']}, still waiting {m['questions_waiting']}", file=out)
    print(f"purchases {m['purchases']}, GMV {m['gmv']:.2f}; viewers at the end {m['viewers_present']} "
          f"(of {m['viewers_total']} who came), conversion {m['conversion']:.1%}, "
          f"average stay {m['avg_dwell_s']:.0f} s", file=out)
    print(f"campaign events {s['events']}, replies blocked by hooks {s['replies_blocked']}, "
          f"tool faults {s['tool_faults']}", file=out)
    if brief:
        print(f"replies {m['replies']}, mean turn latency {m['mean_latency_s']:.2f} s ({s.get('latency_kind', 'simulated')}) "
              f"(see `liveroom demo` without --brief for the transcript, `liveroom report` for plots)", file=out)
    if s.get("accounting"):
        a = s["accounting"]
        print(f"LLM calls {a.get('calls', 0)}, tokens {a.get('prompt_tokens', 0)} in / "
              f"{a.get('completion_tokens', 0)} out, {a.get('seconds', 0.0):.1f} s, errors {a.get('errors', 0)}",
              file=out)
