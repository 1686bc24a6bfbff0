"""The demo's transcript: what a newcomer reads, one line per thing that happened.

Room updates print their new chat and operations notes; the waiting questions print only
when the set of them changes; tool calls print one summary line each (``verbose`` prints
every result in full); each reply's reward prints as weighted contributions that add up
to the total; every campaign event gets a marker, whether it fired after a reply, after a
tool turn or at the start.
"""

from __future__ import annotations

import json
import re

ABBREV = {"factuality": "fact", "compliance": "comp", "engagement": "eng", "strategy": "strat", "harness": "harn"}
LEGEND = ("legend: [mm:ss] room update (stream clock) | chat = new viewer messages | ops = a note from the "
          "operations team | waiting = questions not yet answered (shown when they change) | tool = a tool call "
          "-> a summary of its result (--verbose for all of it) | host = the reply said to the room | reward = weight x score "
          "per component (fact, comp, eng, strat, harn), summing to the turn's total | !! = campaign event | "
          "BLOCKED = a hook stopped the reply | FAULT = a tool call failed")
_WAITING = re.compile(r"^- (.*?) \(\d+s\): (.*)$")


def contributions(breakdown: dict, weights: dict) -> dict[str, float]:
    """Each component's weighted contribution (weight x score) to a turn's total."""
    return {k: weights.get(k, 1.0) * v for k, v in breakdown.items() if k not in ("total", "kind")}


def reward_line(breakdown: dict, weights: dict, gated: bool = False) -> str:
    """``reward +3.45 = fact +1.00 + comp +1.00 ...``: the total and the weighted parts.

    When the compliance gate capped the total, the line says so and gives the uncapped sum.
    """
    parts = contributions(breakdown, weights)
    terms = " ".join(f"{'+' if v >= 0 else '-'} {ABBREV.get(k, k)} {abs(v):.3f}" for k, v in parts.items())
    terms = terms[2:] if terms.startswith("+ ") else terms
    line = f"reward {breakdown['total']:+.3f} = {terms}"
    if gated:
        line += f"  (compliance gate: total capped; the parts sum to {sum(parts.values()):+.3f})"
    return line


def summarise_result(content: str, width: int = 90) -> str:
    """One readable line for a tool result: its error, or its first fields as ``key=value``
    (lists as their length), never JSON cut in the middle."""
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        text = " ".join(str(content).split())
        return text if len(text) <= width else text[: width - 1] + "…"
    if isinstance(data, dict) and "error" in data:
        return "FAULT: " + " ".join(str(data["error"]).split())
    if not isinstance(data, dict):
        text = f"a list of {len(data)}" if isinstance(data, list) else " ".join(str(data).split())
        return text if len(text) <= width else text[: width - 1] + "…"
    shown, used = [], 0
    for k, v in data.items():
        if v is None or v == [] or v == {}:
            continue
        if isinstance(v, list):
            item = f"{k}=[{len(v)}]"
        elif isinstance(v, dict):
            small = len(v) <= 3 and all(not isinstance(x, (dict, list)) for x in v.values())
            item = f"{k}=({', '.join(f'{a}={b}' for a, b in v.items())})" if small else f"{k}=({len(v)} fields)"
        else:
            item = f"{k}={v}"
        item = " ".join(item.split())
        item = item if len(item) <= 60 else item[:59] + "…"
        if used + len(item) > width and shown:
            shown.append(f"… (+{len(data) - len(shown)} fields)")
            break
        shown.append(item)
        used += len(item) + 1
    return " ".join(shown)


class Transcript:
    """Prints an episode as it is played (call :meth:`start` after reset, :meth:`turn`
    after every step)."""

    def __init__(self, out, weights: dict, verbose: bool = False):
        self.out, self.weights, self.verbose = out, weights, verbose
        self.waiting: tuple = ()
        self.events = 0

    def _p(self, text: str) -> None:
        print(text, file=self.out)

    def start(self, info: dict) -> None:
        self._events(info.get("events") or [])
        self._update(info)

    def turn(self, info: dict) -> None:
        turn, msgs, breakdown = info["turn"], info["messages"], info["reward_breakdown"]
        if turn["kind"] == "tool":
            i = len(msgs) - 1
            while i > 0 and msgs[i]["role"] == "tool":
                i -= 1
            for call, result in zip(msgs[i].get("tool_calls") or [], msgs[i + 1:]):
                fn = call["function"]
                shown = result["content"] if self.verbose else summarise_result(result["content"])
                self._p(f"  tool  {fn['name']}({_args(fn['arguments'])}) -> {shown}")
            if turn["tool_errors"] or breakdown["total"]:
                self._p(f"        {reward_line(breakdown, self.weights, turn.get('gated', False))}")
        else:
            status = "" if turn["delivered"] else "  [BLOCKED: " + ", ".join(turn["hooks"] or ["empty reply"]) + "]"
            self._p(f"  host  {turn['reply']}{status}")
            self._p(f"        {reward_line(breakdown, self.weights, turn.get('gated', False))}")
        self._events(info.get("events") or [])
        if msgs and msgs[-1]["role"] == "user" and turn["kind"] == "reply":
            self._update(info)

    def _events(self, events: list[dict]) -> None:
        for e in events:
            self.events += 1
            mm, ss = divmod(int(e["at"]), 60)
            detail = ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("type", "at", "note"))
            note = e.get("note") or detail
            self._p(f"  !! {mm:02d}:{ss:02d} event {e['type'].replace('_', ' ')}: {note}")

    def _update(self, info: dict) -> None:
        last = info["messages"][-1]
        if last["role"] != "user":
            return
        section, waiting = None, []
        for line in last["content"].splitlines():
            if line.startswith("[hook]"):
                self._p(f"  hook  {line[len('[hook]'):].strip()}")
            elif line.startswith("[") and "featured:" in line:
                self._p(line)
            elif line.startswith("ops: "):
                self._p(f"  ops   {line[5:]}")
            elif line in ("chat:", "waiting for an answer:"):
                section = line
            elif section == "chat:":
                self._p(f"  chat  {line}")
            elif section == "waiting for an answer:" and (m := _WAITING.match(line)):
                waiting.append((m.group(1), m.group(2)))
        # Compared as shown (who waits): a merged request changes its text, not who waits.
        shown = tuple(name for name, _ in waiting)
        if shown != self.waiting:
            self.waiting = shown
            self._p(f"  waiting ({len(shown)}): {', '.join(shown) or 'none'}")


def _args(raw: str) -> str:
    """Tool arguments as ``a=1, b=x`` (the raw text when it is not a JSON object)."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return str(raw)
    if not isinstance(data, dict):
        return str(raw)
    return ", ".join(f"{k}={v}" for k, v in data.items())
