"""One episode of a rollout file: key figures, plots over stream time, an event timeline,
and the transcript as a chat replay with each turn's reward breakdown and reasons.

Turn ``k`` of ``record["turn_rewards"]`` is the ``k``-th assistant message of
``record["messages"]``: every step adds exactly one (a tool call or a reply).
"""

from __future__ import annotations

import json

from liveroom_sim.report import plots
from liveroom_sim.report.page import esc
from liveroom_sim.spec import COMPONENTS


def episode_id(record: dict) -> str:
    return f"ep-{record['group_id']}-{record['sample_index']}"


def episode_label(record: dict) -> str:
    return f"group {record['group_id']}, sample {record['sample_index']} (seed {record['seed']})"


def cards(items: list[tuple[str, str]]) -> str:
    return '<div class="cards">' + "".join(f'<div class="card"><b>{esc(v)}</b><span>{esc(k)}</span></div>'
                                           for k, v in items) + "</div>"


def _num(value, fmt: str = "{:+.2f}") -> str:
    return "n/a" if value is None else fmt.format(value)


def render_episode(record: dict, weights: dict | None) -> str:
    """The body of an episode's section."""
    turns, msgs, m = record.get("turn_rewards") or [], record.get("messages") or [], record.get("metrics") or {}
    details = [t.get("detail") for t in turns]
    blocked = sum(1 for t, d in zip(turns, details) if d and t["kind"] == "reply" and not d.get("delivered", True))
    faults = sum(len(d.get("tool_errors", ())) for d in details if d)
    events = [e for d in details if d for e in d.get("events", ())]
    parts = [cards([("return", _num(record.get("return"))), ("advantage", _num(record.get("advantage"))),
                    ("steps", str(record.get("steps", 0))), ("GMV", _num(m.get("gmv"), "{:.2f}")),
                    ("purchases", str(m.get("purchases", "n/a"))),
                    ("questions answered / asked", f"{m.get('questions_answered', '?')} / {m.get('questions_asked', '?')}"),
                    ("viewers at the end", str(m.get("viewers_present", "n/a"))),
                    ("replies blocked by hooks", str(blocked)), ("tool faults", str(faults)),
                    ("campaign events", str(len(events)))])]
    if record.get("error") or record.get("reason"):
        parts.append(f'<p class="bubble fault"><b>Ended early:</b> {esc(record.get("error") or record.get("reason"))}</p>')
    parts.append(_returns_table(record, weights))
    if turns and all(details):
        parts.append(_plots(record, turns, details, weights, events))
    elif turns:
        parts.append('<p class="note">These records carry no per-turn detail (written by an older LiveRoom), '
                     'so there are no plots over stream time.</p>')
    if msgs:
        parts.append("<h3>Chat replay</h3>" + _replay(msgs, turns, weights))
    else:
        parts.append('<p class="note">The trajectory was not recorded (rollout with --no-messages).</p>')
    return "\n".join(parts)


def _returns_table(record: dict, weights: dict | None) -> str:
    returns = record.get("returns") or {}
    rows = []
    for k in COMPONENTS:
        if k in returns:
            w = (weights or {}).get(k)
            contrib = "" if w is None else f"{w * returns[k]:+.2f}"
            rows.append(f'<tr><td class="l">{k}</td><td>{returns[k]:+.2f}</td><td>{"" if w is None else f"{w:g}"}</td>'
                        f"<td>{contrib}</td></tr>")
    if "total" in returns:
        rows.append(f'<tr><td class="l"><b>total</b></td><td></td><td></td><td><b>{returns["total"]:+.2f}</b></td></tr>')
    return ('<table><tr><th class="l">component</th><th>sum of scores</th><th>weight</th><th>contribution</th></tr>'
            + "".join(rows) + "</table>")


