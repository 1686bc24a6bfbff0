"""``liveroom rewards``: check, score, explain and calibrate reward cases.

``liveroom rewards check CASES.jsonl [--tolerance T]`` prints one line per failing case
(each differing component, expected and got, with the reward model's reasons) and a
summary line; it exits 0 when every case matches, 1 when some differ and 2 when the
file is unreadable or a line is invalid.

``liveroom rewards score CASES.jsonl [--json] [--judge URL[,URL,URL]] [--judge-policy P]``
prints every case's scores: one line each, or with ``--json`` one JSON object per line
(id, line, env, every component, total, gated, reasons). With ``--judge``, up to three
judge models vote on every reply (all cases in one batch) and their vote is applied to
compliance, factuality and engagement under the policy (``docs/judge.md``); each line
says what the judge found (``judge`` in JSON).

``liveroom rewards explain CASES.jsonl --id ID`` (or ``--index N``, counting cases from 0,
or ``--line N``, the file line ``check`` names) prints every component's value, weight
and reasons, and the total with its gate.

``liveroom rewards calibrate CASES.jsonl [--judge URL[,URL,URL]] [--judge-model M ...]
[--judge-base-url URL] [--json]`` reports, for a labelled file, how far the rule-based
model (and, with ``--judge``, the model with the judge's vote applied; with
``--judge-model``, the engagement-only judge) agrees with the labels, per component:
exact matches, accuracy, precision and recall of violations, and a confusion table.
With ``--judge`` it also reports rules-vs-judge agreement per compliance family and per
factuality claim kind (labels or not). Exit 0, or 2 on a bad file or when every judge
call failed.

The main CLI calls :func:`add_rewards_parser`; :func:`main` runs these commands alone.
"""

from __future__ import annotations

import argparse
import json
import sys

from liveroom_sim.cli.common import fail, redact_url

from liveroom_sim.errors import LiveRoomError, SpecError, did_you_mean


def add_rewards_parser(subparsers) -> argparse.ArgumentParser:
    """Add the ``rewards`` command (``check``, ``score``, ``explain``, ``calibrate``) to a
    CLI's subparsers. Each leaf parser sets ``func(args) -> int``, the exit code."""
    rewards = subparsers.add_parser("rewards", help="check, score, explain or calibrate reward cases")
    sub = rewards.add_subparsers(dest="rewards_command", metavar="{check,score,explain,calibrate}", required=True)
    fmt = argparse.ArgumentDefaultsHelpFormatter

    check = sub.add_parser("check", help="score every case and compare with its expected values", formatter_class=fmt)
    _cases_argument(check)
    check.add_argument("--tolerance", type=_tolerance, default=1e-6, metavar="T",
                       help="largest absolute difference that still matches")
    check.set_defaults(func=run_check)

    score = sub.add_parser("score", help="print every case's component scores, total and reasons")
    _cases_argument(score)
    score.add_argument("--json", action="store_true", help="one JSON object per case instead of a table")
    add_judge_options(score)
    score.set_defaults(func=run_score)

    explain = sub.add_parser("explain", help="explain the scores of one case")
    _cases_argument(explain)
    which = explain.add_mutually_exclusive_group(required=True)
    which.add_argument("--id", dest="case_id", metavar="ID", help="the case's id (default: the first case, --index 0)")
    which.add_argument("--index", type=int, metavar="N", help="the N-th case of the file, counting from 0 (default: 0)")
    which.add_argument("--line", type=int, metavar="N", help="the case on line N of the file, as check names it (default: --index)")
    explain.set_defaults(func=run_explain)

    calibrate = sub.add_parser("calibrate", help="agreement of the reward model (and an LLM judge) with labels",
                               formatter_class=fmt)
    _cases_argument(calibrate)
    add_judge_options(calibrate, timeout=False)
    calibrate.add_argument("--judge-model", action="append", default=[], metavar="M",
                           help="an engagement-only judge model (repeat for a vote of up to three); default: the "
                                "spec's judge, if any")
    calibrate.add_argument("--judge-base-url", action="append", default=[], metavar="URL",
                           help="the judges' OpenAI-compatible endpoint: once for all, or once per --judge-model "
                                "(default: $OPENAI_BASE_URL)")
    calibrate.add_argument("--judge-timeout", type=_positive, default=30.0, metavar="S",
                           help="seconds per judge request")
    calibrate.add_argument("--tolerance", type=_tolerance, default=1e-6, metavar="T",
                           help="largest absolute difference that counts as an exact match")
    calibrate.add_argument("--json", action="store_true", help="print the report as one JSON object")
    calibrate.set_defaults(func=run_calibrate)
    return rewards


