"""How the built-in hosts cope with tool faults (see ``docs/tool-faults.md``).

A tool service may time out, answer malformed or truncated output, or deny a call. The
scripted host retries a call that timed out or came back unreadable, once; when a lookup
still fails (or was denied) it answers the asks whose lookups came back, tells the viewer
it cannot check the rest right now, states none of the facts it could not look up, and
looks the question up again in a later exchange.
"""

from __future__ import annotations

import json
from functools import lru_cache

from liveroom_sim.policies.host_lines import Voice
from liveroom_sim.policies.reading import disclosure_rules
from liveroom_sim.policies.wording import _disclosures, _fit, _greeted

_RETRY = " | retry"


@lru_cache(maxsize=4096)
def _fault_of(content: str | None) -> str | None:
    """The fault a tool message shows, or ``None`` for a readable result (or the
    policy's own error, such as a bad argument, which a retry would repeat). Cached: the
    tool results in view are read again on every step."""
    try:
        result = json.loads(content or "")
    except (TypeError, ValueError):
        return "unreadable"
    if not isinstance(result, dict):
        return "unreadable"
    error = str(result.get("error", ""))
    if error.startswith("timeout"):
        return "timeout"
    if error.startswith("permission denied"):
        return "denied"
    return None


def _tool_turn_at(messages: list[dict], end: int) -> tuple[int, list[dict]]:
    """The index of the assistant message whose tool results end at ``end`` (inclusive),
    and those results, oldest first."""
    i = end
    while i >= 0 and messages[i]["role"] == "tool":
        i -= 1
    return i, messages[i + 1: end + 1]


def _retry_faulted(messages: list[dict]) -> str | None:
    """One more tool turn for the calls of the last one that timed out or came back
    malformed or truncated, unless that turn was itself the retry; else ``None``."""
    i, tools = _tool_turn_at(messages, len(messages) - 1)
    if i < 0:
        return None
    asked = messages[i]
    note = asked.get("content") or ""
    if note.endswith(_RETRY):
        return None
    by_id = {c.get("id"): c for c in asked.get("tool_calls") or []}
    again = [by_id[t.get("tool_call_id")] for t in tools
             if _fault_of(t.get("content")) in ("timeout", "unreadable") and t.get("tool_call_id") in by_id]
    if not again:
        return None
    calls = [{"id": f"retry_{n}", "type": "function", "function": dict(c["function"])} for n, c in enumerate(again)]
    return json.dumps({"content": (note or "serving - | pitch | ") + _RETRY, "tool_calls": calls}, ensure_ascii=False)


def _lookup_results(messages: list[dict], end: int | None = None,
                    read: bool = True) -> tuple[list[dict], str, set[str]]:
    """``(readable results newest first, the lookup's note, the tools whose call still
    failed)`` of the lookup that ends the messages (or ends at index ``end``), a retry
    folded into its first try; with ``read`` false, no result is parsed (what a lookup
    served is read from its note and its faults alone, on every step)."""
    results: list[dict] = []
    i, tools = _tool_turn_at(messages, len(messages) - 1 if end is None else end)
    note = (messages[i].get("content") or "") if i >= 0 else ""
    faulted: set[str] = set()
    retried = note.endswith(_RETRY)
    names = {c.get("id"): c["function"]["name"] for c in (messages[i].get("tool_calls") or [] if i >= 0 else [])}
    for t in reversed(tools):
        fault = _fault_of(t.get("content"))
        if fault is not None:
            faulted.add(names.get(t.get("tool_call_id"), "?"))
        elif read:
            result = json.loads(t["content"])
            if "error" not in result:
                results.append(result)
    if retried and i > 0 and messages[i - 1]["role"] == "tool":
        first, earlier = _tool_turn_at(messages, i - 1)
        retried_ids = {c["function"]["name"] + c["function"]["arguments"] for c in messages[i].get("tool_calls") or []}
        first_calls = {c.get("id"): c for c in messages[first].get("tool_calls") or []}
        for t in reversed(earlier):
            call = first_calls.get(t.get("tool_call_id"))
            fault = _fault_of(t.get("content"))
            if fault == "denied":
                faulted.add(call["function"]["name"] if call else "?")
            elif read and fault is None and (call is None or call["function"]["name"] + call["function"]["arguments"] not in retried_ids):
                result = json.loads(t["content"])
                if "error" not in result:
                    results.append(result)
        note = note.removesuffix(_RETRY)
    return results, note, faulted


def all_disclosures(system: str, language: str) -> list[str]:
    """The first form of every disclosure rule in force: what a reply about a product
    owes when its details, which say which rules apply, could not be read."""
    return [forms[0] for _, forms in disclosure_rules(system, language) if forms]


def _cannot_check(voice: Voice, mention: str, subject: str, system: str, results: list[dict],
                  known: dict[str, dict] | None = None) -> str:
    """The honest reply when a lookup failed: the asker addressed, no fact stated, and
    the disclosures a reply about the product owes, read from its details (or, when they
    could not be read, from ``known``: those looked up earlier this stream; all in force
    when neither says whether it is sponsored or a health food)."""
    if not mention:  # nobody asked: no presentation without its facts
        return _fit(voice, "", [voice.line("greet")], [], system)
    pids = subject.split("+")
    facts = next((r for r in results if "sponsored" in r and r.get("id", r.get("product_id")) in pids), None)
    if facts is None:
        facts = next(((known or {})[p] for p in pids if p in (known or {})), None)
    if facts is not None:
        must = _disclosures(system, facts, voice.lines.language)
    else:
        must = all_disclosures(system, voice.lines.language)
    return _fit(voice, _greeted(mention, system), [voice.line("cannot_check")], [], system,
                must=list(dict.fromkeys(must)))


def note_fields(note: str) -> tuple[str, str, str]:
    """``(mention, intents, subjects)`` of a lookup's note ("serving @amy | price+stock |
    p1+p1"), the mention ``""`` where the lookup serves nobody in particular ("-")."""
    mention, intents, subjects = (x.strip() for x in (note.removeprefix("serving ").split("|") + ["", ""])[:3])
    return ("" if mention == "-" else mention), intents, subjects


def _failed_asks(messages: list[dict]) -> set[tuple[str, str, str]]:
    """``(mention, intent, subject)`` of the asks whose latest lookup in view failed (the
    host said it could not check): they are served again, with a new lookup."""
    out = set()
    for k in range(1, len(messages)):
        m = messages[k]
        if m["role"] == "assistant" and not m.get("tool_calls") and messages[k - 1]["role"] == "tool":
            _, note, faulted = _lookup_results(messages, k - 1, read=False)
            if note.startswith("serving "):
                mention, intents, subjects = note_fields(note)
                mention = mention or "-"
                asks = {(mention, i, p) for i, p in zip(intents.split("+"), subjects.split("+"))}
                # Only the latest lookup of an ask counts: one that got through later served it.
                out = (out | asks) if faulted else (out - asks)
    return out
