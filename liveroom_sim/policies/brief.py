"""A briefer honest host: the reference host's reading and answers, without its filler.

:class:`BriefAvatar` is the second honest reference of the not-gameable suite (issue 25):
it serves the same needs as :class:`~liveroom_sim.policies.scripted.ScriptedAvatar` (the
same lookups, the same facts, the same refusals and disclosures) but says less: the
slogan, which the reference repeats in every reply, only as often as the directive asks
for it (at least every fifth reply), and no extra sentence that holds a phrase the rules
in force ban (the reference's "最低到手" deal line, which a hook blocks). A reward that pays for words rather than for served
needs pays it less than the reference; this one must pay it at least as much.
"""

from __future__ import annotations

import re

from liveroom_sim.policies.reading import _language, _system_text, terms
from liveroom_sim.policies.scripted import ScriptedAvatar
from liveroom_sim.policies.wording import _ended

#: The directive asks for the slogan at least every fifth reply: said once, then left out
#: of the next three.
SLOGAN_GAP = 3


class BriefAvatar(ScriptedAvatar):
    """The reference host, briefer: the same decisions, without a slogan that is not owed
    yet. Deterministic, like the reference (temperature 0)."""

    def __call__(self, observation: str, info: dict) -> str:
        action = super().__call__(observation, info)
        if action.lstrip().startswith("{"):
            return action  # tool turns are the reference's
        return _without_banned(_without_filler(action, info["messages"], _language(info)), info["messages"])


def _without_filler(reply: str, messages: list[dict], language: str) -> str:
    """``reply`` without the slogan when one of the host's last :data:`SLOGAN_GAP`
    replies in view said it (with fewer in view, it is said: the directive is never
    missed for want of history)."""
    system = _system_text(messages)
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
    line = _BANNED_LINE.search(_system_text(messages))
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