def add_judge_options(parser: argparse.ArgumentParser, timeout: bool = True) -> None:
    """``--judge URL[,URL,URL]``, ``--judge-policy`` (and ``--judge-timeout``): the judge
    tier (``docs/judge.md``), shared by ``rollout``, ``eval`` and ``rewards``."""
    from liveroom_sim.rewards.judge.vote import POLICIES

    parser.add_argument("--judge", default=None, metavar="URL[,URL,URL]",
                        help="LLM judges that vote on compliance, factuality and engagement: one to three "
                             "OpenAI-compatible base URLs, each with its model after '#' (URL#MODEL; default: the "
                             "first model the server lists); see docs/judge.md")
    parser.add_argument("--judge-policy", choices=POLICIES, default="stricter",
                        help="when rules and judge disagree: stricter (a violation either finds counts; default), "
                             "judge (the judge decides) or rules (the vote is only recorded)")
    if timeout:
        parser.add_argument("--judge-timeout", type=_positive, default=30.0, metavar="S",
                            help="seconds per judge request")


def judge_service(args: argparse.Namespace, in_flight: int = 256):
    """The :class:`~liveroom_sim.rewards.judge.service.JudgeService` of ``--judge``, or
    ``None`` without it.

    Raises:
        ValueError: bad URLs, more than three, or a server that names no model.
    """
    if not getattr(args, "judge", None):
        return None
    from liveroom_sim.rewards.judge.service import JudgeService, judge_endpoints

    endpoints = judge_endpoints(args.judge, getattr(args, "judge_timeout", 30.0))
    return JudgeService(endpoints, args.judge_policy, max_in_flight=in_flight)


def _judge_note(vote) -> str:
    """What the judge found, in a few words, for the score table."""
    if vote is None:
        return "-"
    if not vote.counted:
        return "unavailable"
    found = [f"violation: {vote.family}" if vote.violation else "", f"error: {vote.claim}" if vote.error else ""]
    return "; ".join(f for f in found if f) or ("split" if vote.violation is None or vote.error is None else "clean")


def _cases_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("cases", metavar="CASES.jsonl", help="reward cases, one JSON object per line")


def _tolerance(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"expected a number >= 0, got {text!r}")
    return value


