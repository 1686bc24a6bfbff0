"""``liveroom eval`` (run a policy on the frozen suites) and ``liveroom eval-suites``
(generate them). See ``docs/eval.md``."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from liveroom_sim.cli.common import EXIT_ENDPOINT, check_endpoint, fail, int_at_least, policy_spec


def _suites(text: str) -> tuple[str, ...]:
    import argparse

    from liveroom_sim.errors import did_you_mean
    from liveroom_sim.evals.cases import SUITES

    names = tuple(dict.fromkeys(s.strip() for s in text.split(",") if s.strip()))
    for n in names:
        if n not in SUITES:
            raise argparse.ArgumentTypeError(f"unknown suite {n!r}{did_you_mean(n, SUITES)}; expected some of "
                                             f"{','.join(SUITES)}")
    if not names:
        raise argparse.ArgumentTypeError("name at least one suite")
    return names


def add_eval_parsers(sub, llm_options) -> None:
    ev = sub.add_parser("eval", help="run a policy on the frozen evaluation suites (lsqa, hvqa, robust, follow)",
                        description="Run each case's complete turn (tool calls included, within the harness's turn "
                                    "limit) and score accuracy, effectiveness, compliance violations, tool rationality, "
                                    "latency and tokens; write OUT/results.json and OUT/summary.md.")
    ev.add_argument("--suite", type=_suites, default="lsqa,hvqa,robust,follow", help="comma-separated suites")
    ev.add_argument("--policy", default=None, help="scripted, naive, openai, a checkpoint path, the eval baseline "
                                                     "memorising, or your own policy as package.module:factory or "
                                                     "path/file.py:factory (called once per case sample, with seed= "
                                                     "when it takes one) (default: scripted, or openai when "
                                                     "--base-url/--model are given)")
    llm_options(ev)
    ev.add_argument("--concurrency", type=int_at_least(1), default=8, help="cases in flight at once (LLM policies)")
    ev.add_argument("--samples", type=int_at_least(1), default=1, help="samples per case (pass@1 and pass^k)")
    ev.add_argument("--limit", type=int_at_least(1), default=None, help="at most this many cases per suite (default: all)")
    ev.add_argument("--out", default="eval-out", help="folder for cases.jsonl, results.json and summary.md")
    ev.add_argument("--resume", action="store_true", help="go on from OUT/cases.jsonl (same settings)")
    ev.add_argument("--force", action="store_true", help="replace the results in OUT if it holds some")
    ev.add_argument("--judge-model", action="append", default=None,
                    help="also grade with the LLM judge (repeat for up to three models that vote; default: no judge)")
    ev.add_argument("--judge-base-url", default=None, help="the judges' endpoint (default: --base-url)")
    from liveroom_sim.cli.rewards import add_judge_options

    add_judge_options(ev, timeout=False)  # the judge tier (docs/judge.md); --timeout bounds its calls too
    ev.add_argument("--suites-dir", default=None, help="suite files to use (default: the package's)")
    ev.add_argument("--timeout", type=float, default=60.0, help="seconds per LLM call before the case fails")
    ev.set_defaults(func=run_eval_command)

    gen = sub.add_parser("eval-suites", help="generate the frozen evaluation suites from the specs",
                         description="Play the reference host on held-out seeds and write the four suites "
                                     "(gzip JSON lines) and their MANIFEST.json; deterministic.")
    gen.add_argument("--out", default=None, help="folder to write (default: the package's suites folder)")
    gen.add_argument("--suite", type=_suites, default="lsqa,hvqa,robust,follow", help="comma-separated suites")
    gen.add_argument("--lsqa", type=int_at_least(10), default=None, help="lsqa cases, hvqa gets one twin each (default: the shipped suite's count)")
    gen.add_argument("--robust", type=int_at_least(10), default=None, help="robust cases (default: the shipped suite's count)")
    gen.add_argument("--follow", type=int_at_least(10), default=None, help="follow cases (default: the shipped suite's count)")
    gen.add_argument("--check", action="store_true",
                     help="do not generate: run the generator's self-checks over every case of the suites in --out "
                          "(answer derivable, condition applied, twin differs, question shown); exit 1 on a problem")
    gen.add_argument("--review", type=int_at_least(1), default=None, metavar="N",
                     help="do not generate: print N cases per suite, drawn at random among those nobody has "
                          "signed off, as cards a person reads (docs/eval.md, the human-verified subset; "
                          "default: none, generate)")
    gen.add_argument("--review-seed", type=int, default=0, help="the draw of --review (default 0)")
    gen.add_argument("--who", default=None, help="with --review: also print sign-off entries for verified.yaml "
                                                 "in this reader's name, to fill in (default: none, no entries)")
    gen.add_argument("--verified", action="store_true",
                     help="do not generate: count the human-verified subset per suite and language, and name the "
                          "sign-offs whose case changed since it was read; exit 1 on a stale or wrong one")
    gen.set_defaults(func=run_generate)


def run_review(args) -> int:
    import datetime

    from liveroom_sim.evals.cases import SuiteError, load_suite
    from liveroom_sim.evals.review import card, load_signoffs, pick, signed, stub

    try:
        suites = {s: load_suite(s, Path(args.out) if args.out else None)[1] for s in args.suite}
        signoffs = load_signoffs()
    except (SuiteError, ValueError) as exc:
        return fail("eval-suites", str(exc))
    for suite, cases in suites.items():
        held, _ = signed(cases, signoffs)
        chosen = pick(cases, args.review, args.review_seed, set(held))
        for c in chosen:
            print(card(c))
        if args.who:
            print(stub(chosen, args.who, datetime.date.today().isoformat()))
    return 0


def run_verified(args) -> int:
    from collections import Counter

    from liveroom_sim.evals.cases import SuiteError, load_suite
    from liveroom_sim.evals.review import MIN_VERIFIED, load_signoffs, signed

    try:
        cases = [c for s in args.suite for c in load_suite(s, Path(args.out) if args.out else None)[1]]
        signoffs = load_signoffs()
    except (SuiteError, ValueError) as exc:
        return fail("eval-suites", str(exc))
    held, stale = signed(cases, signoffs)
    by_id = {c.id: c for c in cases}
    right = Counter((by_id[i].suite, by_id[i].language) for i, s in held.items() if s.verdict == "right")
    wrong = [s for s in held.values() if s.verdict == "wrong"]
    for (suite, language), n in sorted(right.items()):
        print(f"{suite} {language}: {n} cases signed right")
    for s in stale:
        print(f"stale: {s.id} (read {s.when} by {s.who}; the case changed or is gone: read it again)")
    for s in wrong:
        print(f"wrong: {s.id}: {s.note}")
    total = sum(right.values())
    print(f"{total} cases verified by a person (at least {MIN_VERIFIED} wanted), {len(stale)} stale, {len(wrong)} wrong")
    return 1 if stale or wrong else 0


def run_check(args) -> int:
    from liveroom_sim.evals.cases import SuiteError, load_suite
    from liveroom_sim.evals.selfcheck import check_suites

    try:
        suites = {s: load_suite(s, Path(args.out) if args.out else None)[1] for s in ("lsqa", *args.suite)}
    except SuiteError as exc:
        return fail("eval-suites", str(exc))
    start = time.perf_counter()
    problems = check_suites({s: suites[s] for s in dict.fromkeys(("lsqa", *args.suite))})
    for case_id, found in problems.items():
        print(f"{case_id}: {'; '.join(found)}")
    total = sum(len(suites[s]) for s in dict.fromkeys(("lsqa", *args.suite)))
    print(f"{total - len(problems)}/{total} cases pass the self-checks ({time.perf_counter() - start:.1f} s)")
    return 1 if problems else 0


def run_generate(args) -> int:
    from liveroom_sim.evals.generate import generate

    if args.check:
        return run_check(args)
    if args.review:
        return run_review(args)
    if args.verified:
        return run_verified(args)
    counts = {k: getattr(args, k) for k in ("lsqa", "robust", "follow") if getattr(args, k)}
    start = time.perf_counter()
    manifest = generate(Path(args.out) if args.out else None, args.suite, counts,
                        progress=lambda m: print(m, file=sys.stderr))
    for suite in args.suite:
        m = manifest[suite]
        print(f"{suite}: {m['count']} cases, {m['bytes'] / 1024:.0f} KiB, sha256 {m['sha256'][:16]}")
    print(f"generated in {time.perf_counter() - start:.1f} s")
    return 0


def run_eval_command(args) -> int:
    from liveroom_sim.evals.cases import SuiteError
    from liveroom_sim.evals.runner import EvalConfig, run_eval
    from liveroom_sim.evals.summary import markdown, run_provenance, summarize, write_outputs
    from liveroom_sim.llm.client import Endpoint

    from liveroom_sim.evals.baselines import BASELINES, BaselineSpec

    held = [name for name in ("cases.jsonl", "results.json", "summary.md") if (Path(args.out) / name).exists()]
    if held and not (args.resume or args.force):
        return fail("eval", f"{args.out} holds the results of a run ({', '.join(held)}): pass --resume to go on "
                            "with it, or --force to replace it")
    try:
        spec = BaselineSpec(args.policy) if args.policy in BASELINES else policy_spec(args)
        if spec.kind == "python":
            spec.build(0)  # a factory that fails fails the command here, not every case
    except ValueError as exc:
        return fail("eval", str(exc))
    if spec.kind == "openai":
        spec = spec.model_copy(update={"timeout_s": args.timeout, "max_retries": 1})
        problem = check_endpoint(args)
        if problem:
            return fail("eval", problem, EXIT_ENDPOINT)
    judges = [Endpoint(m, args.judge_base_url or args.base_url, timeout_s=args.timeout) for m in args.judge_model or ()]
    if len(judges) > 3:
        return fail("eval", f"the judge votes with 1 to 3 models, got {len(judges)}")
    tier = ()
    if args.judge:
        from liveroom_sim.rewards.judge.service import judge_endpoints

        if judges:
            return fail("eval", "give --judge (the judge of every component) or --judge-model (engagement only), "
                                "not both")
        try:
            tier = judge_endpoints(args.judge, args.timeout)
        except ValueError as exc:
            return fail("eval", str(exc))
    config = EvalConfig(args.suite, spec, Path(args.out), args.samples, args.concurrency, args.limit, args.resume,
                        judges, Path(args.suites_dir) if args.suites_dir else None, tier, args.judge_policy)
    start = time.perf_counter()
    last = [0.0]

    def progress(n, total):
        now = time.perf_counter()
        if sys.stderr.isatty() and (now - last[0] > 0.5 or n == total):
            last[0] = now
            print(f"\r{n}/{total} cases", end="" if n < total else "\n", file=sys.stderr)

    try:
        headers, records = run_eval(config, progress)
    except (SuiteError, ValueError) as exc:
        return fail("eval", str(exc))
    summary = summarize(records, headers, config.settings(headers))
    summary["seconds"] = round(time.perf_counter() - start, 2)
    summary["provenance"] = run_provenance(records, headers)
    write_outputs(config.out, records, summary)
    print(markdown(summary), end="")
    print(f"{len(records)} cases in {summary['seconds']:.1f} s; wrote {config.out / 'results.json'} and "
          f"{config.out / 'summary.md'} (`liveroom report {config.out}` makes an HTML report of them)")
    return 0
