"""The system prompt as of now, rebuilt only when what it shows has changed.

A room's prompt depends on the harness, the market (featured product, rules, style) and
the skills the waiting chat calls for; a stream alternates between a few of these, so
recent prompts are kept by what they depend on. The text is a pure function of those
(and of the catalog's names and the room's name and language), never of the seed, so
the prompts are kept for every room of the process: a new episode of a spec opens on the
prompt the previous one rendered.
"""

from __future__ import annotations

from liveroom_sim.harness import prompt
from liveroom_sim.harness.core import Harness
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.world.derived import Same
from liveroom_sim.world.market import Market


class SystemPrompts:
    """The system prompt of one room, cached by the state it depends on."""

    def __init__(self, room_info: dict, language: str):
        self.room_info, self.language = room_info, language
        self._room = (language, room_info["name"], room_info["host_name"])
        self._step = None
        self._market: tuple = (None, ())
        self._shown: tuple | None = None  # (harness, market state, skills) of self._text
        self._text = ""
        self._skills_for = None
        self._triggers: tuple[tuple[str, tuple[str, ...]], ...] = ()
        self._skill_hits: dict[int, frozenset[str]] = {}

    def text(self, harness: Harness, market: Market, crowd: Crowd) -> str:
        """The system prompt for ``harness``, ``market`` and ``crowd`` as they are now."""
        if self._step == (crowd.version, market.version, harness):
            return self._text
        skills = self._active_skills(harness, crowd)
        if self._market[0] != market.version:  # most steps change only the waiting chat
            self._market = (market.version, (market.featured, repr(market.style)))
        self._step = (crowd.version, market.version, harness)
        shown = (harness, market.rules, self._market[1], skills)
        last = self._shown
        if last is not None and shown[0] is last[0] and shown[1] is last[1] and shown[2:] == last[2:]:
            return self._text  # (the waiting chat changed, not what the prompt shows)
        self._shown = shown
        self._text = _render(harness, market, self.language, self.room_info, skills, self._room)
        return self._text

    def _active_skills(self, harness: Harness, crowd: Crowd) -> frozenset[str]:
        """Skills whose triggers appear in the waiting chat (each message read once)."""
        if self._skills_for is not harness:
            # Per harness state: the triggered skills with their trigger words lower-cased
            # once (what prompt.active_skills reads); none matter when the policy loads
            # skills itself (the prompt then lists every skill the same way).
            self._skills_for, self._skill_hits = harness, {}
            self._triggers = () if harness.skills_on_demand else tuple(
                (sk.name, tuple(t.lower() for t in sk.triggers)) for sk in harness.skills if sk.when != "always")
        triggers = self._triggers
        if not triggers:
            return _NONE
        hits = self._skill_hits
        active: set[str] = set()
        for m in crowd.pending:
            hit = hits.get(m.mid)
            if hit is None:
                text = m.text.lower()
                hit = hits[m.mid] = frozenset(name for name, words in triggers if any(w in text for w in words))
            if hit:
                active |= hit
        return frozenset(active) if active else _NONE


_NONE: frozenset[str] = frozenset()


def _render(harness: Harness, market: Market, language: str, room_info: dict, skills: frozenset[str], room: tuple) -> str:
    """:func:`prompt.system_prompt`, kept by what it reads. Waiting chat switches skills in
    and out, so a few prompts alternate in a room, and every episode of a spec opens on
    the same few. Kept on the harness, by the rule set and base catalog (by identity:
    frozen objects), the featured product, the style, the skills and the room's language
    and names."""
    kept = harness.prompts
    key = (Same(market.rules), Same(market.catalog.base), market.featured, repr(market.style), skills, room)
    text = kept.get(key)
    if text is None:
        text = kept.keep(key, prompt.system_prompt(harness, market, language, room_info, skills))
    return text
