"""Worst-case time to read and score one reply, per reply length and adversarial content.

Each reply is scored by the full rule-based reward model (all components) in a fresh
context, so normalising, folding, refusal scoping, rule matching and fact checks are all
timed. Figures are CPU milliseconds of the slowest of ``--repeats`` runs, after the
one-time set-up (character tables, compiled rules), which is reported on its own.

Run: ``python benchmarks/bench_reading.py [--repeats 3]``
"""

from __future__ import annotations

import argparse
import time

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.model import RewardModel

CONTENTS = {
    "最晚": ("LiveRoom-zh-v0", "最晚"), "最": ("LiveRoom-zh-v0", "最"), "zui好": ("LiveRoom-zh-v0", "zui好"),
    "不能说，": ("LiveRoom-zh-v0", "不能说，"), "頂級治癒": ("LiveRoom-zh-v0", "頂級治癒"),
"b.e.s.t ": ("LiveRoom-v0", "b.e.s.t "),
    "c u r e ": ("LiveRoom-v0", "c u r e "), "I can't say ": ("LiveRoom-v0", "I can't say "),
    "secure ": ("LiveRoom-v0", "secure "), "does not cure acne, ": ("LiveRoom-v0", "does not cure acne, "),
    "\\u200b": ("LiveRoom-v0", "\u200b"), "сurе (cyrillic) ": ("LiveRoom-v0", "сurе "),
    "$99.99 ": ("LiveRoom-v0", "$99.99 "), "a ": ("LiveRoom-v0", "a "), "treat ": ("LiveRoom-v0", "treat "),
    "not cure acne ": ("LiveRoom-v0", "not cure acne "), "1 ": ("LiveRoom-v0", "1 "), "¥99 ": ("LiveRoom-zh-v0", "¥99 "),
    "第1": ("LiveRoom-zh-v0", "第1"), "第一": ("LiveRoom-zh-v0", "第一"), "买一送一": ("LiveRoom-zh-v0", "买一送一"), "治": ("LiveRoom-zh-v0", "治"), "是": ("LiveRoom-zh-v0", "是"),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    models = {e: RewardModel(world_for(e).spec.reward) for e in ("LiveRoom-v0", "LiveRoom-zh-v0")}
    q = {"asker": "mia_22", "intent": "bait", "product": "sk-cream-01", "payload": ["cures acne"]}
    t0 = time.process_time()  # one-time costs: character tables, rule compilation
    for env in models:
        models[env].score(build_context(RewardCase.model_validate(
            {"id": "w", "env": env, "reply": "頂級 сurе the best 最好", "question": q})))
    print(f"one-time set-up (tables, rulebooks): {(time.process_time() - t0) * 1000:.0f} ms")
    print(f"{'content':24} {'1 KB':>9} {'8 KB':>9} {'64 KB':>9}")
    for label, (env, unit) in CONTENTS.items():
        row = []
        for size in (1024, 8192, 65536):
            reply = (unit * (size // len(unit) + 1))[:size]
            worst = 0.0
            for _ in range(args.repeats):
                ctx = build_context(RewardCase.model_validate({"id": "b", "env": env, "reply": reply, "question": q}))
                t0 = time.process_time()
                models[env].score(ctx)
                worst = max(worst, time.process_time() - t0)
            row.append(f"{worst * 1000:7.1f}ms")
        print(f"{label:24} {' '.join(row)}")


if __name__ == "__main__":
    main()
