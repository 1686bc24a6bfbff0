"""Sections for a ``liveroom eval`` folder: the run, a table per suite with its breakdowns,
and the failed cases with their transcripts.

The folder holds ``results.json`` (``summary``: the settings, the suites' versions, the
scores overall, per suite, kind, language, HSA operator and robustness condition, and the
run's provenance; ``cases``: one record per case with its inputs and samples).
"""

from __future__ import annotations

import json
from pathlib import Path

from liveroom_sim.evals.summary import COLUMNS
from liveroom_sim.report.episode import cards
from liveroom_sim.report.page import Section, esc
from liveroom_sim.report.rollouts import ReportError

_BREAKDOWNS = (("by_kind", "ask kind"), ("by_language", "language"), ("by_operator", "HSA operator (hvqa)"),
               ("by_condition", "robustness condition (robust)"))


def is_eval_run(path: Path) -> bool:
    return path.is_dir() and (path / "results.json").is_file()


def read_results(folder: Path) -> tuple[dict, list[dict]]:
    """The summary and case records of an eval folder."""
    try:
        data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(f"cannot read {folder / 'results.json'}: {getattr(exc, 'strerror', None) or exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("summary"), dict) or not isinstance(data.get("cases"), list):
        raise ReportError(f"{folder / 'results.json'} is not the results of `liveroom eval` (expected 'summary' and "
                          "'cases')")
    return data["summary"], data["cases"]


def eval_sections(folder: Path, max_failures: int) -> list[Section]:
    """Overview, one section per suite, and the failed cases (up to ``max_failures``
    with their transcripts; the rest listed)."""
    summary, cases = read_results(folder)
    sections = [Section("overview", f"Eval: {folder}", _overview(summary), nav="Overview")]
    for suite, scores in summary.get("by_suite", {}).items():
        mine = [c for c in cases if c.get("suite") == suite]
        sections.append(Section(f"suite-{suite}", f"Suite {suite}", _suite(suite, scores, mine, summary),
                                nav=f"{suite}  pass@1 {scores.get('pass@1', 0):.3f}", group="Suites"))
    failed = [c for c in cases if _failed(c)]
    sections.append(Section("failures", f"Failed cases ({len(failed)} of {len(cases)})",
                            _failures(failed, max_failures), nav=f"Failures ({len(failed)})", group="Cases"))
    return sections


def _failed(case: dict) -> bool:
    samples = case.get("samples") or []
    return bool(case.get("error_kind")) or not samples or not all(s.get("verdict", {}).get("pass") for s in samples)


def _table(rows: dict[str, dict], title: str) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in COLUMNS)
    body = "".join(f'<tr><td class="l">{esc(name)}</td>' + "".join(f"<td>{esc(_fmt(s.get(c)))}</td>" for c in COLUMNS)
                   + "</tr>" for name, s in rows.items())
    return f'<table><tr><th class="l">{esc(title)}</th>{head}</tr>{body}</table>'


def _fmt(value) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "" if value is None else str(value)


def _overview(summary: dict) -> str:
    s = summary.get("settings", {})
    policy = s.get("policy", {})
    overall = summary.get("overall", {})
    suites = ", ".join(f"{k} v{v.get('version')} ({str(v.get('sha256', ''))[:12]})" for k, v in s.get("suites", {}).items())
    parts = [cards([("cases", str(overall.get("cases", 0))), ("pass@1", _fmt(overall.get("pass@1"))),
                    ("accuracy", _fmt(overall.get("acc"))), ("errored", str(summary.get("errored", {}).get("cases", 0)))]),
             f"<p>Policy: {esc(json.dumps(policy, sort_keys=True))}. Samples per case: {esc(s.get('samples'))}. "
             f"Suites: {esc(suites)}. Took {esc(summary.get('seconds', '?'))} s.</p>",
             _table({**summary.get("by_suite", {}), "all": overall}, "suite")]
    if summary.get("provenance"):
        parts.append(f'<p class="note">Provenance: {esc(json.dumps(summary["provenance"], sort_keys=True))}</p>')
    gap = (summary.get("hvqa_gap") or {}).get("overall")
    if gap:
        parts.append(f"<p>HVQA-LSQA gap over {gap['pairs']} pairs: accuracy {gap['lsqa_acc']:.3f} vs {gap['hvqa_acc']:.3f} "
                     f"({gap['acc_gap']:+.3f}); pass@1 {gap['lsqa_pass@1']:.3f} vs {gap['hvqa_pass@1']:.3f} "
                     f"({gap['pass@1_gap']:+.3f}).</p>")
    return "\n".join(parts)


