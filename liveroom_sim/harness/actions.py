"""Parse a policy's action string against the CURRENT harness.

Plain text is a reply. A JSON object with ``tool_calls`` is a tool turn; a JSON object
with only ``content`` is a reply. Anything else is still a reply, except text that is
clearly a broken JSON object, which becomes an error. Nothing here raises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from liveroom_sim.errors import did_you_mean
from liveroom_sim.harness.core import Harness

#: Longest action kept; longer ones are cut (and the cut is reported).
MAX_ACTION_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as the policy made it; ``canonical`` and ``arguments`` are set when valid."""

    id: str
    name: str
    raw_arguments: str
    canonical: str | None = None
    arguments: dict | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Action:
    kind: str  # "reply" or "tool"
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    error: str | None = None


def parse_action(action: Any, harness: Harness, turn: int) -> Action:
    """Turn any action value into an :class:`Action` (never raises).

    Args:
        action: What the policy returned; normally a ``str``.
        harness: The harness in force (decides which tool names and fields exist).
        turn: The step number, used to make call ids unique when the policy gave none.
    """
    text = _as_text(action)
    cut = len(text) > MAX_ACTION_CHARS
    text = text[:MAX_ACTION_CHARS]
    stripped = text.strip()
    if not stripped.startswith("{"):
        return Action("reply", text, error="action cut to 65536 characters" if cut else None)
    try:
        message = json.loads(stripped)
    except (json.JSONDecodeError, RecursionError) as exc:
        # Text that opens like a JSON object and either closes like one or names tool
        # calls is a broken tool turn (often an LLM cut off at its token limit), not speech.
        if not (stripped.endswith("}") or '"tool_calls"' in stripped or '"function"' in stripped):
            return Action("reply", text)
        return _invalid(turn, stripped, f"malformed JSON action: {exc}")
    if isinstance(message, dict) and "tool_calls" in message and message["tool_calls"] is not None:
        calls = message["tool_calls"]
        if not isinstance(calls, list) or not calls:
            return _invalid(turn, stripped, "tool_calls must be a non-empty list of tool calls")
        parsed = tuple(_parse_call(c, i, harness, turn) for i, c in enumerate(calls[:16]))
        content = message.get("content")
        return Action("tool", text=content if isinstance(content, str) else "", tool_calls=parsed)
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return Action("reply", content)
    return Action("reply", text)


def _invalid(turn: int, raw: str, error: str) -> Action:
    bad = ToolCall(f"call_{turn}_0", "invalid_json", raw[:200], error=error)
    return Action("tool", tool_calls=(bad,), error=error)


def _as_text(action: Any) -> str:
    if isinstance(action, str):
        return action
    if isinstance(action, bytes):
        return action.decode("utf-8", errors="replace")
    if isinstance(action, dict):
        return json.dumps(action, ensure_ascii=False, default=str)
    return "" if action is None else str(action)


def _parse_call(call: Any, index: int, harness: Harness, turn: int) -> ToolCall:
    if not isinstance(call, dict):
        return ToolCall(f"call_{turn}_{index}", "invalid", str(call)[:200], error="a tool call must be a JSON object")
    cid = str(call.get("id") or f"call_{turn}_{index}")
    fn = call.get("function") if isinstance(call.get("function"), dict) else call
    name = fn.get("name")
    raw = fn.get("arguments", {})
    raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    if not isinstance(name, str) or not name:
        return ToolCall(cid, str(name), raw_text, error="tool call without a function name")
    canonical = harness.canonical_tool(name)
    if canonical is None:
        names = [v.name for v in harness.tools.values()]
        return ToolCall(cid, name, raw_text, error=f"unknown tool {name!r}{did_you_mean(name, names)}; tools now: {', '.join(names)}")
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolCall(cid, name, raw_text, canonical, error=f"arguments of {name} are not valid JSON: {exc}")
    if not isinstance(raw, dict):
        return ToolCall(cid, name, raw_text, canonical, error=f"arguments of {name} must be a JSON object")
    renamed = harness.tools[canonical].fields
    to_canonical = {shown: field for field, shown in renamed.items()}
    stale = [k for k in raw if k in renamed and k not in to_canonical]
    if stale:
        now = ", ".join(f"{k!r} is now {renamed[k]!r}" for k in stale)
        return ToolCall(cid, name, raw_text, canonical, error=f"unknown argument for {name}: {now}")
    args = {to_canonical.get(k, k): v for k, v in raw.items()}
    return ToolCall(cid, name, raw_text, canonical, args)
