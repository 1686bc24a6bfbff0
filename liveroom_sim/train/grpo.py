"""GRPO training of the avatar policy, with a pluggable learner.

Each iteration samples groups through the rollout runner (any backend), and calls the
learner's ``update`` with them (group-relative credit: see
:mod:`liveroom_sim.train.learner`). The built-in learner needs no deep-learning library.
Before training, the naive and scripted hosts are played on the first iteration's seeds
(the baselines); after it, the last checkpoint and the naive and scripted hosts on
held-out seeds the training never saw. The run writes ``metrics.csv`` (one row per
iteration), ``learning_curve.svg``, ``policy.json`` (the latest checkpoint, loadable with
``--policy PATH``), ``checkpoints/``, ``rollouts/`` (each iteration's records and the
baselines') and ``summary.json``.

With ``hsa=True`` the training episodes are played under Harness-State Augmentation,
half of them on an augmented harness (as the TaoLive recipe: some rollouts see the
original harness, some an augmented one): the run writes ``hsa-spec.yaml``, the env's
spec with augmentation on, and trains on it; baselines and the held-out check stay on
the env as given (see ``docs/hsa.md``).
"""

from __future__ import annotations

import csv
import json
import re
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from liveroom_sim.rollout.advantages import no_signal_groups
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.train.learner import GRPOLearner

COLUMNS = ("iteration", "mean_return", "std_return", "min_return", "max_return", "episodes", "errors",
           "groups_without_signal", "step_norm", "seconds", "naive_return", "scripted_return")
#: Seeds far from the training seeds, for the held-out check of the checkpoint.
HELD_OUT_SEED = 1_000_000


