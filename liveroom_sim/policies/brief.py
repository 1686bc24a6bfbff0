"""A briefer honest host: the reference host's reading and answers, without its filler.

:class:`BriefAvatar` is the second honest reference of the not-gameable suite (issue 25):
it serves the same needs as :class:`~liveroom_sim.policies.scripted.ScriptedAvatar` (the
same lookups, the same facts, the same refusals and disclosures) but says less: the
slogan, which the reference repeats in every reply, only as often as the directive asks
for it (at least every fifth reply). A reward that pays for words rather than for served
needs pays it less than the reference; this one must pay it at least as much.
"""

from __future__ import annotations

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
        return _without_filler(action, info["messages"], _language(info))


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
