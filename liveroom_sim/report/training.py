"""Sections for a ``liveroom train`` run folder: learning curves, for the total and each of
the seven reward components, with the naive and scripted hosts as baselines.

The folder holds ``metrics.csv`` (one row per iteration) and ``rollouts/`` (each
iteration's records, ``iter-NNNN.jsonl``, and the baselines' ``baseline-naive.jsonl`` and
``baseline-scripted.jsonl``); per-component curves come from the records.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from liveroom_sim.report import plots
from liveroom_sim.report.episode import cards
from liveroom_sim.report.page import Section, esc
from liveroom_sim.report.rollouts import ReportError, read_records
from liveroom_sim.spec import COMPONENTS

BASELINES = ("naive", "scripted")


def is_training_run(path: Path) -> bool:
    return path.is_dir() and (path / "metrics.csv").is_file()


def _component_means(path: Path) -> dict[str, float] | None:
    if not path.is_file():
        return None
    try:
        records = [r for r in read_records(path) if r.get("return") is not None]
    except ReportError:
        return None
    if not records:
        return None
    out = {k: sum(r["returns"].get(k, 0.0) for r in records) / len(records) for k in COMPONENTS}
    out["total"] = sum(r["return"] for r in records) / len(records)
    return out


def read_metrics(folder: Path) -> list[dict]:
    try:
        with (folder / "metrics.csv").open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise ReportError(f"cannot read {folder / 'metrics.csv'}: {exc.strerror or exc}") from None
    out = []
    for n, row in enumerate(rows, 2):
        try:
            out.append({k: float(v) if v not in ("", None) else None for k, v in row.items()})
        except ValueError:
            raise ReportError(f"{folder / 'metrics.csv'}:{n}: a value is not a number") from None
    if not out:
        raise ReportError(f"{folder / 'metrics.csv'} has no iterations (the run wrote none)")
    return out


def training_sections(folder: Path) -> list[Section]:
    rows = read_metrics(folder)
    its = [int(r["iteration"]) + 1 for r in rows]
    base = {b: _component_means(folder / "rollouts" / f"baseline-{b}.jsonl") for b in BASELINES}
    per_it = [_component_means(folder / "rollouts" / f"iter-{int(r['iteration']):04d}.jsonl") for r in rows]
    last, first = rows[-1], rows[0]
    naive, scripted = last.get("naive_return"), last.get("scripted_return")
    best = max(r["mean_return"] for r in rows)
    gap = [("share of the naive-to-scripted gap closed (best iteration)",
            f"{(best - naive) / (scripted - naive):.0%}")] if naive is not None and scripted not in (None, naive) else []
    parts = [cards([("iterations", str(len(rows))), ("first mean return", f"{first['mean_return']:+.2f}"),
                    ("last mean return", f"{last['mean_return']:+.2f}"),
                    ("naive baseline", _fmt(naive)), ("scripted baseline", _fmt(scripted)), *gap,
                    *_held_out(folder)])]
    band = (its, [r["min_return"] for r in rows], [r["max_return"] for r in rows], "min to max over the batch")
    parts.append('<div class="plot">' + plots.line_chart(
        {"total (learner, batch mean)": (its, [r["mean_return"] for r in rows])},
        baselines={"naive": last.get("naive_return"), "scripted": last.get("scripted_return")}, band=band,
        title="Learning curve: mean episode return per iteration", xlabel="iteration",
        ylabel="mean return (points per episode)", height=3.8, integer_x=True) + "</div>")
    if all(per_it):
        fig, axes = plots.figure(4, 2, height=11.0, sharex=True)
        for ax, k in zip(axes.flat, COMPONENTS):
            plots.draw_lines(ax, {f"{k} (learner)": (its, [p[k] for p in per_it])},
                             baselines={b: (base[b] or {}).get(k) for b in BASELINES})
            ax.set_title(f"{k}: mean score sum per episode", fontsize=10)
            ax.set_ylabel("points per episode")
        for ax in axes.flat:
            plots.whole_numbers(ax, its)
        for ax in (axes[-1, 0], axes[-2, 1]):  # the bottom panel of each column
            ax.set_xlabel("iteration")
            ax.xaxis.set_tick_params(labelbottom=True)
        axes[-1, -1].set_visible(False)
        fig.suptitle("Learning curves per reward component (sums per episode), with baselines")
        parts.append(f'<div class="plot">{plots.to_svg(fig)}</div>')
    else:
        parts.append('<p class="note">Per-component curves need the rollouts/iter-*.jsonl files, and some '
                     "are missing.</p>")
    head = ["iteration", "mean_return", "std_return", "min_return", "max_return", "episodes", "errors",
            "groups_without_signal", "step_norm", "seconds"]
    table = "".join("<tr>" + "".join(f"<td>{_fmt(r.get(h), h)}</td>" for h in head) + "</tr>" for r in rows)
    parts.append("<h3>Metrics per iteration</h3><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head)
                 + f"</tr>{table}</table>")
    checkpoint = folder / "policy.json"
    if checkpoint.is_file():
        parts.append(f'<p class="note">Latest checkpoint: {esc(checkpoint)} (use it as <code>--policy '
                     f"{esc(folder)}</code> with demo, rollout or export-sft).</p>")
    return [Section("training", f"Training run: {folder}", "\n".join(parts), nav="Learning curves")]


def _held_out(folder: Path) -> list[tuple[str, str]]:
    """The held-out check of ``summary.json`` (the checkpoint and the naive and scripted
    hosts on seeds the training never saw), as cards."""
    try:
        summary = json.loads((folder / "summary.json").read_text())
    except (OSError, ValueError):
        return []
    if summary.get("held_out_return") is None:
        return []
    share = summary.get("held_out_share")
    return [("held-out: checkpoint", _fmt(summary["held_out_return"])),
            ("held-out: naive", _fmt(summary.get("held_out_naive_return"))),
            ("held-out: scripted", _fmt(summary.get("held_out_scripted_return"))),
            *([("held-out: share of the naive-to-scripted gap closed", f"{share:.0%}")] if share is not None else [])]


def _fmt(value, key: str = "") -> str:
    if value is None:
        return "n/a"
    if key in ("iteration", "episodes", "errors", "groups_without_signal"):
        return str(int(value) + (1 if key == "iteration" else 0))
    return f"{value:.4g}" if key in ("step_norm", "seconds") else f"{value:+.2f}"
