"""Plots as inline SVG, drawn with matplotlib.

matplotlib (rather than hand-written SVG) gives every plot real axes: ticks chosen for the
data, labels, units, titles and legends, and a one-point series still shows as a marker.
Output is deterministic (a fixed hash salt per figure, no date in the metadata), and text
stays text (``svg.fonttype = none``) so the browser renders it with its own fonts: nothing
is fetched when the report is viewed.
"""

from __future__ import annotations

import io
import itertools
import textwrap
from collections.abc import Sequence

from liveroom_sim.rewards.registry import COMPONENTS

#: A colour per reward component, in the order they are declared, then the total and the baselines.
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#bcbd22", "#e377c2")
COLOURS = {**{c.name: colour for c, colour in zip(COMPONENTS, _PALETTE)},
           "total": "#222222", "naive": "#c0392b", "scripted": "#27ae60"}
_salt = itertools.count()
_DASHES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2, 1, 2)))
_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def figure(rows: int = 1, cols: int = 1, width: float = 7.5, height: float = 3.4, **kwargs):
    """A new figure and its axes (``squeeze=False``: always a 2-D array)."""
    plt = _pyplot()
    fig, axes = plt.subplots(rows, cols, figsize=(width, height), squeeze=False, **kwargs)
    for ax in axes.flat:
        ax.grid(True, color="#e5e5e5", linewidth=0.8)
        ax.set_axisbelow(True)
    return fig, axes


def to_svg(fig) -> str:
    """The figure as an ``<svg>`` element (no XML prologue), ready to inline in HTML."""
    import matplotlib

    plt = _pyplot()
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": f"liveroom-{next(_salt)}"}):
        fig.tight_layout()
        # bbox "tight": the saved area grows to hold a legend beside the plot and a long title
        fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def line_chart(series: dict[str, tuple[Sequence[float], Sequence[float]]], **kwargs) -> str:
    """Lines (name -> (xs, ys)) as SVG: see :func:`line_figure`."""
    return to_svg(line_figure(series, **kwargs))


def line_figure(series: dict[str, tuple[Sequence[float], Sequence[float]]], *, title: str, xlabel: str,
                ylabel: str, baselines: dict[str, float] | None = None, band: tuple | None = None,
                vlines: Sequence[float] = (), vline_label: str = "", width: float = 7.5, height: float = 3.4,
                integer_x: bool = False):
    """Lines (name -> (xs, ys)) with optional horizontal baselines, a shaded band
    ``(xs, low, high, label)`` and vertical markers (``integer_x``: ticks on whole numbers only,
    for iterations and episode numbers); a long title wraps; returns the figure."""
    fig, axes = figure(width=width, height=height)
    ax = axes[0, 0]
    draw_lines(ax, series, baselines=baselines, band=band, vlines=vlines, vline_label=vline_label)
    ax.set_title(textwrap.fill(title, 75))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if integer_x:
        whole_numbers(ax, [x for xs, _ in series.values() for x in xs])
    return fig


def whole_numbers(ax, xs: Sequence[float]) -> None:
    """Ticks on whole numbers only: each value when there are few, else as matplotlib picks."""
    from matplotlib.ticker import MaxNLocator

    values = sorted(set(xs))
    if 0 < len(values) <= 12:
        ax.set_xticks(values)
    else:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))


def draw_lines(ax, series, *, baselines=None, band=None, vlines=(), vline_label="") -> None:
    """Draw onto ``ax``: see :func:`line_chart`. A series of one point gets a marker."""
    if band is not None:
        xs, low, high, label = band
        ax.fill_between(xs, low, high, color="#2c3e50", alpha=0.15, linewidth=0, label=label)
    many = len(series) > 2
    for i, (name, (xs, ys)) in enumerate(series.items()):
        # Components often tie (several at 0): each gets its own dash and marker, drawn
        # thinner in later order, so a line under another still shows; the total on top.
        top = name == "total"
        ax.plot(xs, ys, label=name, color=COLOURS.get(name.split(" ")[0]),
                linewidth=2.2 if top else 1.6, zorder=10 if top else 3 + i * 0.1,
                linestyle="-" if top or not many else _DASHES[i % len(_DASHES)],
                marker=_MARKERS[i % len(_MARKERS)] if len(xs) <= 30 or many else None,
                markevery=max(1, len(xs) // 12), markersize=4, markerfacecolor="none" if many and not top else None)
    for name, value in (baselines or {}).items():
        if value is not None:
            ax.axhline(value, linestyle="--", linewidth=1.2, color=COLOURS.get(name.split(" ")[0], "#7f7f7f"),
                       label=f"{name} (baseline)")
    for i, x in enumerate(vlines):
        ax.axvline(x, color="#b0b0b0", linestyle=":", linewidth=1, label=vline_label if i == 0 and vline_label else None)
    handles = ax.get_legend_handles_labels()[0]
    if len(handles) > 3:  # beside the plot: inside, it covered the lines (the total among them)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, framealpha=0.9)
    elif handles:
        ax.legend(fontsize=8, loc="best", framealpha=0.9)


def grouped_bars(groups: Sequence[str], values: dict[str, Sequence[float]], *, title: str, xlabel: str,
                 ylabel: str, width: float = 7.5, height: float = 3.2) -> str:
    """Bars per group, one colour per series (e.g. one per sample); returns SVG."""
    import numpy as np

    fig, axes = figure(width=width, height=height)
    ax = axes[0, 0]
    n = max(1, len(values))
    step = 0.8 / n
    x = np.arange(len(groups))
    for i, (name, ys) in enumerate(values.items()):
        ax.bar(x + (i - (n - 1) / 2) * step, ys, width=step, label=name)
    ax.axhline(0, color="#555555", linewidth=0.8)
    ax.set_xticks(x, list(groups))
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if len(values) > 1:
        ax.legend(fontsize=8, ncols=min(n, 8), loc="best")
    return to_svg(fig)


def timeline(events: Sequence[tuple[float, str, str]], *, title: str, xlabel: str, x_max: float,
             width: float = 7.5) -> str:
    """Campaign events ``(time, kind, label)`` as markers on one row per kind; returns SVG."""
    kinds = sorted({k for _, k, _ in events})
    fig, axes = figure(width=width, height=max(1.6, 0.45 * len(kinds) + 1.0))
    ax = axes[0, 0]
    for row, kind in enumerate(kinds):
        xs = [t for t, k, _ in events if k == kind]
        ax.scatter(xs, [row] * len(xs), marker="D", s=28, zorder=3)
    ax.set_yticks(range(len(kinds)), kinds)
    ax.set_xlim(0, max(x_max, max((t for t, _, _ in events), default=0.0)) * 1.02 or 1)
    ax.set_ylim(-0.6, len(kinds) - 0.4)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    return to_svg(fig)
