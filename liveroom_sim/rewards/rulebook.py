"""The rules in force, compiled once into patterns over the folded text of a reply.

A :class:`~liveroom_sim.world.rules.RuleSet` is frozen; its rulebook is built the first
time a reply is checked against it and kept as long as the rule set lives. Every rule
phrase is normalised and folded like replies are (:mod:`liveroom_sim.rewards.lexicon`),
English words match in any inflection, and multi-character Chinese phrases also match by
sound. Each pattern is searched once per reply, so checking is linear in the reply.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from liveroom_sim.rewards.lexicon import CJK, Sounds, fold, word_forms
from liveroom_sim.world.rules import ClaimRule, Disclosure, RuleSet
from liveroom_sim.world.text import normalize

# Kept for the fact checks, which read "sold out" per clause.
CLAUSE = re.compile(r"(?:[^.!?。！？\n;；]+?)(?=$|[.!?。！？\n;；]|\bbut\b|\bhowever\b|但是|不过|可是)")
# What ends a refusal's reach: a comma or sentence end, or a turn such as "but".
_STOP = r"(?!\bbut\b|\bhowever\b|\banyway\b|但|不过|可是|然而)[^,.!?;:\n。！？；]"
_GAP = r"[^,.!?;\n。！？；]"
_BOOKS: dict[int, "Rulebook"] = {}


def rule_text(phrase: str) -> str:
    """A rule phrase read the way replies are read (normalised, then folded)."""
    return fold(normalize(phrase))


def _alternation(phrases, inflect: bool = True) -> str:
    forms = sorted({rule_text(p) for p in phrases if rule_text(p)}, key=len, reverse=True)
    return "|".join(word_forms(f) if inflect else _literal(f) for f in forms)


def _literal(folded: str) -> str:
    right = r"(?![a-z0-9])" if folded[-1:].isascii() and folded[-1:].isalnum() else ""
    if folded[:1].isascii() and folded[:1].isalnum():
        first = re.escape(folded[0])
        return f"{first}(?<![a-z0-9]{first}){re.escape(folded[1:])}{right}"
    return re.escape(folded) + right


class Check(NamedTuple):
    """One compiled rule: ``said`` finds it; ``negated`` finds it under a negation.
    ``firsts``: the characters any match of ``said`` starts with (a text holding none of
    them is not searched: most rules are ruled out by a few ``in`` tests)."""

    said: re.Pattern
    negated: re.Pattern | None
    sound: re.Pattern | None = None
    firsts: frozenset = frozenset()
    sound_firsts: frozenset = frozenset()


def _firsts(phrases) -> frozenset:
    return frozenset(rule_text(p)[:1] for p in phrases if rule_text(p))


class Rulebook:
    """Compiled matching for one rule set (see the module docstring)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        neg = _alternation(rules.negations, inflect=False)
        self.negation = neg
        cjk_phrases = [rule_text(p) for p in (*(f for b in rules.banned for f in (b.phrase, *b.forms)),
                                               *(p for c in rules.claims for p in c.patterns))
                       if re.fullmatch(rf"[{CJK}]{{2,}}", rule_text(p))]
        self.sounds = Sounds(cjk_phrases) if cjk_phrases else None
        self.banned = [(b, self._check([b.phrase, *b.forms], negatable=False)) for b in rules.banned]
        self.claims = [(c, self._claim(c)) for c in rules.claims]
        self.disclosures = [(d, self._check(d.forms, negatable=True, inflect=False)) for d in rules.disclosures]
        allow = _alternation([w for b in rules.banned for w in b.allow], inflect=False)
        self.allow = re.compile(allow) if allow else None
        self.disparaging = re.compile(_alternation(rules.disparaging)) if rules.disparaging else None
        markers = _alternation(rules.refusal_markers, inflect=False)
        self.refusal = re.compile(rf"(?:{markers}){_STOP}{{0,80}}") if markers else None
        nots = _alternation(rules.not_refusals, inflect=False)
        self.not_refusal = re.compile(nots) if nots else None

    def _check(self, phrases, negatable: bool, inflect: bool = True) -> Check:
        body = _alternation(phrases, inflect)
        sound, sound_firsts = self._sound(phrases)
        return Check(re.compile(body), self._negated(body) if negatable else None, sound, _firsts(phrases), sound_firsts)

    def _claim(self, c: ClaimRule) -> Check:
        parts = []
        if c.patterns:
            parts.append(_alternation(c.patterns))
        if c.verbs and c.objects:
            verbs, objects = _alternation(c.verbs), _alternation(c.objects)
            gap = f"{_GAP}{{0,{c.within}}}?"
            parts.append(f"(?:{verbs}){gap}(?:{objects})|(?:{objects}){gap}(?:{verbs})")
        elif c.verbs:
            parts.append(_alternation(c.verbs))
        body = "|".join(f"(?:{p})" for p in parts)
        words = (*c.patterns, *c.verbs, *c.objects)
        sound, sound_firsts = self._sound(c.patterns)
        return Check(re.compile(body), self._negated(body), sound, _firsts(words), sound_firsts)

    def _negated(self, body: str) -> re.Pattern | None:
        if not self.negation:
            return None
        return re.compile(rf"(?:{self.negation}){_GAP}{{0,12}}?(?:{body})")

    def _sound(self, phrases) -> tuple[re.Pattern | None, str]:
        """The sound pattern of the multi-character Chinese phrases, and its first characters."""
        if self.sounds is None:
            return None, frozenset()
        cjk = [rule_text(p) for p in phrases if re.fullmatch(rf"[{CJK}]{{2,}}", rule_text(p))]
        if not cjk:
            return None, frozenset()
        heard = sorted({self.sounds.pattern(p) for p in cjk}, key=len, reverse=True)
        return re.compile("|".join(heard)), frozenset(ch for p in cjk for ch in self.sounds.first(p))

    def refusals(self, folded: str) -> list[tuple[int, int]]:
        """Spans of the folded text that refuse something: a marker ("I can't say") and
        what it refuses, up to the next comma, sentence end or "but"."""
        if self.refusal is None:
            return []
        spans = []
        for m in self.refusal.finditer(folded):
            if self.not_refusal is not None and self.not_refusal.match(folded, m.start()):
                continue
            spans.append(m.span())
        return spans

    def unallowed(self, text: str) -> str:
        """``text`` with the rules' innocent words blanked (最近 is not 最)."""
        return self.allow.sub(" ", text) if self.allow is not None and self.allow.search(text) else text


