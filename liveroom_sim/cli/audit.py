"""``liveroom audit``: generate rooms and check every viewer message (simulator QA).

``liveroom audit --env ID --seeds N`` plays N rooms of the env (even seeds with the
scripted host, odd ones with the naive host), checks every viewer message (ground truth,
reference to the product, the ask read back, category fit, persona, repeats) and every
handle, and prints the fidelity table with examples of failures, the numbers a room
operator watches per host, and the numbers about the show (distinct campaign timelines,
flash sales the chat mentions, the purchase lift of flash sales) and about the chat's
text, each with its target (``docs/simulator.md``). It exits 0 when every check kind
passes on at least the threshold's share of messages and every number about the show
that applies meets its target, 1 otherwise, 2 on bad input. ``--env`` may be given more
than once; ``--env all`` audits every registered LiveRoom env.
"""

from __future__ import annotations

import json
import sys

from liveroom_sim.cli.common import fail

from liveroom_sim.errors import LiveRoomError


def add_audit_parser(subparsers):
    """Add the ``audit`` command to a CLI's subparsers (sets ``func(args) -> int``)."""
    from liveroom_sim.sim.audit import THRESHOLD

    p = subparsers.add_parser("audit", help="generate rooms and check every viewer message (simulator QA)")
    p.add_argument("--env", action="append", default=None,
                   help="registered env id, a spec file, or 'all' (repeatable; default: LiveRoom-v0)")
    p.add_argument("--seeds", type=int, default=4, help="rooms to play per env (default: 4)")
    p.add_argument("--threshold", type=float, default=THRESHOLD,
                   help=f"least share each check kind must pass (default: {THRESHOLD})")
    p.add_argument("--max-steps", type=int, default=None, help="stop each room after this many steps (default: the spec's step limit)")
    p.add_argument("--json", action="store_true", help="print one JSON object per env instead of tables")
    p.set_defaults(func=run_audit)
    return p


def run_audit(args, out=None) -> int:
    """Run the audit the parsed ``args`` ask for; returns the exit code."""
    import gymnasium as gym

    from liveroom_sim import resolve_env_id
    from liveroom_sim.sim.audit import KINDS, audit
    from liveroom_sim.spec import load_spec

    out = out or sys.stdout
    if args.seeds < 1 or not 0.0 <= args.threshold <= 1.0:
        fail("audit", "--seeds must be at least 1 and --threshold between 0 and 1")
        return 2
    envs = args.env or ["LiveRoom-v0"]
    if "all" in envs:
        envs = sorted(k for k in gym.registry if k.startswith("LiveRoom"))
    ok = True
    for env in envs:
        try:
            world = load_spec(gym.spec(resolve_env_id(env)).kwargs["spec"])
        except (LiveRoomError, ValueError, KeyError) as exc:
            fail("audit", f"{exc}")
            return 2
        report = audit(world, args.seeds, args.max_steps)
        passed = report.ok(args.threshold)
        ok &= passed
        if args.json:
            print(json.dumps({"env": report.env, "seeds": report.seeds, "messages": report.messages,
                              "rates": {k: round(report.rate(k), 4) for k in KINDS}, "passed": passed,
                              "threshold": args.threshold, "failures": report.examples,
                              "phrased": report.phrased, "fell_back": report.fell_back,
                              "numbers": report.numbers, "show": report.show,
                              "show_passed": report.show_verdicts(), "chat": report.chat}, ensure_ascii=False), file=out)
            continue
        print(report.table(), file=out)
        for host, numbers in report.numbers.items():
            print(f"room numbers with the {host} host: {json.dumps(numbers, ensure_ascii=False)}", file=out)
        print(report.show_table(), file=out)
        verdict = "PASS" if passed else "FAIL"
        print(f"{verdict}: every check kind at or above {args.threshold:.0%}, every number about the show "
              f"within its target\n", file=out)
    return 0 if ok else 1
