"""Sections for a rollout file: an overview, the groups side by side, and each episode."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from liveroom_sim.report import plots
from liveroom_sim.report.episode import COMPONENTS, cards, episode_id, episode_label, render_episode
from liveroom_sim.report.page import Section, esc


class ReportError(Exception):
    """A source the report cannot read: the message names the path and what is wrong."""


def read_records(path: Path) -> list[dict]:
    """The records of a rollout JSONL file, in (group, sample) order."""
    records, bad = [], 0
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if not isinstance(record, dict) or "group_id" not in record or "sample_index" not in record:
            raise ReportError(f"{path}:{n}: not a rollout record (expected the fields group_id, sample_index, "
                              f"...: see `liveroom rollout`)")
        records.append(record)
    if not records:
        raise ReportError(f"{path} holds no rollout records" + (f" ({bad} lines are not JSON)" if bad else ""))
    return sorted(records, key=lambda r: (r["group_id"], r["sample_index"]))


def spec_weights(env_id: str) -> dict | None:
    """The reward weights of the env the records name (None when it cannot be loaded)."""
    try:
        import gymnasium as gym

        from liveroom_sim import resolve_env_id

        return dict(gym.make(resolve_env_id(env_id)).unwrapped.world.spec.reward.weights)
    except Exception:  # a report of someone else's env still renders, unweighted
        return None


def rollout_sections(records: list[dict], max_episodes: int, source: str) -> list[Section]:
    """Overview, groups and per-episode sections for ``records``."""
    weights = {env: spec_weights(env) for env in {r.get("env", "") for r in records}}
    groups: dict[int, list[dict]] = defaultdict(list)
    for r in records:
        groups[r["group_id"]].append(r)
    shown = records[:max_episodes]
    sections = [Section("overview", f"Rollouts: {source}", _overview(records, groups, shown, weights), nav="Overview")]
    if any(len(g) > 1 for g in groups.values()):
        sections.append(Section("groups", "Groups: samples side by side", _groups(groups, {episode_id(r) for r in shown}),
                                nav="Groups"))
    for r in shown:
        sections.append(Section(episode_id(r), f"Episode: {episode_label(r)}",
                                render_episode(r, weights.get(r.get("env", ""))),
                                nav=f"g{r['group_id']} s{r['sample_index']}  {_ret(r)}", group="Episodes"))
    return sections


def _ret(r: dict) -> str:
    return "error" if r.get("return") is None else f"{r['return']:+.1f}"


def _adv(r: dict) -> str:
    return "n/a" if r.get("advantage") is None else f"{r['advantage']:+.3f}"


def _overview(records, groups, shown, weights) -> str:
    scored = [r for r in records if r.get("return") is not None]
    envs = sorted({r.get("env", "?") for r in records})
    policies = sorted({json.dumps(r.get("policy", {}), sort_keys=True) for r in records})
    mean = sum(r["return"] for r in scored) / len(scored) if scored else None
    parts = [cards([("episodes", str(len(records))), ("groups", str(len(groups))),
                    ("mean return", "n/a" if mean is None else f"{mean:+.2f}"),
                    ("failed episodes", str(len(records) - len(scored)))]),
             f'<p>Env: {esc(", ".join(envs))}. Policy: {esc("; ".join(policies))}. '
             f"Reward weights: {esc(_weights_text(weights))}.</p>", _provenance(records)]
    if scored:
        xs = list(range(len(scored)))
        series = {k: (xs, [r["returns"].get(k, 0.0) for r in scored]) for k in COMPONENTS}
        series["total"] = (xs, [r["return"] for r in scored])
        parts.append('<div class="plot">' + plots.line_chart(
            series, title="Return of each episode, by component (sum of scores)",
            xlabel="episode (file order: group, then sample)", ylabel="return (points)", integer_x=True) + "</div>")
    rows = "".join(
        f'<tr><td>{r["group_id"]}</td><td>{r["sample_index"]}</td><td>{r["seed"]}</td><td>{_ret(r)}</td>'
        f'<td>{_adv(r)}</td>'
        f'<td>{r.get("steps", 0)}</td><td class="l">{_episode_link(r, shown)}</td></tr>' for r in records)
    parts.append("<h3>Episodes</h3><table><tr><th>group</th><th>sample</th><th>seed</th><th>return</th>"
                 f"<th>advantage</th><th>steps</th><th class=\"l\"></th></tr>{rows}</table>")
    if len(records) > len(shown):
        parts.append(f'<p class="note">The first {len(shown)} episodes have a full replay '
                     f"(`liveroom report --max-episodes N` for more).</p>")
    return "\n".join(parts)


def _provenance(records: list[dict]) -> str:
    """Where the records come from (:mod:`liveroom_sim.provenance`); a warning when they
    come from more than one version of a spec, whose returns do not compare."""
    seen = {json.dumps(r["provenance"], sort_keys=True): r["provenance"] for r in records if r.get("provenance")}
    if not seen:
        return '<p class="note">Provenance: not recorded (written by an older LiveRoom).</p>'
    text = "; ".join(", ".join(f"{k} {v}" for k, v in p.items()) for p in seen.values())
    specs = {(p.get("spec_id"), p.get("spec_digest")) for p in seen.values()}
    mixed = len(specs) > len({sid for sid, _ in specs})
    warn = ('<p class="bad"><b>These records come from different versions of the same spec</b> (different '
            "content digests): their returns do not compare.</p>") if mixed else ""
    return warn + f'<p class="note">Provenance: {esc(text)}.</p>'


def _episode_link(r: dict, shown: list[dict]) -> str:
    if any(r is s for s in shown):
        return f'<a href="#{episode_id(r)}">replay</a>'
    return esc(r.get("error") or "")


def _weights_text(weights: dict) -> str:
    known = [w for w in weights.values() if w]
    if not known:
        return "unknown (the env could not be loaded; per-turn values are unweighted scores)"
    return ", ".join(f"{k} {v:g}" for k, v in known[0].items())


def _groups(groups: dict[int, list[dict]], replayed: set[str]) -> str:
    ids = sorted(groups)
    size = max(len(g) for g in groups.values())
    values = {f"sample {i}": [next((r.get("advantage") or 0.0 for r in groups[g] if r["sample_index"] == i), 0.0)
                              for g in ids] for i in range(size)}
    parts = ['<div class="plot">' + plots.grouped_bars(
        [str(g) for g in ids], values, title="Group-relative advantage of each sample",
        xlabel="group (one seed per group)", ylabel="advantage (std. units)") + "</div>"]
    for g in ids:
        cols = []
        for r in groups[g]:
            returns = r.get("returns") or {}
            comp = "".join(f"<tr><td class=\"l\">{k}</td><td>{returns[k]:+.2f}</td></tr>" for k in COMPONENTS
                           if k in returns)
            link = f': <a href="#{episode_id(r)}">replay</a>' if episode_id(r) in replayed else ""
            cols.append(f'<div><table><tr><th class="l" colspan="2">sample {r["sample_index"]}{link}'
                        f'</th></tr><tr><td class="l">return</td>'
                        f'<td>{_ret(r)}</td></tr><tr><td class="l">advantage</td><td><b>{_adv(r)}</b></td></tr>'
                        f'{comp}<tr><td class="l">steps</td><td>{r.get("steps", 0)}</td></tr></table></div>')
        parts.append(f'<h3>Group {g} (seed {groups[g][0]["seed"]})</h3><div class="side">{"".join(cols)}</div>')
    return "\n".join(parts)
