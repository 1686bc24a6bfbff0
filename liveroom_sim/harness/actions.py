"""Parse a policy's action string against the CURRENT harness.

Plain text is a reply. A JSON object with ``tool_calls`` is a tool turn; a JSON object
with only ``content`` is a reply. Anything else is still a reply, except text that is
clearly a broken JSON object, which becomes an error. Nothing here raises.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from liveroom_sim.errors import did_you_mean
from liveroom_sim.harness.core import Harness

#: Longest action kept; longer ones are cut (and the cut is reported).
MAX_ACTION_CHARS = 65_536
#: Most tool calls run from one message; each call past it gets an error tool message.
MAX_TOOL_CALLS = 16
#: Deepest JSON nesting read (objects and arrays), so that whether an action parses
#: never depends on the caller's stack depth.
MAX_NESTING = 64
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*+"|[\[\]{}]')


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as the policy made it; ``canonical`` and ``arguments`` are set when valid."""

    id: str
    name: str
    raw_arguments: str
    canonical: str | None = None
    arguments: dict | None = None
    error: str | None = None
    #: ``arguments`` as the room's memos key them (the items sorted, as text), made once
    #: with them ("" when there are none).
    key: str = ""


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
    try:
        text = _as_text(action)
    except Exception as exc:  # bad input is expected input: a circular or odd object
        return _invalid(turn, "", f"action could not be read as text ({type(exc).__name__}); send a string")
    cut = len(text) > MAX_ACTION_CHARS
    text = _valid_unicode(text[:MAX_ACTION_CHARS])
    stripped = text.strip()
    if not stripped.startswith("{"):
        return Action("reply", text, error="action cut to 65536 characters" if cut else None)
    if _too_deep(stripped):
        return _invalid(turn, stripped, f"JSON action nested deeper than {MAX_NESTING} levels")
    try:
        message = json.loads(stripped)
    except (ValueError, RecursionError) as exc:  # ValueError: also numbers past Python's digit limit
        # Text that opens like a JSON object and either closes like one or names tool
        # calls is a broken tool turn (often an LLM cut off at its token limit), not speech.
        if not (stripped.endswith("}") or '"tool_calls"' in stripped or '"function"' in stripped):
            return Action("reply", text)
        return _invalid(turn, stripped, f"malformed JSON action: {exc}")
    if isinstance(message, dict) and "tool_calls" in message and message["tool_calls"] is not None:
        calls = message["tool_calls"]
        if not isinstance(calls, list) or not calls:
            return _invalid(turn, stripped, "tool_calls must be a non-empty list of tool calls")
        parsed = tuple(_parse_call(c, i, harness, turn) if i < MAX_TOOL_CALLS else _extra_call(c, i, turn)
                       for i, c in enumerate(calls))
        content = message.get("content")
        return Action("tool", text=content if isinstance(content, str) else "", tool_calls=parsed)
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return Action("reply", content)
    return Action("reply", text)