def _positive(text: str) -> float:
    value = _tolerance(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def _load(path: str):
    """The file's ``(line, case)`` pairs, or ``None`` after printing why not."""
    from liveroom_sim.rewards.golden import load_cases

    try:
        return load_cases(path)
    except SpecError as exc:
        fail("rewards", str(exc))
        return None


def run_check(args: argparse.Namespace) -> int:
    """``rewards check``: 0 when all cases match, 1 when some differ, 2 on a bad file."""
    from liveroom_sim.rewards.golden import check_cases

    cases = _load(args.cases)
    if cases is None:
        return 2
    result = check_cases(cases, tolerance=args.tolerance)
    print(result.report())
    return 0 if result.ok else 1


def run_score(args: argparse.Namespace) -> int:
    """``rewards score``: every case's scores (a table, or JSON lines); 2 on a bad file."""
    from liveroom_sim.rewards.golden import score_cases

    cases = _load(args.cases)
    if cases is None:
        return 2
    try:
        service = judge_service(args)
    except ValueError as exc:
        fail("rewards", f"{exc}")
        return 2
    judged = model_for = None
    if service is not None:
        from liveroom_sim.rewards.calibrate import judge_cases, judged_models

        judged = judge_cases(cases, service)
        model_for = judged_models(judged, service.policy)
    records = score_cases(cases, model_for)
    for r, j in zip(records, judged or ()):
        r["judge"] = j.vote.as_dict() if j.vote is not None else None
    if args.json:
        for r in records:
            print(json.dumps(r, ensure_ascii=False))
    else:
        names = [k for k in records[0] if k not in ("id", "line", "env", "gated", "reasons", "judge")] if records else []
        width = max([len(r["id"]) for r in records] + [4])
        print(f"{'case':<{width}}  " + "  ".join(f"{n:>11}" for n in names) + ("  judge" if judged else ""))
        for i, r in enumerate(records):
            print(f"{r['id']:<{width}}  " + "  ".join(f"{r[n]:>+11.3f}" for n in names)
                  + ("  gated" if r["gated"] else "") + (f"  {_judge_note(judged[i].vote)}" if judged else ""))
    if service is not None:
        print(f"judge ({', '.join(e.model for e in service.endpoints)}; policy {service.policy}): "
              + ", ".join(f"{k} {v}" for k, v in sorted(service.stats.items())), file=sys.stderr)
    return 0


def run_explain(args: argparse.Namespace) -> int:
    """``rewards explain``: print one case's explanation; 2 on a bad file or unknown case."""
    from liveroom_sim.rewards.golden import explain_case

    pairs = _load(args.cases)
    if pairs is None:
        return 2
    cases = [case for _, case in pairs]
    if args.case_id is not None:
        found = [c for c in cases if c.id == args.case_id]
        if not found:
            hint = did_you_mean(args.case_id, [c.id for c in cases])
            fail("rewards", f"no case with id {args.case_id!r} in {args.cases}{hint}")
            return 2
        case = found[0]
    elif args.line is not None:
        by_line = dict(pairs)
        if args.line not in by_line:
            fail("rewards", f"--line {args.line}: no case on that line of {args.cases} (cases are on lines "
                  f"{_spans(sorted(by_line))})")
            return 2
        case = by_line[args.line]
    elif 0 <= args.index < len(cases):
        case = cases[args.index]
    else:
        fail("rewards", f"--index {args.index} is out of range: {args.cases} holds {len(cases)} cases, "
              f"indexed 0 to {len(cases) - 1}")
        return 2
    print(explain_case(case))
    return 0


def _spans(lines: list[int]) -> str:
    """``1-5, 7, 9-12``: the lines as runs."""
    runs: list[list[int]] = []
    for n in lines:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}-{b}" for a, b in runs) or "(none)"


def run_calibrate(args: argparse.Namespace) -> int:
    """``rewards calibrate``: agreement with the labels, per component, for the rules and
    the judge; 2 on a bad file, bad judge options, or when every judge call failed."""
    from liveroom_sim.rewards.calibrate import calibrate

    cases = _load(args.cases)
    if cases is None:
        return 2
    if not any(case.expected for _, case in cases):
        fail("rewards", f"{args.cases} holds no labelled case (no case has 'expected' values)")
        return 2
    try:
        if args.judge and (args.judge_model or args.judge_base_url):
            raise ValueError("give --judge (the judge of every component) or --judge-model (engagement only), "
                             "not both")
        judge_for = None if args.judge else _judges(args, cases)
        args.judge_service = judge_service(args)
    except ValueError as exc:
        fail("rewards", f"{exc}")
        return 2
    rules = calibrate(cases, tolerance=args.tolerance)
    judged = judge = None
    if judge_for is not None:
        judge, model_for = judge_for
        judged = calibrate(cases, model_for, tolerance=args.tolerance)
    tier = _judge_tier(args, cases)
    if args.json:
        out = {"file": args.cases, "rules": rules.as_dict()}
        if judged is not None:
            out["judge"] = {**judged.as_dict(), "models": [e.model for e in judge.endpoints],
                            "calls": judge.calls, "failures": judge.failures}
        if tier is not None:
            service, voted, agreement = tier
            out["judge_tier"] = {**voted.as_dict(), **service.describe(), "stats": dict(service.stats),
                                 "agreement": agreement.as_dict()}
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(f"calibration of {args.cases}: {rules.cases} labelled cases\n")
        print("rule-based model\n" + rules.table() + "\n\n" + rules.confusion())
        if judged is not None:
            models = ", ".join(e.model for e in judge.endpoints)
            print(f"\nrule-based model + LLM judge ({models}; {judge.calls} calls, {judge.failures} failed)\n"
                  + judged.table() + "\n\n" + judged.confusion())
        elif tier is None:
            print("\nno LLM judge (name up to three with --judge URL[,URL,URL], or set reward.judge in the spec)")
        if tier is not None:
            service, voted, agreement = tier
            stats = service.stats
            print(f"\nrule-based model + judge vote ({', '.join(e.model for e in service.endpoints)}; policy "
                  f"{service.policy}; {stats['calls']} calls, {stats['failures']} failed)\n"
                  + voted.table() + "\n\n" + voted.confusion()
                  + "\n\nrules vs judge, per family (all cases, labelled or not)\n" + agreement.table())
    if tier is not None and tier[0].stats["calls"] and tier[0].stats["failures"] >= tier[0].stats["calls"]:
        urls = sorted({redact_url(e.resolved_base_url()) for e in tier[0].endpoints})
        fail("rewards", f"every judge call failed ({tier[0].stats['failures']} of {tier[0].stats['calls']}) at "
                        f"{', '.join(urls)}; the judge's tables are the rule-based model's")
        return 2
    if judge is not None and judge.calls and judge.failures >= judge.calls:
        urls = sorted({redact_url(e.resolved_base_url()) for e in judge.endpoints})
        fail("rewards", f"every judge call failed ({judge.failures} of {judge.calls}) at {', '.join(urls)}; "
              "the judge's table is the rule-based model's")
        return 2
    return 0