def _plots(record, turns, details, weights, events) -> str:
    minutes = [d["clock_s"] / 60 for d in details]
    ev_min = [e["at"] / 60 for e in events]
    label = episode_label(record)
    fig, axes = plots.figure(3, 1, height=6.4, sharex=True)
    for ax, key, name, unit in ((axes[0, 0], "viewers", "viewers present", "viewers"),
                                (axes[1, 0], "waiting", "questions waiting", "questions"),
                                (axes[2, 0], "gmv", "GMV (cumulative)", "GMV (currency units)")):
        plots.draw_lines(ax, {name: (minutes, [d[key] for d in details])}, vlines=ev_min, vline_label="campaign event")
        ax.set_ylabel(unit)
        if key != "gmv":
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts: no half viewers
    axes[0, 0].set_title(f"The room over stream time: {label}")
    axes[2, 0].set_xlabel("stream time (minutes)")
    room = plots.to_svg(fig)
    series, w = {}, weights or {}
    for k in COMPONENTS:
        running, ys = 0.0, []
        for t in turns:
            running += w.get(k, 1.0) * t.get(k, 0.0)
            ys.append(running)
        series[k] = (minutes, ys)
    running, totals = 0.0, []
    for t in turns:
        running += t.get("total", 0.0)
        totals.append(running)
    series["total"] = (minutes, totals)
    what = "weighted contribution" if weights else "score (weights unknown)"
    rewards = plots.line_chart(series, title=f"Cumulative reward by component ({what}): {label}",
                               xlabel="stream time (minutes)", ylabel="cumulative reward (points)",
                               vlines=ev_min, vline_label="campaign event", height=3.8)
    out = [f'<div class="plot">{room}</div>', f'<div class="plot">{rewards}</div>']
    if events:
        tl = plots.timeline([(e["at"] / 60, e["type"].replace("_", " "), event_text(e)) for e in events],
                            title=f"Campaign events: {label}", xlabel="stream time (minutes)", x_max=minutes[-1])
        rows = "".join(f'<tr><td>{_clock(e["at"])}</td><td class="l">{esc(e["type"].replace("_", " "))}</td>'
                       f'<td class="l">{esc(event_text(e))}</td></tr>' for e in events)
        out.append(f'<div class="plot">{tl}</div><table class="events"><tr><th>time</th><th class="l">event</th>'
                   f'<th class="l">note</th></tr>{rows}</table>')
    return "\n".join(out)


def event_text(e: dict) -> str:
    """A campaign event's note from its file, else what it did, in words (a coupon, a price
    change, a flash sale, a stock-out or a featured product has no note of its own)."""
    if e.get("note"):
        return str(e["note"])
    p, value, kind = e.get("product", "?"), e.get("value"), e.get("kind")
    off = {"amount_off": f"{value} off", "percent_off": f"{value}% off",
           "spend_save": f"spend {e.get('threshold')}, save {value}"}.get(kind, f"{kind} {value}")
    words = {
        "price_change": lambda: f"{p} now costs {e.get('price')}",
        "flash_sale_start": lambda: f"flash sale: {p} at {e.get('price')}" + (
            f", {e['quantity']} units" if e.get("quantity") else ""),
        "flash_sale_end": lambda: f"the flash sale on {p} ends",
        "coupon_start": lambda: f"coupon {e.get('code')}: {off} " + (
            f"on {', '.join(e['products'])}" if e.get("products") else "storewide"),
        "coupon_end": lambda: f"coupon {e.get('code')} ends",
        "stock_out": lambda: f"{p} is sold out",
        "restock": lambda: f"{p} restocked: {e.get('quantity')} units",
        "feature": lambda: f"present {p} now (put up its link)",
        "rule_update": lambda: "new compliance rules are in force",
        "style_directive": lambda: "new style: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in e.items()
                                                           if k not in ("type", "at", "note") and v not in (None, [], ())),
        "harness_change": lambda: ", ".join([f"tool {a} is now {b}" for a, b in (e.get("rename_tool") or {}).items()]
                                            + ([f"skill {e['skill']!r} added or updated"] if e.get("skill") else []))
                                  or "the harness changed",
    }
    make = words.get(e.get("type", ""))
    return make() if make else ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "at", "note"))


def _clock(seconds: float) -> str:
    mm, ss = divmod(int(seconds), 60)
    return f"{mm:02d}:{ss:02d}"


