"""The chat history the policy is shown: exchanges of a room update and what followed.

The room keeps the messages' flattened text (and, when it records, the message dicts);
the policy is handed the dicts (copies, when they are recorded), so nothing a policy does
to them reaches the room.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Block:
    """One exchange of the chat history: a room update and what followed it."""

    public: list[dict] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    record: list[dict] | None = None
    _text: str = ""
    _text_of: int = 0  # how many of the texts _text joins

    def add(self, *messages: dict) -> None:
        """Append messages (fresh dicts: the block takes them over). The room keeps
        their text; the policy is handed the dicts, or copies when the room records
        them, so nothing a policy does to them reaches the room."""
        # (Nothing of the room reads the dicts again: copying them for the policy only
        # made a tool turn's nested dicts twice over, more objects for the cyclic GC.)
        for m in messages:
            self.texts.append(flatten_message(m))
        if self.record is None:
            self.public.extend(messages)
        else:
            self.public.extend(_copy_message(m) for m in messages)
            self.record.extend(messages)

    def text(self) -> str:
        if self._text_of != len(self.texts):
            self._text, self._text_of = "\n\n".join(self.texts), len(self.texts)
        return self._text


def _copy_message(m: dict) -> dict:
    if "tool_calls" in m:
        return {**m, "tool_calls": [{**c, "function": {**c["function"]}} for c in m["tool_calls"]]}
    return {**m}


def flatten_message(m: dict) -> str:
    """One chat message as ``role: content`` text, tool calls shown as ``-> name(args)``."""
    body = m.get("content") or ""
    for c in m.get("tool_calls") or ():
        body += f"\n-> {c['function']['name']}({c['function']['arguments']})"
    return f"{m['role']}: {body}"