def _judge_tier(args: argparse.Namespace, cases):
    """``(service, calibration with the votes applied, rules-vs-judge agreement)`` for
    ``--judge``, or ``None``."""
    service = args.judge_service
    if service is None:
        return None
    from liveroom_sim.rewards.calibrate import calibrate, judge_agreement, judge_cases, judged_models

    judged = judge_cases(cases, service)
    voted = calibrate(cases, judged_models(judged, service.policy), tolerance=args.tolerance)
    return service, voted, judge_agreement((j.request.rules, j.vote) for j in judged if j.request is not None)


def _judges(args: argparse.Namespace, cases):
    """``(judge, env -> RewardModel)`` for the judge models asked for, or ``None``.

    Raises:
        ValueError: for more than three models, or base URLs that do not pair with them.
    """
    from liveroom_sim.llm.client import Endpoint
    from liveroom_sim.rewards.cases import world_for
    from liveroom_sim.rewards.judge import LLMJudge
    from liveroom_sim.rewards.model import RewardModel

    models, urls = args.judge_model, args.judge_base_url
    seed = 0
    if not models:
        configs = [world_for(case.env).spec.reward.judge for _, case in cases]
        config = next((c for c in configs if c is not None), None)
        if config is None:
            if urls:
                raise ValueError("--judge-base-url needs --judge-model")
            return None
        models, urls, seed = [config.model], [config.base_url] if config.base_url else [], config.seed
    if len(models) > 3:
        raise ValueError(f"a judge votes with at most three models, got {len(models)} --judge-model")
    if len(urls) not in (0, 1, len(models)):
        raise ValueError(f"give --judge-base-url once, or once per --judge-model ({len(models)}), "
                         f"not {len(urls)} times")
    urls = urls * len(models) if len(urls) == 1 else (urls or [None] * len(models))
    judge = LLMJudge([Endpoint(m, u, timeout_s=args.judge_timeout, max_retries=1) for m, u in zip(models, urls)],
                     seed=seed)

    def model_for(env: str) -> RewardModel:
        config = world_for(env).spec.reward.model_copy(update={"judge": None})
        return RewardModel(config, judge=judge)

    return judge, model_for


def main(argv: list[str] | None = None) -> int:
    """Run ``rewards ...`` alone, as ``python -m liveroom_sim.cli.rewards rewards check FILE``."""
    parser = argparse.ArgumentParser(prog="liveroom")
    add_rewards_parser(parser.add_subparsers(dest="command", metavar="{rewards}", required=True))
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except LiveRoomError as exc:
        fail("rewards", f"{exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
