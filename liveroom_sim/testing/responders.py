"""Responders for the test server: what it answers for each choice of a request.

A responder is ``(request body, choice index) -> content str | {"content": ...,
"tool_calls": [...]}``. :data:`RESPONDERS` names the ones the command line offers.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Responder = Callable[[dict, int], dict | str]
"""`(request body, choice index) -> content str | {"content": ..., "tool_calls": [...]}`."""

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
# One token per CJK character, one per run of other non-space characters: rough but stable.
_TOKEN_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def count_tokens(text: str | None) -> int:
    """Approximate token count: whitespace-separated words plus one per CJK character.

    Example:
        >>> count_tokens("hello big world"), count_tokens("你好 world")
        (3, 3)
    """
    text = text or ""
    if text.isascii():  # no CJK, so the same count as the regex's, several times faster
        return len(text.split())
    return len(_TOKEN_RE.findall(text))


def text_of(content: Any) -> str:
    """Return the text of a message `content`: a string, None, or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return str(content)


def echo_responder(request: dict, choice_index: int) -> str:
    """Repeat the content of the last user message (empty if there is none)."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def scripted_responder(replies: Sequence[str | dict]) -> Responder:
    """Answer request k with `replies[k % len(replies)]`, cycling through the script.

    With `n` > 1, choice i of request k gets `replies[(k + i) % len(replies)]`. Requests that
    get a fault instead of a reply do not consume the script, so a retried request gets the
    reply the failed attempt would have had. Each reply is a content string or a message dict.

    Raises:
        ValueError: If `replies` is empty.
    """
    script = list(replies)
    if not script:
        raise ValueError("scripted_responder needs at least one reply")
    lock = threading.Lock()
    state = {"next": 0, "base": 0}

    def respond(request: dict, choice_index: int) -> str | dict:
        with lock:
            if choice_index == 0:
                state["base"], state["next"] = state["next"], state["next"] + 1
            return script[(state["base"] + choice_index) % len(script)]

    return respond


def policy_responder(policy: Callable[[str, dict], str]) -> Responder:
    """Adapt a LiveRoom policy `policy(observation, info) -> action` into a responder.

    The observation is the text of the last message; info is `{"messages", "tools"}` from the
    request. An action that is a JSON object with "tool_calls" (OpenAI format) or "content" is
    sent as that assistant message; any other action is sent as plain content.
    """

    def respond(request: dict, choice_index: int) -> str | dict:
        messages = request.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], Mapping) else {}
        info = {"messages": messages, "tools": request.get("tools") or []}
        action, parsed = policy(text_of(last.get("content")), info), None
        with contextlib.suppress(ValueError):
            parsed = json.loads(action) if action.lstrip().startswith("{") else None
        if isinstance(parsed, dict) and ("tool_calls" in parsed or "content" in parsed):
            return {"content": parsed.get("content"), "tool_calls": parsed.get("tool_calls") or []}
        return action

    return respond


def _scripted_avatar() -> Responder:
    from liveroom_sim.policies.scripted import ScriptedAvatar

    return policy_responder(ScriptedAvatar())


def _judge() -> Responder:
    from liveroom_sim.testing.judge import judge_responder

    return judge_responder()


RESPONDERS: dict[str, Callable[[], Responder]] = {
    "echo": lambda: echo_responder,
    "scripted-avatar": _scripted_avatar,
    "judge": _judge,  # a scripted LLM judge (liveroom_sim.testing.judge)
    "fixed": lambda: scripted_responder(["Thanks for watching, ask me anything about today's lineup!"]),
}
"""Responder name (the CLI's `--responder`) -> zero-argument factory."""
