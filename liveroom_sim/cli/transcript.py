"""The demo's transcript: what a newcomer reads, one line per thing that happened.

By default it is short (the first turns, one exchange a stream minute, every campaign
event); ``--full`` prints every turn. Room updates print their new chat and operations
notes; the waiting questions print only when they change (with the room's count, past
the eight an update lists); tool calls print one summary line each (``verbose`` prints
every result in full); each reply's reward prints as weighted contributions that add up
to the total; every campaign event gets a marker, whether it fired after a reply, after a
tool turn or at the start.
"""

from __future__ import annotations

import json
import re

from liveroom_sim.report.episode import event_text
from liveroom_sim.rewards.registry import COMPONENTS

#: Each reward component's abbreviation in a reward line, as its declaration gives it.
ABBREV = {c.name: c.short for c in COMPONENTS if c.short}
#: Turns the short transcript prints in full before it samples one exchange a stream minute.
FIRST_TURNS = 8


def legend(components) -> str:
    """The transcript's legend, naming every reward component its reward lines show."""
    names = ", ".join(f"{ABBREV.get(c, c)} = {c}" if c in ABBREV else c for c in components)
    return ("legend: [mm:ss] room update (stream clock) | chat = new viewer messages | ops = a note from the "
            "operations team | waiting (N) = the N questions not yet answered (shown when they change) | tool = a "
            "tool call -> a summary of its result (--verbose for all of it) | host = the reply said to the room | "
            f"reward = weight x score per component ({names}), summing to the turn's total | !! = campaign event | "
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
    after every step).

    ``full`` prints every turn. Otherwise the transcript is one a newcomer reads in a
    minute: the first :data:`FIRST_TURNS` turns, then one exchange per stream minute, and
    every campaign event; ``... N turns`` marks what was left out.
    """

    def __init__(self, out, weights: dict, verbose: bool = False, full: bool = True, count_waiting=None):
        self.out, self.weights, self.verbose, self.full = out, weights, verbose, full
        self.count_waiting = count_waiting  # how many messages wait in all (an update lists the oldest eight)
        self.waiting: tuple = ()
        self.events = 0
        self.turns = self.skipped = 0
        self.minute = 0
        self._buffer: list[str] | None = None
        self._notes: list[str] = []  # this turn's event notes: their ops lines are not printed again

    def _p(self, text: str) -> None:
        if self._buffer is not None:
            self._buffer.append(text)
        else:
            self._say(text)

    def _say(self, text: str) -> None:
        if self.skipped:
            print(f"  ... {self.skipped} turn{'s' * (self.skipped > 1)} not shown", file=self.out)
            self.skipped = 0
        print(text, file=self.out)

    def start(self, info: dict) -> None:
        self._events(info.get("events") or [])
        self._update(info)

    def turn(self, info: dict) -> None:
        """Print one step: all of it, or (short) its campaign events only, unless it is
        one of the first turns or the first reply of a new stream minute."""
        minute = int(info["metrics"]["clock_s"] // 60)
        keep = self.full or self.turns < FIRST_TURNS or (info["turn"]["kind"] == "reply" and minute > self.minute)
        if keep and info["turn"]["kind"] == "reply":
            self.minute = max(self.minute, minute)
        self.turns += 1
        self._buffer = [] if keep else None
        self._turn(info, keep)
        lines, self._buffer = self._buffer or [], None
        for line in lines:
            self._say(line)
        if not keep:
            self.skipped += 1

    def _turn(self, info: dict, keep: bool) -> None:
        turn, msgs, breakdown = info["turn"], info["messages"], info["reward_breakdown"]
        if not keep:
            self._events(info.get("events") or [])
            self._notes = []
            if msgs and msgs[-1]["role"] == "user" and turn["kind"] == "reply":
                self._update(info, quiet=True)
            return
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
        # Printed once, here, with what it did (the room's ops note says the same: it is skipped).
        for e in events:
            self.events += 1
            mm, ss = divmod(int(e["at"]), 60)
            detail = event_text({**e, "note": ""})  # what it did, in words
            note = f"{e['note']} ({detail})" if e.get("note") and detail else e.get("note") or detail
            if e.get("note"):
                self._notes.append(e["note"])
            self._p(f"  !! {mm:02d}:{ss:02d} event {e['type'].replace('_', ' ')}: {note}")

    def _update(self, info: dict, quiet: bool = False) -> None:
        last = info["messages"][-1]
        if last["role"] != "user":
            return
        say = (lambda text: None) if quiet else self._p
        section, waiting = None, []
        for line in last["content"].splitlines():
            if line.startswith("[hook]"):
                say(f"  hook  {line[len('[hook]'):].strip()}")
            elif line.startswith("[") and "featured:" in line:
                say(line)
            elif line.startswith("ops: "):
                if not any(line[5:].startswith(note) for note in self._notes):
                    say(f"  ops   {line[5:]}")
            elif line in ("chat:", "waiting for an answer:"):
                section = line
            elif section == "chat:":
                say(f"  chat  {line}")
            elif section == "waiting for an answer:" and (m := _WAITING.match(line)):
                waiting.append((m.group(1), m.group(2)))
        self._notes = []
        # Compared as shown (who waits, and how many: the update lists the oldest eight).
        count = max(len(waiting), self.count_waiting() if self.count_waiting else 0)
        shown = (tuple(name for name, _ in waiting), count)
        if shown != self.waiting:
            self.waiting = shown
            more = f" (+{count - len(waiting)} more)" if count > len(waiting) else ""
            names = ", ".join(shown[0]) or ("none" if not count else "not listed in this update")
            say(f"  waiting ({count}): {names}{more}")


def _args(raw: str) -> str:
    """Tool arguments as ``a=1, b=x`` (the raw text when it is not a JSON object)."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return str(raw)
    if not isinstance(data, dict):
        return str(raw)
    return ", ".join(f"{k}={v}" for k, v in data.items())
