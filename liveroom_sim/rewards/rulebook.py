"""The rules in force, compiled once for fast matching against many replies.

A :class:`~liveroom_sim.world.rules.RuleSet` is frozen; its rulebook (normalised phrases, the
refusal pattern) is built the first time a reply is checked against it and kept as long
as the rule set lives.
"""

from __future__ import annotations

import re

from liveroom_sim.world.rules import RuleSet
from liveroom_sim.world.text import normalize_phrase, phrase_pattern

# A refusal covers its own clause only: "I can't say that, but it's the best" says it.
CLAUSE = re.compile(r"(?:[^.!?。！？\n;；]+?)(?=$|[.!?。！？\n;；]|\bbut\b|\bhowever\b|但是|不过|可是)")
_BOOKS: dict[int, "Rulebook"] = {}


class Rulebook:
    """Compiled matching for one rule set (see the module docstring)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        self.banned = [(normalize_phrase(b.phrase), tuple(normalize_phrase(w) for w in b.allow), b) for b in rules.banned]
        self.claims = [(tuple(normalize_phrase(p) for p in c.patterns), c) for c in rules.claims]
        self.disclosures = [(tuple(normalize_phrase(f) for f in d.forms), d) for d in rules.disclosures]
        self.disparaging = tuple(normalize_phrase(w) for w in rules.disparaging)
        markers = tuple(normalize_phrase(m) for m in rules.refusal_markers)
        self.refusal = re.compile("|".join(map(re.escape, markers))) if markers else None
        # One pass that tells whether any banned phrase, claim pattern or disparaging
        # word can be in a reply at all (most replies hold none).
        words = [p for p, _, _ in self.banned] + [p for ps, _ in self.claims for p in ps] + list(self.disparaging)
        self.suspect = re.compile("|".join(map(re.escape, sorted(set(words), key=len, reverse=True)))) if words else None

    def refusals(self, norm: str) -> list[str]:
        """The clauses of a normalised reply that refuse something (a polite no)."""
        if self.refusal is None or not self.refusal.search(norm):
            return []
        return [c for c in CLAUSE.findall(norm) if self.refusal.search(c)]


def rulebook(rules: RuleSet) -> Rulebook:
    """The (cached) rulebook of ``rules``."""
    book = _BOOKS.get(id(rules))
    if book is None or book.rules is not rules:
        if len(_BOOKS) > 256:
            _BOOKS.clear()
        book = _BOOKS[id(rules)] = Rulebook(rules)
    return book


def said(norm: str, phrase: str, allow: tuple[str, ...] = ()) -> bool:
    """Whether normalised ``phrase`` occurs in ``norm`` as a whole word (Latin script) and
    not inside one of the normalised ``allow`` words (最近 is not 最)."""
    if phrase not in norm:
        return False
    for m in phrase_pattern(phrase).finditer(norm):
        start, end = m.span()
        if not any(_covers(norm, w, start, end) for w in allow):
            return True
    return False


def _covers(norm: str, word: str, start: int, end: int) -> bool:
    i = norm.find(word, max(0, end - len(word)))
    return i != -1 and i <= start
