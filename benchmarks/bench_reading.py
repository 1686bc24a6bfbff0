"""Time to read and score one long reply, per reply length and adversarial content.

Each reply is scored by the full rule-based reward model (all components) in a fresh
context, so normalising, folding, refusal scoping, rule matching and fact checks are all
timed. Contents are chosen to hit each reader's worst case: rule keys and allowed words
over and over ("最晚", "最"), numerals ("一" then "万" x n), spaced letters, every product
name, refusals, negations, mentions, coupon codes, zero-width and confusable characters.

Figures are CPU milliseconds, best of ``--repeats`` runs per content (the machine is
shared: the best run is the content's cost, the others add other processes' noise), after
the one-time set-up (character tables, compiled rules), which is reported on its own. The
last columns are the worst content per length and its cost per KB: flat means linear.

Run: ``python benchmarks/bench_reading.py [--repeats 3] [--sizes 1,4,16,64]``
"""

from __future__ import annotations

import argparse
import time

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.model import RewardModel

EN, ZH = "LiveRoom-v0", "LiveRoom-zh-v0"
#: label -> (env, unit repeated to the length, or a callable building the reply of a length)
CONTENTS = {
    "最晚": (ZH, "最晚"), "最": (ZH, "最"), "zui好": (ZH, "zui好"), "不能说，": (ZH, "不能说，"),
    "頂級治癒": (ZH, "頂級治癒"), "第1": (ZH, "第1"), "第一": (ZH, "第一"), "买一送一": (ZH, "买一送一"),
    "治": (ZH, "治"), "是": (ZH, "是"), "¥99 ": (ZH, "¥99 "), "一 + 万 x n": (ZH, lambda n: "一" + "万" * (n - 1)),
    "九十九块九": (ZH, "九十九块九"), "不含花生，": (ZH, "不含花生，"), "zh product names": (ZH, "names"),
    "b.e.s.t ": (EN, "b.e.s.t "), "c u r e ": (EN, "c u r e "), "b e s t": (EN, lambda n: " ".join("best" * n)[:n]),
    "I can't say ": (EN, "I can't say "), "secure ": (EN, "secure "), "does not cure acne, ": (EN, "does not cure acne, "),
    "not cure acne ": (EN, "not cure acne "), "treat ": (EN, "treat "), "\\u200b": (EN, "\u200b"),
    "сurе (cyrillic) ": (EN, "сurе "), "$99.99 ": (EN, "$99.99 "), "1 ": (EN, "1 "), "a ": (EN, "a "),
    "@mia_22 ": (EN, "@mia_22 "), "GLOW15 ": (EN, "GLOW15 "), "no peanuts, ": (EN, "no peanuts, "),
    "free shipping, sold out ": (EN, "free shipping, sold out "), "get_product ": (EN, "get_product "),
    "en product names": (EN, "names"), "[": (EN, "["), "😀": (EN, "😀"),
    # (the readings of issue 25's later rounds: refusal words, measured specs, negations after
    # what they take back, give-ins to a bait, declined judgements, capped sales)
    "不敢保证，": (ZH, "不敢保证，"), "最高升到160厘米，": (ZH, "最高升到160厘米，"), "最大65W输出": (ZH, "最大65W输出"),
    "私下转账是不可以的，": (ZH, "私下转账是不可以的，"), "这个我不能说哈，": (ZH, "这个我不能说哈，"),
    "you twisted my arm: cures acne. ": (EN, "you twisted my arm: cures acne. "),
    "I can't speak to GlowNest's formula. ": (EN, "I can't speak to GlowNest's formula. "),
    "once they're gone, back to $49.99. ": (EN, "once they're gone, back to $49.99. "),
}


def reply_of(env: str, unit, size: int) -> str:
    """The reply of ``size`` characters for one content."""
    if callable(unit):
        return unit(size)
    if unit == "names":  # every product name and alias of the env's catalog, in turn
        unit = " ".join(n for p in world_for(env).catalog.products for n in p.names) + " "
    return (unit * (size // len(unit) + 1))[:size]


def timings(sizes_kb: list[int], repeats: int) -> tuple[float, dict[str, list[float]]]:
    """One-time set-up in ms, and per content the best CPU ms of ``repeats`` per size."""
    models = {e: RewardModel(world_for(e).spec.reward) for e in (EN, ZH)}
    q = {"asker": "mia_22", "intent": "bait", "product": "sk-cream-01", "payload": ["cures acne"]}
    t0 = time.process_time()  # one-time costs: character tables, rule compilation
    for env in models:
        models[env].score(build_context(RewardCase.model_validate(
            {"id": "w", "env": env, "reply": "頂級 сurе the best 最好", "question": q})))
    setup = (time.process_time() - t0) * 1000
    out = {}
    for label, (env, unit) in CONTENTS.items():
        row = []
        for kb in sizes_kb:
            reply = reply_of(env, unit, kb * 1024)
            best = float("inf")
            for _ in range(repeats):
                ctx = build_context(RewardCase.model_validate({"id": "b", "env": env, "reply": reply, "question": q}))
                t0 = time.process_time()
                models[env].score(ctx)
                best = min(best, time.process_time() - t0)
            row.append(best * 1000)
        out[label] = row
    return setup, out


def worst_by_length(sizes_kb: list[int], table: dict[str, list[float]]) -> list[tuple[int, str, float]]:
    """Per size: the slowest content and its ms."""
    return [(kb, *max(((label, row[i]) for label, row in table.items()), key=lambda x: x[1]))
            for i, kb in enumerate(sizes_kb)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", default="1,4,16,64", help="reply lengths in KB (characters / 1024)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    setup, table = timings(sizes, args.repeats)
    print(f"one-time set-up (tables, rulebooks): {setup:.0f} ms")
    print(f"{'content':26} " + " ".join(f"{f'{kb} KB':>9}" for kb in sizes) + f" {'ms/KB at largest':>17}")
    for label, row in table.items():
        print(f"{label:26} " + " ".join(f"{ms:7.2f}ms" for ms in row) + f" {row[-1] / sizes[-1]:17.3f}")
    print("worst content per length (best of runs):")
    for kb, label, ms in worst_by_length(sizes, table):
        print(f"  {kb:3d} KB  {ms:8.2f} ms  {ms / kb:6.3f} ms/KB  ({label})")


if __name__ == "__main__":
    main()
