"""Scores of an eval run: the table overall, per suite, and by ask kind, language, HSA
operator and robustness condition (tool fault or perturbation); the HVQA-LSQA gap case
by case; ``results.json`` and ``summary.md``.

Per group of cases: ``acc`` (accuracy, binary, mean over samples), ``eff`` (effectiveness,
0/0.5/1), ``pass@1`` (strict: a sample passes: accurate, fully effective, no violation;
follow: every instruction met), ``loose@1`` (as IFEval reports loose beside strict: the
sample passes, or one of its reply's loose variants does: markdown marks removed, the
first or last line dropped), ``pass^k`` (every one of a case's k samples passes, as in
tau-bench), ``viol`` (compliance violations per sample), ``tools`` (tool rationality),
``p50``/``p95`` (seconds per complete turn: every call of it), ``tokens`` (prompt +
completion per turn) and ``err`` (cases that errored: endpoint, timeout, malformed
response or tool call, a case that no longer reproduces).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from liveroom_sim.evals.cases import SUITES

#: Error kinds that count a case as errored (the policy's plain failures do not).
ERRORED = ("endpoint", "timeout", "malformed_response", "malformed_tool_call", "stale_case", "crash")
COLUMNS = ("cases", "acc", "eff", "pass@1", "loose@1", "pass^k", "viol", "tools", "p50", "p95", "tokens", "err")


def _errored(rec: dict) -> str | None:
    if rec.get("error_kind"):
        return rec["error_kind"]
    kinds = [s.get("error_kind") for s in rec["samples"] if s.get("error_kind") in ERRORED]
    return kinds[0] if kinds else None


def scores(records: list[dict]) -> dict:
    """The columns for a group of case records."""
    samples = [s for r in records for s in r["samples"]]
    v = [s["verdict"] for s in samples]
    lat = [s["latency_s"] for s in samples]
    passes = [all(s["verdict"].get("pass") for s in r["samples"]) if r["samples"] else False for r in records]

    def mean(xs):
        return round(float(np.mean(xs)), 4) if xs else 0.0

    return {
        "cases": len(records), "samples": len(samples),
        "acc": mean([x["accuracy"] for x in v]), "eff": mean([x["effectiveness"] for x in v]),
        "pass@1": mean([bool(x.get("pass")) for x in v]),
        "loose@1": mean([bool(x.get("loose", x.get("pass"))) for x in v]), "pass^k": mean(passes),
        "viol": mean([len(x.get("violations", ())) for x in v]), "tools": mean([x.get("tools", 0.0) for x in v]),
        "p50": round(float(np.percentile(lat, 50)), 4) if lat else 0.0,
        "p95": round(float(np.percentile(lat, 95)), 4) if lat else 0.0,
        "tokens": mean([s.get("prompt_tokens", 0) + s.get("completion_tokens", 0) for s in samples]),
        "err": sum(1 for r in records if _errored(r)),
        "judge": mean([s["judge"]["engagement"] for s in samples if s.get("judge")]) if any(s.get("judge") for s in samples) else None,
    }


def _by(records: list[dict], key) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        k = key(r)
        if k is not None:
            groups[k].append(r)
    return {k: scores(g) for k, g in sorted(groups.items())}


def hvqa_gap(records: list[dict]) -> dict:
    """Case by case: each hvqa case against its lsqa twin (both run), ``lsqa - hvqa`` in
    accuracy and pass@1, overall and per operator."""
    by_id = {r["id"]: r for r in records}
    pairs = [(by_id[r["twin"]], r) for r in records if r["suite"] == "hvqa" and r.get("twin") in by_id]
    if not pairs:
        return {}

    def gap(ps):
        a, b = [p[0] for p in ps], [p[1] for p in ps]
        sa, sb = scores(a), scores(b)
        return {"pairs": len(ps), "lsqa_acc": sa["acc"], "hvqa_acc": sb["acc"], "acc_gap": round(sa["acc"] - sb["acc"], 4),
                "lsqa_pass@1": sa["pass@1"], "hvqa_pass@1": sb["pass@1"],
                "pass@1_gap": round(sa["pass@1"] - sb["pass@1"], 4)}

    per_op: dict[str, list] = defaultdict(list)
    for p in pairs:
        per_op[p[1]["operator"]].append(p)
    return {"overall": gap(pairs), "by_operator": {k: gap(v) for k, v in sorted(per_op.items())}}


def summarize(records: list[dict], headers: dict, settings: dict) -> dict:
    errors: dict[str, int] = defaultdict(int)
    for r in records:
        kind = _errored(r)
        if kind:
            errors[kind] += 1
    follow = defaultdict(list)
    for r in records:
        for s in r["samples"]:
            for name, ok in s["verdict"].get("checks", {}).items():
                follow[name].append(ok)
    return {
        "settings": settings, "suites": headers, "overall": scores(records),
        "by_suite": dict(sorted(_by(records, lambda r: r["suite"]).items(), key=lambda kv: SUITES.index(kv[0]))),
        "by_kind": _by(records, lambda r: r["kind"]),
        "by_language": _by(records, lambda r: r["language"]),
        "by_operator": _by(records, lambda r: r["operator"] if r["suite"] == "hvqa" else None),
        "by_condition": _by(records, lambda r: r.get("condition") if r["suite"] == "robust" else None),
        "follow_checks": {k: round(float(np.mean(v)), 4) for k, v in sorted(follow.items())},
        "hvqa_gap": hvqa_gap(records),
        "verified": _verified(records),
        "errored": {"cases": sum(errors.values()), "by_kind": dict(errors)},
    }


def _verified(records: list[dict]) -> dict | None:
    """The scores on the human-verified subset (:mod:`liveroom_sim.evals.review`): the
    cases a person signed off as right, as they were read (their sha), among those run."""
    from liveroom_sim.evals.review import load_signoffs

    read = {(s.id, s.sha) for s in load_signoffs() if s.verdict == "right"}
    mine = [r for r in records if (r["id"], r["inputs"].get("sha")) in read]
    return scores(mine) if mine else None


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def table(rows: dict[str, dict], title: str = "") -> str:
    """A markdown table (also readable on a console)."""
    head = f"| {title or ' '} | " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for name, s in rows.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(s[c]) for c in COLUMNS) + " |")
    return "\n".join(lines)


def markdown(summary: dict) -> str:
    """``summary.md``: the tables, the gap and the errors."""
    s = summary["settings"]
    out = [f"# liveroom eval: {s['policy'].get('kind')}" + (f" {s['policy'].get('model')}" if s["policy"].get("model") else ""),
           "", f"samples per case: {s['samples']}; suites: "
           + ", ".join(f"{k} v{v['version']} ({v['sha256'][:12]})" for k, v in s["suites"].items()), "",
           table({**summary["by_suite"], "all": summary["overall"],
                  **({"verified by a person": summary["verified"]} if summary.get("verified") else {})}, "suite"), ""]
    for key, title in (("by_kind", "ask kind"), ("by_language", "language"), ("by_operator", "HSA operator"),
                       ("by_condition", "robustness condition")):
        if summary[key]:
            out += [f"## By {title}", "", table(summary[key], title), ""]
    if summary["follow_checks"]:
        out += ["## Instructions met (follow)", "", "| check | met |", "|---|---|"]
        out += [f"| {k} | {v:.3f} |" for k, v in summary["follow_checks"].items()] + [""]
    gap = summary["hvqa_gap"]
    if gap:
        o = gap["overall"]
        out += ["## HVQA-LSQA gap (case by case)", "",
                f"{o['pairs']} pairs: accuracy lsqa {o['lsqa_acc']:.3f} vs hvqa {o['hvqa_acc']:.3f} (gap {o['acc_gap']:+.3f}); "
                f"pass@1 {o['lsqa_pass@1']:.3f} vs {o['hvqa_pass@1']:.3f} (gap {o['pass@1_gap']:+.3f})", "",
                "| operator | pairs | acc gap | pass@1 gap |", "|---|---|---|---|"]
        out += [f"| {k} | {g['pairs']} | {g['acc_gap']:+.3f} | {g['pass@1_gap']:+.3f} |" for k, g in gap["by_operator"].items()]
        out.append("")
    judged = {k: v["judge"] for k, v in summary["by_suite"].items() if v.get("judge") is not None}
    if judged:
        out += ["## LLM judge (on request; the rule-based grade above stands)", "",
                "Engagement as the judge vote blends it with the rules' score, mean per sample: "
                + ", ".join(f"{k} {v:.3f}" for k, v in judged.items()), ""]
    e = summary["errored"]
    out.append(f"Errored cases: {e['cases']}" + (f" ({', '.join(f'{k}: {v}' for k, v in e['by_kind'].items())})"
                                                  if e["cases"] else ""))
    return "\n".join(out) + "\n"


def run_provenance(records: list[dict], headers: dict) -> dict:
    """Where the results come from: the LiveRoom version, each suite's version, and per
    env the cases ran in its spec's id and content digests (:mod:`liveroom_sim.provenance`)."""
    from liveroom_sim import resolve_env_id
    from liveroom_sim.provenance import env_provenance, liveroom_version

    specs = {}
    for env in sorted({r["env"] for r in records if r.get("env")}):
        if found := env_provenance(resolve_env_id(env)):
            specs[env] = {k: v for k, v in found.items() if k != "liveroom_version"}
    return {"liveroom_version": liveroom_version(), "suites": {s: h["version"] for s, h in headers.items()},
            "specs": specs}


def write_outputs(out: Path, records: list[dict], summary: dict) -> None:
    (out / "results.json").write_text(json.dumps({"summary": summary, "cases": records}, ensure_ascii=False),
                                      encoding="utf-8")
    (out / "summary.md").write_text(markdown(summary), encoding="utf-8")
