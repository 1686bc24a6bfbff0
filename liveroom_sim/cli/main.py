"""The ``liveroom`` command line.

``liveroom demo`` runs one session and prints its transcript; ``liveroom report`` writes a
self-contained HTML report of rollouts or a training run; ``liveroom rewards check`` and
``liveroom rewards explain`` run reward regression suites; ``liveroom export-sft`` writes
HSA-SFT data; ``liveroom latency`` measures complete-agent latency; ``liveroom rollout``
plays GRPO groups on any backend; ``liveroom train`` runs GRPO; ``liveroom eval`` runs a
policy on the frozen evaluation suites and ``liveroom eval-suites`` generates them.
"""

from __future__ import annotations

import sys

from liveroom_sim.cli.audit import add_audit_parser
from liveroom_sim.cli.common import Formatter, Parser, int_at_least, llm_options


def version() -> str:
    """The installed package's version (the source tree's when not installed)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("liveroom_sim")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        from liveroom_sim import __version__

        return __version__


def build_parser() -> Parser:
    """The whole command line, every subcommand included."""
    from liveroom_sim.cli.demo import add_demo_parser
    from liveroom_sim.cli.runs import add_run_parsers

    parser = Parser(prog="liveroom", description="LiveRoom: a live-commerce room simulator for RL.")
    parser.add_argument("--version", action="version", version=f"liveroom {version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    add_demo_parser(sub, llm_options)
    add_run_parsers(sub, llm_options)
    report = sub.add_parser("report", help="write a self-contained HTML report of rollouts, a training run or an eval",
                            description="Write one self-contained HTML file (no network needed to view it) "
                                        "from a rollout file, a `liveroom train` folder or a `liveroom eval` folder.",
                            formatter_class=Formatter)
    report.add_argument("source", help="a rollout JSONL file, a training run folder or an eval folder")
    report.add_argument("--out", default=None, help="the HTML file to write (default: SOURCE.html, or "
                                                      "report.html inside a run folder)")
    report.add_argument("--max-episodes", type=int_at_least(1), default=8,
                        help="episodes given a full chat replay, or an eval's failed cases shown with their "
                             "transcripts (the rest are listed)")
    report.set_defaults(func=_report)
    try:
        from liveroom_sim.cli.rewards import add_rewards_parser
    except ImportError:  # pragma: no cover - the rewards commands ship with the package
        pass
    else:
        add_rewards_parser(sub)
    add_audit_parser(sub)
    from liveroom_sim.cli.eval import add_eval_parsers

    add_eval_parsers(sub, llm_options)
    from liveroom_sim.cli.serve import add_serve_parser

    add_serve_parser(sub)
    return parser


def _report(args) -> int:
    from liveroom_sim.cli.common import fail
    from liveroom_sim.report import ReportError, write_report

    try:
        path = write_report(args.source, args.out, max_episodes=args.max_episodes)
    except ReportError as exc:
        return fail("report", str(exc))
    print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `liveroom demo | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"\nliveroom {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
