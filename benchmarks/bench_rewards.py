"""Rule-based reward evaluations per second on one core.

About 50 varied turn contexts (both languages, every component, tool turns, long replies)
are built once from the golden suite; each timed evaluation scores a fresh shallow copy
without anything the context keeps (``analysis``, which carries the compliance reading,
``need``, ``serves_need``, ``credit``), so the reply is parsed again every time. The
reward keeps nothing on the market (its true prices are computed per claim: a memo on the market did not pay), but
the room's memo of derived values is cleared before each evaluation as the room clears it
on every event and purchase (``cold``, the headline); ``warm`` keeps it.
Each rate is CPU time of this process, shown best, median and worst over ``--repeats``
(the machine is shared; the best is the least disturbed).

Then the worst case per reply length: every adversarial content of ``bench_reading.py``
at each of ``--sizes`` KB, scored in a fresh context (best of ``--length-repeats`` runs per
content), and the slowest content per length with its milliseconds per KB: a flat
ms/KB column is reward time linear in reply length (``--sizes ""`` skips it).

Run: ``python benchmarks/bench_rewards.py [--contexts 50] [--evaluations 20000] [--repeats 5] [--sizes 1,4,16,64]``
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

from bench_reading import timings, worst_by_length

from liveroom_sim.rewards.cases import build_context, world_for
from liveroom_sim.rewards.context import TurnContext, _kept
from liveroom_sim.rewards.golden import load_cases
from liveroom_sim.rewards.model import RewardModel

GOLDEN = Path(__file__).resolve().parents[1] / "tests" / "golden" / "rewards.jsonl"


def say(message: str) -> None:
    """Progress on stderr (the figures alone go to stdout, as one JSON line)."""
    print(f"[{Path(__file__).stem}] {message}", file=sys.stderr, flush=True)


def contexts(n: int) -> list[tuple[RewardModel, object]]:
    """``n`` contexts spread evenly over the golden suite, each with its env's model."""
    cases = [case for _, case in load_cases(GOLDEN)]
    step = max(1, len(cases) // n)
    models = {env: RewardModel(world_for(env).spec.reward) for env in {c.env for c in cases}}
    return [(models[c.env], build_context(c)) for c in cases[::step][:n]]


def rate(pairs, evaluations: int, cold: bool) -> float:
    """Evaluations per CPU second over ``evaluations`` scorings of fresh context copies
    (each round's copies are made before its clock starts: copying is the benchmark's
    work, not the reward's)."""
    rounds = max(1, evaluations // len(pairs))
    spent = 0.0
    for _ in range(rounds):
        fresh = [(model, _fresh(ctx)) for model, ctx in pairs]
        t0 = time.process_time()
        for model, ctx in fresh:
            if cold:
                ctx.market.memo.clear()
            model.score(ctx)
        spent += time.process_time() - t0
    return rounds * len(pairs) / spent


#: What a context works out once per turn and keeps (the reading and what follows from it).
DERIVED = tuple(name for name, value in vars(TurnContext).items() if isinstance(value, _kept))


def _fresh(ctx):
    """A copy of ``ctx`` that has not read its reply yet."""
    new = copy.copy(ctx)
    for derived in DERIVED:
        new.__dict__.pop(derived, None)
    return new


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--contexts", type=int, default=50)
    ap.add_argument("--evaluations", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sizes", default="1,4,16,64", help="reply lengths in KB for the worst-case table ('' skips it)")
    ap.add_argument("--length-repeats", type=int, default=3)
    args = ap.parse_args()
    say(f"building {args.contexts} contexts from {GOLDEN.name}")
    pairs = contexts(args.contexts)
    rate(pairs, len(pairs), cold=False)  # warm up the regex and phrase caches once
    out = {"contexts": len(pairs), "evaluations": args.evaluations, "repeats": args.repeats}
    for label, cold in (("", True), ("_warm_memo", False)):
        # CPU time of this process; the machine's speed varies, so best and median are shown.
        rates = []
        for i in range(args.repeats):
            rates.append(rate(pairs, args.evaluations, cold))
            say(f"{'cold' if cold else 'warm'} memo, repeat {i + 1}/{args.repeats}: {rates[-1]:,.0f} evaluations/s")
        rates.sort()
        out[f"evaluations_per_second{label}"] = round(rates[-1], 1)
        out[f"evaluations_per_second{label}_median"] = round(rates[len(rates) // 2], 1)
        out[f"evaluations_per_second{label}_worst"] = round(rates[0], 1)
    if args.sizes:
        sizes = [int(x) for x in args.sizes.split(",")]
        say(f"worst case per reply length: {len(sizes)} lengths, best of {args.length_repeats} runs per content")
        _, table = timings(sizes, args.length_repeats)
        worst = worst_by_length(sizes, table)
        for kb, content, ms in worst:
            say(f"{kb:3d} KB: {ms:7.2f} ms ({ms / kb:.3f} ms/KB), slowest content {content!r}")
        out["worst_ms_by_length_kb"] = {str(kb): round(ms, 2) for kb, _, ms in worst}
        out["worst_content_by_length_kb"] = {str(kb): content for kb, content, _ in worst}
        out["worst_ms_per_kb_by_length_kb"] = {str(kb): round(ms / kb, 3) for kb, _, ms in worst}
    print(json.dumps(out, ensure_ascii=False))


if __name__ == "__main__":
    main()