def _too_deep(text: str) -> bool:
    """Whether JSON text nests objects and arrays deeper than :data:`MAX_NESTING`
    (brackets inside strings do not count); linear in the text."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return False
    depth = 0
    for m in _JSON_TOKENS.finditer(text):
        c = m.group(0)
        if c == "[" or c == "{":
            depth += 1
            if depth > MAX_NESTING:
                return True
        elif c == "]" or c == "}":
            depth -= 1
    return False


def _extra_call(call: Any, index: int, turn: int) -> ToolCall:
    """A call past :data:`MAX_TOOL_CALLS`: not run, answered with an error."""
    fn = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else call
    name = fn.get("name") if isinstance(fn, dict) and isinstance(fn.get("name"), str) else "invalid"
    cid = str(call.get("id") or f"call_{turn}_{index}") if isinstance(call, dict) else f"call_{turn}_{index}"
    return ToolCall(cid, name, "", error=f"more than {MAX_TOOL_CALLS} tool calls in one message: this call "
                                         f"(number {index + 1}) was not run; make at most {MAX_TOOL_CALLS} per turn")


def _invalid(turn: int, raw: str, error: str) -> Action:
    bad = ToolCall(f"call_{turn}_0", "invalid_json", raw[:200], error=error)
    return Action("tool", tool_calls=(bad,), error=error)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_LONE_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                                    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _valid_unicode(text: str) -> str:
    """``text`` with lone surrogates, raw or as JSON escapes, made U+FFFD: what the room
    shows the policy must be valid UTF-8 (an HTTP client or a tokenizer refuses it)."""
    if _LONE_SURROGATE.search(text):
        text = _LONE_SURROGATE.sub("\ufffd", text)
    if "\\u" in text and text.lstrip().startswith("{"):
        text = _LONE_SURROGATE_ESCAPE.sub(r"\\ufffd", text)
    return text


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
    if not (isinstance(raw, str) and isinstance(name, str)):
        return _read_call(cid, name, raw, harness)
    # A policy makes the same few calls again and again (one product id after another):
    # a call read once is kept on the harness by the call's name and arguments text,
    # which are all it is read from (its id is only carried along: a call of another id
    # is the kept one under that id). A ToolCall is frozen; only one whose arguments are
    # flat (strings, numbers, booleans, nulls) is kept, so nothing in a shared one can
    # change (nothing in the room writes to it).
    kept = harness.read_calls
    key = (name, raw)
    hit = kept.get(key)
    if hit is not None:
        if hit.id == cid:
            return hit
        return ToolCall(cid, hit.name, hit.raw_arguments, hit.canonical, hit.arguments, hit.error, hit.key)
    parsed = _read_call(cid, name, raw, harness)
    if parsed.arguments is not None and not all(type(v) in _SCALARS for v in parsed.arguments.values()):
        return parsed
    return kept.keep(key, parsed)


def _read_call(cid: str, name: Any, raw: Any, harness: Harness) -> ToolCall:
    try:
        raw_text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    except (ValueError, RecursionError, TypeError):
        raw_text, raw = "", None  # unreadable arguments: reported below as not an object
    if not isinstance(name, str) or not name:
        return ToolCall(cid, str(name), raw_text, error="tool call without a function name")
    names, fields = harness.name_tables
    canonical = names.get(name)
    if canonical is None:
        names = [v.name for v in harness.tools.values()]
        return ToolCall(cid, name, raw_text, error=f"unknown tool {name!r}{did_you_mean(name, names)}; tools now: {', '.join(names)}")
    if isinstance(raw, str):
        parsed = _ARGUMENTS.get(raw)
        if parsed is None:
            if _too_deep(raw):
                return ToolCall(cid, name, raw_text, canonical,
                                error=f"arguments of {name} are nested deeper than {MAX_NESTING} levels")
            try:
                parsed = json.loads(raw) if raw.strip() else {}
            except (ValueError, RecursionError) as exc:
                return ToolCall(cid, name, raw_text, canonical, error=f"arguments of {name} are not valid JSON: {exc}")
            _remember_arguments(raw, parsed)
        raw = parsed
    if not isinstance(raw, dict):
        return ToolCall(cid, name, raw_text, canonical, error=f"arguments of {name} must be a JSON object")
    renamed, to_canonical = fields[canonical]
    stale = [k for k in raw if k in renamed and k not in to_canonical]
    if stale:
        now = ", ".join(f"{k!r} is now {renamed[k]!r}" for k in stale)
        return ToolCall(cid, name, raw_text, canonical, error=f"unknown argument for {name}: {now}")
    args = {to_canonical.get(k, k): v for k, v in raw.items()}
    return ToolCall(cid, name, raw_text, canonical, args, key=arguments_key(args))


def arguments_key(arguments: dict) -> str:
    """A call's arguments as the room's memos key them: a tool's result and whether a call
    was made before depend on the arguments alone (by field, in any order)."""
    return repr(sorted(arguments.items()))


def _remember_arguments(text: str, parsed: Any) -> None:
    """Keep a parsed arguments object by its JSON text: a policy sends the same few
    argument strings again and again (one product id after another). Only flat objects of
    strings, numbers, booleans and nulls are kept: nothing in them can be changed, and
    the call's own ``arguments`` is a new dict built from it (see :func:`_parse_call`)."""
    if isinstance(parsed, dict) and all(type(v) in _SCALARS for v in parsed.values()):
        if len(_ARGUMENTS) >= 4096:
            _ARGUMENTS.clear()
        _ARGUMENTS[text] = parsed


_ARGUMENTS: dict[str, dict] = {}
_SCALARS = frozenset({str, int, float, bool, type(None)})


_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
_LEADING = re.compile(r"^.*?</think>", re.S | re.I)


def strip_reasoning(action: Any) -> tuple[Any, int]:
    """``(action without its reasoning, characters of reasoning removed)``.

    Reasoning is text inside ``<think>...</think>`` (tags in lower, upper or title case; an
    unclosed ``<think>`` runs to the end; a ``</think>`` with no opening tag closes what came before it, as reasoning
    models emit when the chat template opens the tag). The room never hears it. A JSON
    action's ``content`` is stripped the same way. Non-text actions pass unchanged.

    Example:
        >>> strip_reasoning("<think>she asks the price</think>@mia 19.99")
        ('@mia 19.99', 19)
    """
    if isinstance(action, bytes):
        action = action.decode("utf-8", errors="replace")
    # (checked without lower-casing the action: this runs on every step)
    if not isinstance(action, str) or ("hink>" not in action and "HINK>" not in action):
        return action, 0
    if action.lstrip().startswith("{"):
        try:
            message = json.loads(action)
        except (ValueError, RecursionError):
            message = None
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            content, removed = _strip_text(message["content"])
            return json.dumps({**message, "content": content}, ensure_ascii=False), removed
    return _strip_text(action)


def _strip_text(text: str) -> tuple[str, int]:
    removed = 0

    def cut(m: re.Match) -> str:
        nonlocal removed
        removed += len(re.sub(r"</?think>", "", m.group(0), flags=re.I).strip())
        return ""

    text = _LEADING.sub(cut, _THINK.sub(cut, text), count=1)
    while "<think>" in text.lower():  # a cut can join a new tag ("<<think></think>think>")
        text = _THINK.sub(cut, text)
    return text.strip(), removed
