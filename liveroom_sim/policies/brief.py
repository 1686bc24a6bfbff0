"""A briefer honest host: the reference host's reading and answers, without its filler.

:class:`BriefAvatar` is the second honest reference of the not-gameable suite (issue 25):
it serves the same needs as :class:`~liveroom_sim.policies.scripted.ScriptedAvatar` (the
same lookups, the same facts, the same refusals and disclosures) but says less: the
slogan, which the reference repeats in every reply, only as often as the directive asks
for it (at least every fifth reply), no extra sentence that holds a phrase the rules
in force ban (the reference's "最低到手" deal line, which a hook blocks), and nothing
said twice: a request it has served is not served again when it is still waiting (its
reply missed: the same lookup would bring the same reply), however long ago it was
served (the reference remembers the requests it served too, since stop 39; before, it
served one viewer's misread request 12 times in LiveRoom-v0 seed 100). A reward that pays for words
rather than for served needs pays it less than the reference; this one must pay it at
least as much.
"""

from __future__ import annotations

import json
import re

from liveroom_sim.policies.faults import _failed_asks, note_fields
from liveroom_sim.policies.reading import WAITING, language_of, system_text, room_update, waiting_in, stream_second, terms
from liveroom_sim.policies.scripted import ScriptedAvatar
from liveroom_sim.policies.wording import _ended

#: The directive asks for the slogan at least every fifth reply: said once, then left out
#: of the next three.
SLOGAN_GAP = 3


#: How many served requests one turn may pass over before it serves what the reference chose.
MAX_SKIPPED = 8


#: What this host remembers on top of the reference's memory.
_OWN = frozenset({"_served", "_spent", "_pending", "_clock"})


class BriefAvatar(ScriptedAvatar):
    """The reference host, briefer: the same decisions, without a slogan that is not owed
    yet and without serving a request twice. Deterministic, like the reference
    (temperature 0); it remembers the requests it served over the episode (a new episode,
    its clock started again, starts afresh)."""

    def __init__(self, temperature: float = 0.0, seed: int = 0):
        super().__init__(temperature, seed)
        # (mention, intent, subject) served -> the texts of that viewer's requests waiting then
        self._served: dict[tuple[str, str, str], set[str]] = {}
        self._spent: set[tuple[str, str]] = set()  # (mention, text) served in full, still waiting
        self._pending: tuple[str, set[tuple[str, str]], set[str]] | None = None  # a lookup's, till its reply
        self._clock = -1

    def __call__(self, observation: str, info: dict) -> str:
        messages = info["messages"]
        self._new_episode(messages)
        if messages and messages[-1]["role"] == "tool":
            action = super().__call__(observation, info)
        else:
            action = self._unrepeated(observation, info)
        if action.lstrip().startswith("{"):
            return action  # tool turns are the reference's
        if self._pending is not None:  # the reply to a lookup: its asks are served
            self._note_served(*self._pending)
            self._pending = None
        return _without_banned(_without_filler(action, messages, language_of(info)), messages)

    def _note_served(self, mention: str, asks: set[tuple[str, str]], waiting: set[str]) -> None:
        for intent, subject in asks:
            self._served.setdefault((mention, intent, subject), set()).update(waiting)

    def _new_episode(self, messages: list[dict]) -> None:
        now = stream_second(room_update(messages))
        if now < self._clock:
            self._served, self._spent, self._pending = {}, set(), None
        self._clock = now

    def _reference_state(self) -> dict:
        """A copy of what the reference host remembers between turns (an action asked of
        it and not taken must leave no trace)."""
        return {k: (v.copy() if isinstance(v, (dict, set, list)) else v) for k, v in vars(self).items()
                if k not in _OWN}

    def _unrepeated(self, observation: str, info: dict) -> str:
        """The reference's choice among the waiting requests this host has not served in
        full. An action whose every ask (a lookup's, or a greeting's or refusal's) was
        served while one of that viewer's requests waiting now was waiting already is a
        repeat: that request was served and is still waiting (the reply missed), so it is
        set aside for the episode and the choice made again."""
        messages = info["messages"]
        failed = {(i, s) for _, i, s in _failed_asks(messages)}
        for _ in range(MAX_SKIPPED):
            view = _hiding(messages, self._spent) if self._spent else messages
            kept = self._reference_state()
            action = super().__call__(observation, {**info, "messages": view} if view is not messages else info)
            mention, asks = _served_by(action)
            if not action.lstrip().startswith("{"):  # a greeting or refusal: the mention it opens with
                mention = next((m for m, _, _ in waiting_in(view) if m in action[:80]), "")
                asks = {("reply", "")}
            waiting = {text for m, _, text in waiting_in(view) if m == mention}
            if not mention or not waiting:
                return action
            fresh = asks - failed  # an ask whose lookup failed is served again (a retry)
            stale = set.intersection(*(self._served.get((mention, i, s), set()) & waiting for i, s in fresh)) \
                if fresh else set()
            if stale:
                self._spent.update((mention, text) for text in stale)
                self.__dict__.update(kept)  # the action is not taken: the reference did not act
                continue
            if action.lstrip().startswith("{"):
                self._pending = (mention, asks, waiting)
            else:
                self._note_served(mention, asks, waiting)
            return action
        return action