def _replay(msgs: list[dict], turns: list[dict], weights: dict | None) -> str:
    out, k, i = [], 0, 0
    while i < len(msgs):
        msg = msgs[i]
        role = msg.get("role")
        if role == "system":
            out.append(f"<details><summary>System prompt ({len(msg.get('content') or '')} characters)</summary>"
                       f"<pre>{esc(msg.get('content'))}</pre></details>")
        elif role == "user":
            text = msg.get("content") or ""
            cls = "room hook" if text.startswith("[hook]") else "room"
            out.append(f'<div class="{cls}">{esc(text)}</div>')
        elif role == "assistant":
            turn = turns[k] if k < len(turns) else None
            k += 1
            results = []
            while msg.get("tool_calls") and i + 1 < len(msgs) and msgs[i + 1].get("role") == "tool":
                i += 1
                results.append(msgs[i])
            out.append(_turn(k, msg, results, turn, weights))
        i += 1
    return "\n".join(out)


def _turn(number: int, msg: dict, results: list[dict], turn: dict | None, weights: dict | None) -> str:
    detail = (turn or {}).get("detail") or {}
    badges = []
    if msg.get("tool_calls"):
        calls = []
        faulted = False
        for call, result in zip(msg["tool_calls"], results + [None] * len(msg["tool_calls"])):
            fn = call.get("function", {})
            content = (result or {}).get("content") or ""
            fault = _is_fault(content)
            faulted |= fault
            mark = '<span class="badge fault">FAULT</span>' if fault else ""
            calls.append(f"<details><summary><code>{esc(fn.get('name'))}({esc(fn.get('arguments'))})</code>{mark}"
                         f"</summary><pre>{esc(content)}</pre></details>")
        cls = "bubble tool fault" if faulted or detail.get("tool_errors") else "bubble tool"
        left = f'<div class="{cls}"><b>tool turn {number}</b>{"".join(calls)}</div>'
    else:
        blocked = turn is not None and turn.get("kind") == "reply" and detail and not detail.get("delivered", True)
        if blocked:
            badges.append('<span class="badge blocked">BLOCKED</span>')
        hooks = ", ".join(detail.get("hooks", ()))
        hook_line = f'<div class="note">hooks: {esc(hooks)}</div>' if hooks else ""
        cls = "bubble host blocked" if blocked else "bubble host"
        left = (f'<div class="{cls}"><b>host, turn {number}</b>{"".join(badges)}<div>{esc(msg.get("content"))}</div>'
                f"{hook_line}</div>")
    right = _reward_panel(turn, weights) if turn is not None else ""
    events = "".join(f'<div class="event"><span class="badge event">EVENT</span> {_clock(e["at"])} '
                     f'{esc(e["type"].replace("_", " "))}: {esc(event_text(e))}</div>' for e in detail.get("events", ()))
    return f'<div class="turn" data-turn="{number}">{left}{right}</div>{events}'


def _is_fault(content: str) -> bool:
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return False
    return isinstance(data, dict) and "error" in data


def _reward_panel(turn: dict, weights: dict | None) -> str:
    detail = turn.get("detail") or {}
    reasons = detail.get("reasons", {})
    rows = []
    for k in COMPONENTS:
        if k not in turn:
            continue
        value = turn[k]
        if value == 0 and not reasons.get(k):
            continue
        w = (weights or {}).get(k)
        shown = f"{w * value:+.2f}" if w is not None else f"{value:+.2f}"
        sign = "neg" if value < 0 else "pos" if value > 0 else ""
        why = "; ".join(reasons.get(k, ()))
        rows.append(f'<tr><td class="l">{k}</td><td class="{sign}">{shown}</td>'
                    f'<td class="why">{"" if w is None else f"{w:g} x {value:+.2f}. "}{esc(why)}</td></tr>')
    gated = '<span class="badge gated">compliance gate</span>' if detail.get("gated") else ""
    rows.append(f'<tr class="tot"><td class="l">total</td><td>{turn.get("total", 0.0):+.2f}</td><td class="why">'
                f'{gated}{_clock(detail["clock_s"]) if "clock_s" in detail else ""}</td></tr>')
    return f'<div class="reward"><table>{"".join(rows)}</table></div>'
