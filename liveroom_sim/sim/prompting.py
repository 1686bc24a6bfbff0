"""The system prompt as of now, rebuilt only when what it shows has changed.

A room's prompt depends on the harness, the market (featured product, rules, style) and
the skills the waiting chat calls for; a stream alternates between a few of these, so
recent prompts are kept by what they depend on.
"""

from __future__ import annotations

from liveroom_sim.harness import prompt


class SystemPrompts:
    """The system prompt of one room, cached by the state it depends on."""

    def __init__(self, room_info: dict, language: str):
        self.room_info, self.language = room_info, language
        self._prompts: dict[tuple, str] = {}
        self._step = None
        self._market: tuple = (None, ())
        self._text = ""
        self._skills_for = None
        self._triggers: tuple[tuple[str, tuple[str, ...]], ...] = ()
        self._skill_hits: dict[int, frozenset[str]] = {}

    def text(self, harness, market, crowd) -> str:
        """The system prompt for ``harness``, ``market`` and ``crowd`` as they are now."""
        if self._step == (crowd.version, market.version, harness):
            return self._text
        skills = self._active_skills(harness, crowd)
        if self._market[0] != market.version:  # most steps change only the waiting chat
            self._market = (market.version, (market.featured, id(market.rules), repr(market.style)))
        key = (id(harness), *self._market[1], skills)
        self._step = (crowd.version, market.version, harness)
        # Waiting chat switches skills in and out, so a few prompts alternate: keep them.
        text = self._prompts.get(key)
        if text is None:
            text = prompt.system_prompt(harness, market, self.language, self.room_info, skills)
            if len(self._prompts) > 64:
                self._prompts.clear()
            self._prompts[key] = text
        self._text = text
        return text

    def _active_skills(self, harness, crowd) -> frozenset[str]:
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
            return frozenset()
        hits = self._skill_hits
        active: set[str] = set()
        for m in crowd.pending:
            hit = hits.get(m.mid)
            if hit is None:
                text = m.text.lower()
                hit = hits[m.mid] = frozenset(name for name, words in triggers if any(w in text for w in words))
            active |= hit
        return frozenset(active)
