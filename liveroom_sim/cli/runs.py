"""``liveroom rollout``, ``train``, ``latency`` and ``export-sft``: commands that play
many episodes. Heavy layers are imported when their command runs.

Each prints progress on stderr and its result (one JSON object) on stdout. Exit codes: 0
when the run completed, 1 when an endpoint was unreachable, wrong or kept failing, or
answered nothing usable on most turns (one line names the URL and the cause), 2 for bad
options or files, 3 when every episode of a run failed (one line gives the first error).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from liveroom_sim.cli.common import (EXIT_ENDPOINT, EXIT_RUN_FAILED, DeprecatedAlias, check_endpoint, endpoint_url,
                                     env_id, fail, float_in, int_at_least, policy_spec)
from liveroom_sim.errors import LiveRoomError

POLICY_HELP = ("scripted, naive, openai, a checkpoint PATH (a policy.json or a `liveroom train` folder), or your "
               "own policy as package.module:factory or path/file.py:factory (called once per episode, with seed= "
               "when it takes one; see docs/eval.md); default: scripted, or openai when --base-url/--model is given")


def add_run_parsers(sub, llm_options) -> None:
    """Add ``latency``, ``rollout``, ``train`` and ``export-sft`` to the subparsers."""
    _add_latency(sub, llm_options)
    _add_rollout(sub, llm_options)
    _add_train(sub)
    _add_export_sft(sub, llm_options)


def _add_latency(sub, llm_options) -> None:
    pos = int_at_least(1)
    lat = sub.add_parser("latency", help="measure complete-agent turn latency against an endpoint",
                         description="Measure complete-agent turn latency against an OpenAI-compatible endpoint.")
    lat.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file")
    lat.add_argument("--sessions", type=pos, default=4, help="simulated sessions")
    lat.add_argument("--concurrency", type=pos, default=4, help="sessions in flight at once")
    lat.add_argument("--turns", type=pos, default=10, help="complete agent turns per session")
    lat.add_argument("--json", action="store_true", help="print only one JSON object (times in seconds)")
    llm_options(lat)
    lat.set_defaults(func=run_latency)


def _add_rollout(sub, llm_options) -> None:
    pos, nonneg = int_at_least(1), int_at_least(0)
    ro = sub.add_parser("rollout", help="play many episodes in GRPO groups and write JSONL records",
                        description="Play many episodes in GRPO groups and write one JSON record per episode.")
    ro.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file")
    ro.add_argument("--policy", default=None, help=POLICY_HELP)
    ro.add_argument("--episodes", type=pos, required=True, help="episodes to play")
    ro.add_argument("--group-size", type=pos, default=1, help="samples per group (one seed per group)")
    ro.add_argument("--seed", type=nonneg, default=0, help="first group's seed (group g uses seed + g)")
    ro.add_argument("--backend", choices=("serial", "async", "ray"), default="serial", help="where episodes run")
    ro.add_argument("--workers", type=pos, default=2, help="Ray workers")
    ro.add_argument("--in-flight", type=pos, default=32, help="episodes in flight per worker (async and ray)")
    ro.add_argument("--ray-address", default=None, help="join a Ray cluster (default: $RAY_ADDRESS, else local)")
    ro.add_argument("--normalize", choices=("std", "mean", "none"), default="std", help="advantage normalisation")
    ro.add_argument("--out", required=True, help="the JSONL file to write")
    ro.add_argument("--resume", action="store_true",
                    help="go on with an existing output file: its env, policy and settings must match; "
                         "torn or partly written groups are played again")
    ro.add_argument("--force", action="store_true", help="replace the output file if it exists")
    ro.add_argument("--no-messages", action="store_true", help="leave trajectories out of the records")
    llm_options(ro)
    ro.add_argument("--direct", action="store_true",
                    help="async/ray: post LLM calls over a lean HTTP/1.1 client, not the openai client "
                         "(about half the CPU a call; no proxies; see docs/rollouts.md)")
    ro.add_argument("--tokens", action="store_true",
                    help="openai: ask the endpoint (vLLM) for sampled token ids and logprobs and record them "
                         "(see docs/credit.md)")
    from liveroom_sim.cli.rewards import add_judge_options

    add_judge_options(ro)  # the judge tier: votes applied to each record (docs/judge.md)
    ro.set_defaults(func=run_rollout)


def _add_train(sub) -> None:
    pos, nonneg = int_at_least(1), int_at_least(0)
    tr = sub.add_parser("train", help="GRPO-train the built-in numpy avatar; writes metrics.csv, a curve and checkpoints",
                        description="GRPO-train the built-in numpy avatar.")
    tr.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file")
    tr.add_argument("--iterations", type=pos, default=20, help="GRPO iterations")
    tr.add_argument("--group-size", type=pos, default=4, help="samples per group")
    tr.add_argument("--groups", type=pos, default=1, help="groups (seeds) per iteration")
    tr.add_argument("--learning-rate", type=float_in(0.0, open_low=True), default=1.0, help="learner step size")
    tr.add_argument("--credit", choices=("exchange", "episode"), default="exchange",
                    help="each decision credited with its exchange's reward (default) or the episode's")
    tr.add_argument("--hsa", action="store_true",
                    help="train under Harness-State Augmentation: half the episodes on an augmented harness")
    tr.add_argument("--seed", type=nonneg, default=0, help="first group's seed")
    tr.add_argument("--backend", choices=("serial", "async", "ray"), default="serial", help="where episodes run")
    tr.add_argument("--workers", type=pos, default=2, help="Ray workers")
    tr.add_argument("--out", required=True, help="output folder")
    tr.set_defaults(func=run_train)


def _add_export_sft(sub, llm_options) -> None:
    pos, nonneg = int_at_least(1), int_at_least(0)
    sft = sub.add_parser("export-sft", help="write HSA-SFT teacher trajectories: one chat conversation per episode variant",
                         description="Write HSA-SFT teacher trajectories as JSON lines, one multi-turn chat "
                                     "conversation per episode variant, assistant turns weighted for the loss.")
    sft.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec file")
    sft.add_argument("--episodes", type=pos, default=10, help="episodes (seeds)")
    sft.add_argument("--augment", type=pos, default=4, help="augmented harness variants per episode (K)")
    sft.add_argument("--out", required=True, help="the JSONL file to write")
    sft.add_argument("--force", action="store_true", help="replace the output file if it exists")
    sft.add_argument("--min-reward", type=float_in(), default=0.0,
                     help="replies whose turn reward is below this are kept as context only (weight 0)")
    sft.add_argument("--full-retry-share", type=float_in(0.0, 1.0), default=0.2,
                     help="share of hook retries kept in full (blocked reply, hook message, correction); "
                          "the rest keep only the final reply")
    sft.add_argument("--seed", type=nonneg, default=0, help="first episode's seed")
    sft.add_argument("--policy", default=None, help=f"the teacher: {POLICY_HELP}")
    sft.add_argument("--teacher", dest="policy", action=DeprecatedAlias,
                     help="deprecated: use --policy (default: as --policy)")
    llm_options(sft)
    sft.set_defaults(func=run_export_sft)


def _out_file(command: str, out: str, replace: bool = True) -> str | None:
    """Why ``out`` cannot be written as a file (a folder, a missing parent, or a file
    there already when ``replace`` is false), or None."""
    path = Path(out)
    if path.is_dir() or out.endswith(("/", "\\")):
        return f"--out {out!r} is a folder; give a file name such as {str(path / 'rollouts.jsonl')!r}"
    if not path.parent.exists():
        return f"--out {out!r}: the folder {str(path.parent)!r} does not exist"
    if not replace and path.exists():
        return f"{out} exists: pass --force to replace it"
    return None


def run_rollout(args) -> int:
    from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

    if problem := _out_file("rollout", args.out):
        return fail("rollout", problem)
    if args.episodes % args.group_size:
        groups = -(-args.episodes // args.group_size)
        print(f"liveroom rollout: note: --episodes {args.episodes} is not a multiple of --group-size "
              f"{args.group_size}: playing {groups * args.group_size} episodes ({groups} groups of {args.group_size})",
              file=sys.stderr)
    try:
        policy = policy_spec(args)
        if policy.kind == "python":
            policy.build(0)  # a factory that fails fails the command here, not every episode
        if args.direct:
            policy = policy.model_copy(update={"direct": True})
        if args.tokens:
            policy = policy.model_copy(update={"tokens": True})
        config = RolloutConfig(
            env=args.env, policy=policy, episodes=args.episodes, out=args.out, group_size=args.group_size,
            seed=args.seed, backend=args.backend, workers=args.workers, in_flight=args.in_flight,
            ray_address=args.ray_address, resume=args.resume, force=args.force, normalize=args.normalize,
            record_messages=not args.no_messages)
        if args.judge:
            from liveroom_sim.rewards.judge.service import judge_endpoints

            config.judge, config.judge_policy = judge_endpoints(args.judge, args.judge_timeout), args.judge_policy
        env_id(args.env)
    except (LiveRoomError, ValueError) as exc:
        return fail("rollout", str(exc))
    if policy.kind == "openai" and (problem := check_endpoint(args)):
        return fail("rollout", problem, EXIT_ENDPOINT)
    try:
        report = run_rollouts(config)
    except (LiveRoomError, ValueError, OSError) as exc:
        return fail("rollout", str(exc))
    failure = _run_failure(report, args, policy.kind == "openai")
    if failure is None or report["mean_return"] is not None:  # no zero-filled summary before an error
        print(json.dumps(report))
    return fail("rollout", *failure) if failure else 0


def _run_failure(report: dict, args, endpoint: bool) -> tuple[str, int] | None:
    """Why a finished run is a failed one (its one-line reason and exit code), or None.

    A run fails when every episode failed (whatever the policy), when an endpoint's
    failures cut episodes short, or when most turns got nothing usable from the endpoint
    (no choices, a null body): each such turn is played as an empty reply, so the records
    would look complete while holding no policy at all.
    """
    played, url = report["episodes"], endpoint_url(args) if endpoint else ""
    if played and report["errors"] == played:
        return (f"{played} of {played} episodes failed: {_first_reason(args.out, 'error')} (each record holds "
                f"its error; see {args.out})", EXIT_RUN_FAILED)
    cut = report["errors"] + report["truncated_by_policy"] + report["infra_failures"]
    if endpoint and cut:
        return (f"{cut} of {played} episodes ended early because the endpoint {url} kept failing: "
                f"{_first_reason(args.out)} (each record holds its reason)", EXIT_ENDPOINT)
    if endpoint and report["steps"] and report["policy_faults"] * 2 > report["steps"]:
        return (f"{report['policy_faults']} of {report['steps']} turns got nothing usable from the endpoint {url} "
                f"({_first_reason(args.out, 'last_error')}); each was played as an empty reply, so the records "
                "hold no policy (their policy_faults count these turns)", EXIT_ENDPOINT)
    return None


def _first_reason(path: str, field: str = "reason") -> str:
    """The first record's ``field`` that is set (``last_error`` is read from its
    LLM accounting); infrastructure failures are kept in ``<out>.failures``."""
    for candidate in (Path(path + ".failures"), Path(path), Path(path + ".pending")):
        if not candidate.exists():
            continue
        with candidate.open(encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                found = (record.get("accounting") or {}).get("last_error") if field == "last_error" else (
                    record.get("error") or (record.get("reason") if field == "reason" else None))
                if found:
                    return found
    return "see the records"


def run_train(args) -> int:
    from liveroom_sim.train.grpo import train

    if Path(args.out).is_file():
        return fail("train", f"--out {args.out!r} is a file; train writes a folder")
    try:
        env_id(args.env)
        summary = train(args.env, args.out, iterations=args.iterations, group_size=args.group_size,
                        groups=args.groups, learning_rate=args.learning_rate, seed=args.seed,
                        backend=args.backend, workers=args.workers, credit=args.credit,
                        hsa=args.hsa)
    except (LiveRoomError, ValueError, OSError) as exc:
        return fail("train", str(exc))
    print(json.dumps(summary))
    return 0


def run_latency(args) -> int:
    import asyncio

    from liveroom_sim.rollout.latency import measure

    try:
        env = env_id(args.env)
        avatar = policy_spec(args, "openai").build()
    except (LiveRoomError, ValueError) as exc:
        return fail("latency", str(exc))
    if problem := check_endpoint(args):
        return fail("latency", problem, EXIT_ENDPOINT)
    report = asyncio.run(measure(env, avatar, args.sessions, args.concurrency, args.turns,
                                 progress=not args.json))
    if args.json:
        print(json.dumps(report))
    else:
        _print_latency(report, args.turns)
    if report["errors"]:
        last = report.get("last_error") or "see the report"
        return fail("latency", f"{report['errors']} calls to the endpoint {endpoint_url(args)} failed "
                               f"({report['turn']['count']} turns measured): {last}", EXIT_ENDPOINT)
    return 0


def _print_latency(report: dict, turns: int) -> None:
    print(f"{report['sessions']} sessions x {turns} turns against {report['model']} "
          f"(concurrency {report['concurrency']}), {report['errors']} errors")
    for name in ("turn", "call"):
        r = report[name]
        if r["count"]:
            print(f"  per {name:<4}  n={r['count']:<5} p50 {r['p50']:.3f}s  p95 {r['p95']:.3f}s  p99 {r['p99']:.3f}s")
    if report["over_budget_share"] is not None:
        print(f"  tokens/s {report['tokens_per_second']}, turns over the {report['budget_s']}s budget: "
              f"{report['over_budget_share']:.1%}")


def run_export_sft(args) -> int:
    from liveroom_sim.train.sft import export_sft

    if problem := _out_file("export-sft", args.out, replace=args.force):
        return fail("export-sft", problem)
    try:
        env = env_id(args.env)
        spec = policy_spec(args)
        if spec.kind == "python":
            spec.build(0)  # a factory that fails fails the command here
    except (LiveRoomError, ValueError) as exc:
        return fail("export-sft", str(exc))
    if spec.kind == "openai" and (problem := check_endpoint(args)):
        return fail("export-sft", problem, EXIT_ENDPOINT)
    try:
        counts = export_sft(env, args.episodes, args.augment, args.out, spec.build(args.seed),
                            min_reward=args.min_reward, seed=args.seed, full_retry_share=args.full_retry_share,
                            progress=sys.stderr.isatty())  # its progress redraws one line: not for a log
    except LiveRoomError as exc:
        where = f"the endpoint {endpoint_url(args)} failed: " if spec.kind == "openai" else ""
        return fail("export-sft", f"{where}{exc}", EXIT_ENDPOINT if where else 2)
    except (ValueError, OSError) as exc:
        return fail("export-sft", str(exc))
    print(json.dumps({"out": args.out, **counts}))
    if spec.kind == "openai" and counts.get("failed_variants"):
        # The run went on past each failure (what was written is kept); still, say so.
        return fail("export-sft", f"{counts['failed_variants']} of {counts['variants']} variants stopped because the "
                                  f"endpoint {endpoint_url(args)} kept failing: {counts['failures'][0]}", EXIT_ENDPOINT)
    return 0
