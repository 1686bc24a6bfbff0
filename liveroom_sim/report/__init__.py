"""``liveroom report``: one self-contained HTML file from what LiveRoom wrote.

Sources, each detected from the path:

- a rollout file (``liveroom rollout --out FILE``): an overview, groups side by side with
  their advantages, and per episode a chat replay with each turn's reward breakdown and
  reasons, campaign events on a timeline, hook blocks and tool faults marked, and plots of
  viewers, waiting questions, GMV and each reward component over stream time;
- a training run folder (``liveroom train --out DIR``): learning curves per component
  with the naive and scripted baselines, and each iteration's metrics;
- an eval folder (``liveroom eval --out DIR``): the run and its provenance, a table per
  suite with its breakdowns, and the failed cases with their transcripts.

Another source is added by writing one more ``(detect, sections)`` pair in :data:`SOURCES`.
This package sits just below the command line: it reads files and the data types of
``rollout``, ``train`` and ``rewards``; only ``liveroom_sim.cli`` imports it.
"""

from __future__ import annotations

from pathlib import Path

from liveroom_sim.report.evals import eval_sections, is_eval_run
from liveroom_sim.report.page import Page
from liveroom_sim.report.rollouts import ReportError, read_records, rollout_sections
from liveroom_sim.report.training import is_training_run, training_sections

__all__ = ["ReportError", "build_report", "write_report"]


def _rollout_file(path: Path) -> bool:
    return path.is_file()


SOURCES = (
    ("training run", is_training_run, lambda path, n: training_sections(path)),
    ("eval run", is_eval_run, lambda path, n: eval_sections(path, n)),
    ("rollout file", _rollout_file, lambda path, n: rollout_sections(read_records(path), n, str(path))),
)


def build_report(source: str | Path, max_episodes: int = 8) -> str:
    """The report of ``source`` as one HTML document (a string)."""
    path = Path(source)
    if not path.exists():
        parent = path.parent if str(path.parent) not in ("", ".") else Path(".")
        where = "" if parent.exists() else f" (the folder {str(parent)!r} does not exist either)"
        raise ReportError(f"{source} does not exist{where}")
    for kind, detect, sections in SOURCES:
        if detect(path):
            page = Page(title="LiveRoom report", subtitle=f"{kind}: {path.name}")
            page.sections = sections(path, max_episodes)
            return page.render()
    raise ReportError(f"{source} is a folder without metrics.csv or results.json: expected a rollout JSONL file, "
                      f"a `liveroom train --out` folder or a `liveroom eval --out` folder")


def write_report(source: str | Path, out: str | Path | None = None, max_episodes: int = 8) -> Path:
    """Write the report of ``source`` to ``out`` (default ``SOURCE.html``, or
    ``report.html`` inside a run folder); returns the path written."""
    path = Path(source)
    text = build_report(path, max_episodes)
    target = Path(out) if out else (path / "report.html" if path.is_dir() else path.with_name(path.name + ".html"))
    if target.is_dir():
        target = target / "report.html"
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target
