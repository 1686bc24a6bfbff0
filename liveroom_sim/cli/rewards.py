"""``liveroom rewards``: check a golden reward suite, or explain one of its cases.

``liveroom rewards check CASES.jsonl [--tolerance T]`` prints one line per failing case
(each differing component, expected and got, with the reward model's reasons) and a
summary line; it exits 0 when every case matches, 1 when some differ and 2 when the
file is unreadable or a line is invalid.

``liveroom rewards explain CASES.jsonl --id ID`` (or ``--index N``, counting from 1)
prints every component's value, weight and reasons, and the total with its gate.

The main CLI calls :func:`add_rewards_parser`; :func:`main` runs these commands alone.
"""

from __future__ import annotations

import argparse
import sys

from liveroom_sim.errors import LiveRoomError, SpecError, did_you_mean


def add_rewards_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``rewards`` command (``check`` and ``explain``) to a CLI's subparsers.

    Each leaf parser sets ``func(args) -> int``, the exit code.
    """
    rewards = subparsers.add_parser("rewards", help="check or explain golden reward cases")
    sub = rewards.add_subparsers(dest="rewards_command", metavar="{check,explain}", required=True)

    check = sub.add_parser("check", help="score every case and compare with its expected values")
    check.add_argument("cases", metavar="CASES.jsonl", help="reward cases, one JSON object per line")
    check.add_argument("--tolerance", type=_tolerance, default=1e-6, metavar="T",
                       help="largest absolute difference that still matches (default: 1e-6)")
    check.set_defaults(func=run_check)

    explain = sub.add_parser("explain", help="explain the scores of one case")
    explain.add_argument("cases", metavar="CASES.jsonl", help="reward cases, one JSON object per line")
    which = explain.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", dest="case_id", metavar="ID", help="the case's id")
    which.add_argument("--index", type=int, metavar="N", help="the N-th case of the file, counting from 1")
    explain.set_defaults(func=run_explain)
    return rewards


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def run_check(args: argparse.Namespace) -> int:
    """``rewards check``: 0 when all cases match, 1 when some differ, 2 on a bad file."""
    from liveroom_sim.rewards.golden import check_cases

    try:
        result = check_cases(args.cases, tolerance=args.tolerance)
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(result.report())
    return 0 if result.ok else 1


def run_explain(args: argparse.Namespace) -> int:
    """``rewards explain``: print one case's explanation; 2 on a bad file or unknown case."""
    from liveroom_sim.rewards.golden import explain_case, load_cases

    try:
        cases = [case for _, case in load_cases(args.cases)]
    except SpecError as exc:
        print(exc, file=sys.stderr)
        return 2
    if args.case_id is not None:
        found = [c for c in cases if c.id == args.case_id]
        if not found:
            hint = did_you_mean(args.case_id, [c.id for c in cases])
            print(f"error: no case with id {args.case_id!r} in {args.cases}{hint}", file=sys.stderr)
            return 2
        case = found[0]
    elif 1 <= args.index <= len(cases):
        case = cases[args.index - 1]
    else:
        print(f"error: --index {args.index} is out of range: {args.cases} holds {len(cases)} cases "
              f"(counting from 1)", file=sys.stderr)
        return 2
    print(explain_case(case))
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``rewards ...`` alone, as ``python -m liveroom_sim.cli.rewards rewards check FILE``."""
    parser = argparse.ArgumentParser(prog="liveroom")
    add_rewards_parser(parser.add_subparsers(dest="command", metavar="{rewards}", required=True))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except LiveRoomError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