def train(env: str, out: str | Path, iterations: int = 20, group_size: int = 4, groups: int = 1,
          learning_rate: float = 1.0, seed: int = 0, backend: str = "serial", workers: int = 2,
          learner: GRPOLearner | None = None, progress: bool = True, credit: str = "exchange",
          baseline_seeds: int = 2, held_out: int = 4, hsa: bool = False, hsa_probability: float = 0.5) -> dict:
    """Run GRPO; returns a summary (also written to ``summary.json``). See the module
    docstring for the files written.

    Args:
        iterations, group_size, groups: Each iteration plays ``groups`` groups of
            ``group_size`` samples (one seed per group); all must be at least 1.
        learning_rate, credit: The built-in learner's step size and credit mode.
        baseline_seeds: Seeds the naive and scripted baselines are played on (the first
            iteration's seed and those after it).
        held_out: Held-out seeds the last checkpoint and the naive and scripted hosts
            are played on after training (0: none); ``held_out_share`` is how far the
            checkpoint got from the naive host toward the scripted one there.
        hsa, hsa_probability: Train under Harness-State Augmentation, each episode
            augmented with this probability.
    """
    if iterations < 1 or group_size < 1 or groups < 1:
        raise ValueError(f"iterations, group_size and groups must be at least 1, got {iterations}, "
                         f"{group_size} and {groups}")
    started = time.perf_counter()
    out = Path(out)
    (out / "checkpoints").mkdir(parents=True, exist_ok=True)
    (out / "rollouts").mkdir(exist_ok=True)
    learner = learner or GRPOLearner(learning_rate=learning_rate, credit=credit)
    say = (lambda text: print(f"[train] {text}", file=sys.stderr)) if progress else (lambda text: None)
    say(f"baselines: naive and scripted hosts on {baseline_seeds} seeds")
    naive = _play(env, PolicySpec(kind="naive"), seed, baseline_seeds, out / "rollouts" / "baseline-naive.jsonl")
    scripted = _play(env, PolicySpec(kind="scripted"), seed, baseline_seeds,
                     out / "rollouts" / "baseline-scripted.jsonl")
    train_env = _hsa_spec(env, out, hsa_probability) if hsa else env
    rows = []
    for it in range(iterations):
        row = _iteration(train_env, learner, it, groups, group_size, seed, backend, workers, out)
        row.update(naive_return=naive, scripted_return=scripted)
        rows.append(row)
        _save(out, it, learner, rows)
        say(f"iteration {it + 1}/{iterations}  mean return {row['mean_return']:.2f}  "
            f"(naive {naive:.2f}, scripted {scripted:.2f})  {row['seconds']:.1f}s")
    summary = {"out": str(out), "iterations": iterations, "first_mean_return": rows[0]["mean_return"],
               "last_mean_return": rows[-1]["mean_return"], "naive_return": naive, "scripted_return": scripted,
               "checkpoint": str(out / "policy.json"), "hsa": hsa}
    if held_out:
        say(f"held-out check: the checkpoint and the naive and scripted hosts on {held_out} unseen seeds")
        summary.update(_held_out(env, out, held_out))
    summary["seconds"] = round(time.perf_counter() - started, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def _iteration(env: str, learner: GRPOLearner, it: int, groups: int, group_size: int, seed: int, backend: str,
               workers: int, out: Path) -> dict:
    """Iteration ``it``: its groups played with the learner's parameters, one update; its row."""
    t0 = time.perf_counter()
    records_path = out / "rollouts" / f"iter-{it:04d}.jsonl"
    config = RolloutConfig(
        env=env, policy=PolicySpec(kind="learned", parameters=learner.parameters), episodes=groups * group_size,
        group_size=group_size, seed=seed + it * groups, out=records_path, backend=backend, workers=workers,
        record_messages=False, progress=False, force=True)  # the run owns its folder
    report = run_rollouts(config)
    records = [json.loads(line) for line in records_path.read_text().splitlines()]
    scored = [r for r in records if r["error"] is None]
    by_group: dict[int, list[dict]] = defaultdict(list)
    for r in scored:
        by_group[r["group_id"]].append(r)
    stats = learner.update(list(by_group.values()))
    returns = np.asarray([r["return"] for r in scored]) if scored else np.zeros(1)
    return {"iteration": it, "mean_return": round(float(returns.mean()), 4), "std_return": round(float(returns.std()), 4),
            "min_return": round(float(returns.min()), 4), "max_return": round(float(returns.max()), 4),
            "episodes": len(records), "errors": report["errors"],
            "groups_without_signal": len(no_signal_groups(scored)), "step_norm": round(stats["step_norm"], 6),
            "seconds": round(time.perf_counter() - t0, 3)}


def _held_out(env: str, out: Path, seeds: int) -> dict:
    """The checkpoint and the naive and scripted hosts on ``seeds`` unseen seeds, and how far
    the checkpoint got from the naive host toward the scripted one."""
    rollouts = out / "rollouts"
    learned = _play(env, PolicySpec(kind="learned", checkpoint=str((out / "policy.json").resolve())),
                    HELD_OUT_SEED, seeds, rollouts / "held-out-learned.jsonl")
    naive = _play(env, PolicySpec(kind="naive"), HELD_OUT_SEED, seeds, rollouts / "held-out-naive.jsonl")
    scripted = _play(env, PolicySpec(kind="scripted"), HELD_OUT_SEED, seeds, rollouts / "held-out-scripted.jsonl")
    return {"held_out_return": learned, "held_out_naive_return": naive, "held_out_scripted_return": scripted,
            "held_out_share": gap_share(learned, naive, scripted)}


def gap_share(value: float, naive: float, scripted: float) -> float | None:
    """How far ``value`` is from the naive host's return toward the scripted host's
    (0: naive, 1: scripted), or ``None`` when the two baselines are equal."""
    return None if scripted == naive else round((value - naive) / (scripted - naive), 4)


def _hsa_spec(env: str, out: Path, probability: float) -> str:
    """A spec file in ``out`` that is ``env``'s with augmentation on (``probability`` per
    episode, again after each mid-stream harness change); returns its path."""
    import gymnasium as gym

    from liveroom_sim import resolve_env_id

    base = Path(gym.spec(resolve_env_id(env)).kwargs["spec"]).resolve()
    path = out / "hsa-spec.yaml"
    env_id = re.sub(r"-v(\d+)$", r"-HSATrain-v\1", base.stem)  # ids end in a version
    path.write_text(f"# {env} under Harness-State Augmentation, written by `liveroom train --hsa`.\n"
                    f"extends: {json.dumps(str(base))}\nid: {env_id}\n"
                    f"harness_augmentation:\n  probability: {probability}\n  at_harness_change: true\n")
    return str(path)


def _play(env: str, policy: PolicySpec, seed: int, episodes: int, path: Path) -> float:
    """The mean return of ``policy`` over ``episodes`` seeds from ``seed`` on."""
    report = run_rollouts(RolloutConfig(env=env, policy=policy, episodes=episodes, group_size=1, seed=seed, out=path,
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
