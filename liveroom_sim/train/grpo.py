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
    """Run GRPO; returns a summary. See the module docstring for the files written.

    ``iterations`` must be at least 1 (a run of none would write no checkpoint)."""
    if iterations < 1 or group_size < 1 or groups < 1:
        raise ValueError(f"iterations, group_size and groups must be at least 1, got {iterations}, "
                         f"{group_size} and {groups}")
    out = Path(out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "rollouts").mkdir(exist_ok=True)
    learner = learner or GRPOLearner(learning_rate=learning_rate)
    eval_seeds = groups  # baselines on the first iteration's seeds
    if progress:
        print(f"[train] baselines: naive and scripted hosts on {eval_seeds} seeds", file=sys.stderr)
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
            "scripted_return": scripted, "checkpoint": str(out / "policy.json") if rows else None}


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


def svg_curve(rows: list[dict], width: float = 7.5, height: float = 4.0) -> str:
    """The learning curve as SVG (drawn with matplotlib): the learner's mean return per
    iteration with its batch's min-to-max band, and the naive and scripted hosts' returns
    as dashed baselines; titled, with labelled axes, whole-number iteration ticks and a
    legend. A one-iteration run shows its point."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    its = [r["iteration"] + 1 for r in rows]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "liveroom-learning-curve"}):
        fig, ax = plt.subplots(figsize=(width, height))
        ax.grid(True, color="#e5e5e5")
        ax.set_axisbelow(True)
        if rows:
            ax.fill_between(its, [r["min_return"] for r in rows], [r["max_return"] for r in rows], color="#2c3e50",
                            alpha=0.15, linewidth=0, label="learner: min to max over the batch")
            ax.plot(its, [r["mean_return"] for r in rows], color="#2c3e50", linewidth=2, marker="o",
                    markersize=4 if len(rows) <= 40 else 0, label="learner: mean return")
            for name, colour in (("naive", "#c0392b"), ("scripted", "#27ae60")):
                value = rows[0].get(f"{name}_return")
                if value is not None:
                    ax.axhline(value, color=colour, linestyle="--", linewidth=1.3, label=f"{name} host (baseline)")
            ax.set_xlim(0.5, max(its) + 0.5)
        if 0 < len(its) <= 12:
            ax.set_xticks(its)
        else:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title("GRPO learning curve: mean episode return per iteration")
        ax.set_xlabel("iteration")
        ax.set_ylabel("mean return (points per episode)")
        if rows:
            ax.legend(fontsize=8, loc="best", framealpha=0.9)
        fig.tight_layout()
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # a bare <svg> element: valid on its own and inline in HTML