def _suite(suite: str, scores: dict, cases: list[dict], summary: dict) -> str:
    parts = [_table({suite: scores}, "suite")]
    for key, title in _BREAKDOWNS:
        rows = _regroup(cases, key)
        if rows:
            wanted = {k: summary[key][k] for k in rows if k in summary.get(key, {})}
            if wanted:
                parts.append(f"<h3>By {esc(title)}</h3>" + _table(wanted, title))
    if suite == "follow" and summary.get("follow_checks"):
        rows = "".join(f'<tr><td class="l">{esc(k)}</td><td>{v:.3f}</td></tr>' for k, v in summary["follow_checks"].items())
        parts.append(f'<h3>Instructions met</h3><table><tr><th class="l">check</th><th>met</th></tr>{rows}</table>')
    failed = [c for c in cases if _failed(c)]
    parts.append(f'<p><a href="#failures">{len(failed)} failed cases</a> of {len(cases)}.</p>')
    return "\n".join(parts)


def _regroup(cases: list[dict], key: str) -> set[str]:
    field = {"by_kind": "kind", "by_language": "language", "by_operator": "operator", "by_condition": "condition"}[key]
    return {str(c[field]) for c in cases if c.get(field) not in (None, "none")}


def _failures(failed: list[dict], limit: int) -> str:
    if not failed:
        return "<p>Every case passed.</p>"
    parts = [_case(c) for c in failed[:limit]]
    if len(failed) > limit:
        rest = ", ".join(esc(c["id"]) for c in failed[limit:])
        parts.append(f'<p class="note">{len(failed) - limit} more failed cases (`liveroom report --max-episodes N` '
                     f"shows more): {rest}</p>")
    return "\n".join(parts)


def _case(case: dict) -> str:
    q = (case.get("inputs") or {}).get("question") or {}
    inputs = case.get("inputs") or {}
    head = (f'<h3 id="case-{esc(case["id"])}">{esc(case["id"])} <small>({esc(case.get("suite"))}, '
            f'{esc(case.get("kind"))}, {esc(case.get("language"))})</small></h3>')
    lines = [f'<div class="turn"><b>@{esc(q.get("asker", "?"))}</b>: {esc(q.get("text", ""))}</div>']
    if inputs.get("must") or inputs.get("must_not"):
        lines.append(f'<p class="note">must state: {esc(", ".join(inputs.get("must", [])) or "-")}; '
                     f'must not: {esc(", ".join(inputs.get("must_not", [])) or "-")}</p>')
    if case.get("error"):
        lines.append(f'<p class="bad">error ({esc(case.get("error_kind"))}): {esc(case["error"])}</p>')
    for i, s in enumerate(case.get("samples") or []):
        v = s.get("verdict") or {}
        lines.append(f"<h4>sample {i}: {'pass' if v.get('pass') else 'fail'}, accuracy {esc(v.get('accuracy'))}, "
                     f"effectiveness {esc(v.get('effectiveness'))}</h4>")
        for action in s.get("actions") or []:
            lines.append(f'<div class="turn"><code>{esc(_action(action))}</code></div>')
        for label, key in (("tool errors", "tool_errors"), ("hooks", "hooks"), ("violations", None)):
            items = v.get("violations") if key is None else s.get(key)
            if items:
                lines.append(f'<p class="bad">{label}: {esc("; ".join(map(str, items)))}</p>')
        if v.get("reasons"):
            lines.append(f'<p class="note">why: {esc("; ".join(map(str, v["reasons"])))}</p>')
        if s.get("error"):
            lines.append(f'<p class="bad">error ({esc(s.get("error_kind"))}): {esc(s["error"])}</p>')
    return head + "\n".join(lines)


def _action(action: str) -> str:
    """A recorded action as a transcript line: tool calls as ``name(args)``, else the reply."""
    try:
        message = json.loads(action)
    except (ValueError, TypeError):
        return f"host: {action}"
    if not isinstance(message, dict) or not message.get("tool_calls"):
        return f"host: {action}"
    calls = []
    for call in message["tool_calls"]:
        fn = call.get("function", call) if isinstance(call, dict) else {}
        calls.append(f"{fn.get('name', '?')}({fn.get('arguments', '')})")
    return "tool: " + ", ".join(calls)