def _served_by(action: str) -> tuple[str, set[tuple[str, str]]]:
    """The mention a lookup serves and the asks ``(intent, subject)`` it serves (its note
    says); ``("", set())`` for any other action."""
    if not action.lstrip().startswith("{"):
        return "", set()
    try:
        note = json.loads(action).get("content") or ""
    except (json.JSONDecodeError, AttributeError):
        return "", set()
    if not note.startswith("serving "):
        return "", set()
    mention, intents, subjects = note_fields(note)
    return mention, {(i, p) for i, p in zip(intents.split("+"), subjects.split("+")) if i != "disclose"}


def _hiding(messages: list[dict], spent: set[tuple[str, str]]) -> list[dict]:
    """``messages`` with the requests in ``spent`` left out of the latest waiting list."""
    for k in range(len(messages) - 1, -1, -1):
        m = messages[k]
        if m["role"] == "user" and not (m["content"] or "").startswith("[hook]"):
            lines = m["content"].split("\n")
            kept = [line for line in lines if not _spent_line(line, spent)]
            if len(kept) == len(lines):
                return messages
            return [*messages[:k], {**m, "content": "\n".join(kept)}, *messages[k + 1:]]
    return messages


def _spent_line(line: str, spent: set[tuple[str, str]]) -> bool:
    w = WAITING.match(line)
    return w is not None and (w.group(1), w.group(3)) in spent


def _without_filler(reply: str, messages: list[dict], language: str) -> str:
    """``reply`` without the slogan when one of the host's last :data:`SLOGAN_GAP`
    replies in view said it (with fewer in view, it is said: the directive is never
    missed for want of history)."""
    system = system_text(messages)
    slogan = terms(system).slogan
    if not slogan:
        return reply
    said = _ended(slogan, language)
    if said not in reply:
        return reply
    replies = [m["content"] for m in messages
               if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")][-SLOGAN_GAP:]
    if not any(slogan in r for r in replies):
        return reply
    trimmed = reply.replace(" " + said, "", 1) if " " + said in reply else reply.replace(said, "", 1)
    return trimmed.strip() or reply


#: The rules' line of banned phrases as the prompt states it ("Banned phrases:", 禁用语:).
_BANNED_LINE = re.compile(r"^\W*(?:[^\n:：]*banned[^\n:：]*|禁用语)\s*[:：](.*)$", re.IGNORECASE | re.MULTILINE)
_SENTENCES = re.compile(r"(?<=[.!?。！？])\s*")


def _without_banned(reply: str, messages: list[dict]) -> str:
    """``reply`` without the sentences after its first that hold a phrase the rules in
    force ban (a whole word in Latin script, any substring in Chinese): the first sentence
    is the answer, what follows is extra."""
    line = _BANNED_LINE.search(system_text(messages))
    banned = re.findall(r'"([^"]+)"', line.group(1)) if line else []
    if not banned:
        return reply
    low = reply.lower()
    if not any(b.lower() in low for b in banned):
        return reply
    parts = [p for p in _SENTENCES.split(reply) if p]
    kept = parts[:1] + [p for p in parts[1:] if not any(_holds(p, b) for b in banned)]
    return (" " if reply.isascii() else "").join(kept) if len(kept) < len(parts) else reply


def _holds(sentence: str, phrase: str) -> bool:
    if phrase.isascii():
        return re.search(rf"(?<![a-z]){re.escape(phrase.lower())}(?![a-z])", sentence.lower()) is not None
    return phrase in sentence