def says(check: Check, text: str, heard: str | None = None, chars=None, heard_chars=None) -> str | None:
    """What of ``check`` the text says outside a negation, or ``None``.

    Occurrences are counted with and without a negation before them, so a reply that
    says it once plainly and once negated still says it. ``chars`` / ``heard_chars``: the
    sets of characters of the texts, when the caller has them.
    """
    m = check.said.search(text) if _may_hold(text, check.firsts, chars) else None
    if m is None:
        if check.sound is not None and heard is not None and _may_hold(heard, check.sound_firsts, heard_chars):
            s = check.sound.search(heard)
            return text[s.start():s.end()] if s else None
        return None
    if check.negated is not None and check.negated.search(text):
        if len(check.said.findall(text)) <= len(check.negated.findall(text)):
            return None
    return m.group(0)


def _may_hold(text: str, firsts: frozenset, chars=None) -> bool:
    if not firsts:
        return True
    return not firsts.isdisjoint(chars if chars is not None else set(text))


def denied(check: Check, text: str) -> str | None:
    """A negated occurrence of ``check`` in ``text`` ("it's not an #ad"), or ``None``."""
    if check.negated is None or not _may_hold(text, check.firsts):
        return None
    m = check.negated.search(text)
    return m.group(0) if m else None


def rulebook(rules: RuleSet) -> Rulebook:
    """The (cached) rulebook of ``rules``."""
    book = _BOOKS.get(id(rules))
    if book is None or book.rules is not rules:
        if len(_BOOKS) > 256:
            _BOOKS.clear()
        book = _BOOKS[id(rules)] = Rulebook(rules)
    return book
