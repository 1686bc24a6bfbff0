"""GRPO training of the avatar policy, with a pluggable learner.

Each iteration samples groups through the rollout runner (any backend), computes
group-relative advantages, and calls the learner's ``update``. The built-in learner
(:class:`liveroom_sim.train.learner.GRPOLearner`) needs no deep-learning library. The run
writes ``metrics.csv`` (one row per iteration), ``learning_curve.svg``, ``policy.json``
(the latest checkpoint, loadable with ``--policy PATH``) and ``checkpoints/``.
"""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path

import numpy as np

from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.train.learner import GRPOLearner

COLUMNS = ("iteration", "mean_return", "std_return", "min_return", "max_return", "episodes", "errors",
           "step_norm", "seconds", "naive_return", "scripted_return")


def train(env: str, out: str | Path, iterations: int = 20, group_size: int = 8, groups: int = 4,
          learning_rate: float = 0.5, seed: int = 0, backend: str = "serial", workers: int = 2,
          learner: GRPOLearner | None = None, progress: bool = True) -> dict:
    """Run GRPO; returns a summary. See the module docstring for the files written."""
    out = Path(out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "rollouts").mkdir(exist_ok=True)
    learner = learner or GRPOLearner(learning_rate=learning_rate)
    eval_seeds = groups  # baselines on the first iteration's seeds
    naive = _baseline(env, "naive", seed, eval_seeds, out)
    scripted = _baseline(env, "scripted", seed, eval_seeds, out)
    rows = []
    for it in range(iterations):
        started = time.perf_counter()
        records_path = out / "rollouts" / f"iter-{it:04d}.jsonl"
        config = RolloutConfig(
            env=env, policy=PolicySpec(kind="learned", parameters=learner.parameters), episodes=groups * group_size,
            group_size=group_size, seed=seed + it * groups, out=records_path, backend=backend, workers=workers,
            record_messages=False, progress=False, force=True)  # the run owns its folder
        report = run_rollouts(config)
        records = [json.loads(line) for line in records_path.read_text().splitlines()]
        scored = [r for r in records if r["error"] is None]
        stats = learner.update([(r["advantage"], [tuple(d) for d in r["decisions"]]) for r in scored])
        returns = np.asarray([r["return"] for r in scored]) if scored else np.zeros(1)
        row = {"iteration": it, "mean_return": round(float(returns.mean()), 4), "std_return": round(float(returns.std()), 4),
               "min_return": round(float(returns.min()), 4), "max_return": round(float(returns.max()), 4),
               "episodes": len(records), "errors": report["errors"], "step_norm": round(stats["step_norm"], 6),
               "seconds": round(time.perf_counter() - started, 3), "naive_return": naive, "scripted_return": scripted}
        rows.append(row)
        _save(out, it, learner, rows)
        if progress:
            print(f"[train] iteration {it + 1}/{iterations}  mean return {row['mean_return']:.2f}  "
                  f"(naive {naive:.2f}, scripted {scripted:.2f})  {row['seconds']:.1f}s", file=sys.stderr)
    return {"out": str(out), "iterations": iterations, "first_mean_return": rows[0]["mean_return"] if rows else None,
            "last_mean_return": rows[-1]["mean_return"] if rows else None, "naive_return": naive,
            "scripted_return": scripted, "checkpoint": str(out / "policy.json")}


def _baseline(env: str, policy: str, seed: int, episodes: int, out: Path) -> float:
    report = run_rollouts(RolloutConfig(env=env, policy=PolicySpec(kind=policy), episodes=episodes, group_size=1,
                                        seed=seed, out=out / "rollouts" / f"baseline-{policy}.jsonl",
                                        record_messages=False, progress=False, force=True))
    return report["mean_return"]


def _save(out: Path, it: int, learner: GRPOLearner, rows: list[dict]) -> None:
    checkpoint = {"kind": "liveroom-learned-avatar", "iteration": it, "parameters": learner.parameters}
    text = json.dumps(checkpoint, indent=1)
    (out / "checkpoints" / f"iter-{it:04d}.json").write_text(text)
    (out / "policy.json").write_text(text)
    with (out / "metrics.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    (out / "learning_curve.svg").write_text(svg_curve(rows))


def svg_curve(rows: list[dict], width: int = 640, height: int = 360) -> str:
    """The mean return per iteration as an SVG line chart, with the naive and scripted
    hosts' returns as reference lines."""
    pad = 50
    xs = [r["iteration"] for r in rows]
    refs = [v for v in (rows[0]["naive_return"], rows[0]["scripted_return"]) if v is not None] if rows else []
    ys = [r["mean_return"] for r in rows] + refs
    lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
    hi = hi if hi > lo else lo + 1.0
    span_x = max(1, max(xs) if xs else 1)

    def px(x: float) -> float:
        return pad + (width - 2 * pad) * x / span_x

    def py(y: float) -> float:
        return height - pad - (height - 2 * pad) * (y - lo) / (hi - lo)

    points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, (r["mean_return"] for r in rows)))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
             '<rect width="100%" height="100%" fill="white"/>',
             f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" stroke="black"/>',
             f'<line x1="{pad}" y1="{pad}" x2="{pad}" y2="{height - pad}" stroke="black"/>',
             f'<text x="{width / 2}" y="{height - 12}" text-anchor="middle">iteration</text>',
             f'<text x="14" y="{height / 2}" transform="rotate(-90 14 {height / 2})" text-anchor="middle">mean return</text>',
             f'<text x="{pad - 4}" y="{py(hi) + 4:.1f}" text-anchor="end">{hi:.0f}</text>',
             f'<text x="{pad - 4}" y="{py(lo) + 4:.1f}" text-anchor="end">{lo:.0f}</text>']
    for label, value, colour in (("naive", rows[0]["naive_return"] if rows else None, "#c0392b"),
                                 ("scripted", rows[0]["scripted_return"] if rows else None, "#27ae60")):
        if value is not None:
            parts.append(f'<line x1="{pad}" y1="{py(value):.1f}" x2="{width - pad}" y2="{py(value):.1f}" '
                         f'stroke="{colour}" stroke-dasharray="6 4"/>')
            parts.append(f'<text x="{width - pad}" y="{py(value) - 4:.1f}" text-anchor="end" fill="{colour}">{label}</text>')
    parts.append(f'<polyline points="{points}" fill="none" stroke="#2c3e50" stroke-width="2"/>')
    parts.append("</svg>")
    return "\n".join(parts)
