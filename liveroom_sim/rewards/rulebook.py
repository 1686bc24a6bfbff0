"""The rules in force, compiled once into patterns over the folded text of a reply.

A :class:`~liveroom_sim.world.rules.RuleSet` is frozen; its rulebook is built the first
time a reply is checked against it and kept as long as the rule set lives. Every rule
phrase is normalised and folded like replies are (:mod:`liveroom_sim.rewards.lexicon`),
English words match in any inflection, and multi-character Chinese phrases also match by
sound. Each rule is keyed by a literal every match of it holds (:func:`_key`); one pass
over a reply (:meth:`Rulebook.candidates`) tells which rules it may break, and only those
are searched, each once: checking is linear in the reply and cheap for a clean one.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from typing import NamedTuple

from liveroom_sim.rewards.compliance.concepts import concept_reader
from liveroom_sim.rewards.derived import PerObject
from liveroom_sim.rewards.leading import LONG, first_match, lead
from liveroom_sim.rewards.lexicon import CJK, Sounds, fold, inflections, trie_pattern, word_forms
from liveroom_sim.rewards.scanner import JointScan, Literals
from liveroom_sim.world.phrasebook import reading_words
from liveroom_sim.world.rules import ClaimRule, RuleSet
from liveroom_sim.world.text import normalize

_GAP = r"[^,.!?;\n。！？；【】()（）]"  # a 【label】 or (label) stands apart: "不错【广告】", "咱不说（广告）" deny nothing
_OR = r"(?:\bor\b|\bnor\b|或者|或|、)"


def _stop() -> str:
    """What a refusal's reach goes on over: any character but a comma or a sentence's end,
    up to a turn of the phrasebooks' ``reading.turns`` ("but", 不过; English ones as whole words).
    A comma written right before a Chinese character is the list comma 、 (normalised to ","):
    the list stays refused (不能说祛痘、消炎)."""
    turns = "|".join(rf"\b{re.escape(t)}\b" if t.isascii() else re.escape(t) for t in reading_words().turns)
    return (rf"(?!{turns})" if turns else "") + r"(?:[^,.!?;:\n。！？；]|,(?=[\u4e00-\u9fff]))"


_WORD = re.compile(r"[a-z0-9\u4e00-\u9fff]")
_CLAUSE_END = re.compile(r"[,.!?;:\n。！？；，：]")
#: Sentence-final particles: after a refusal marker they say nothing more ("这个我不能说哈").
_PARTICLES = frozenset("哈啊呀哦呢啦嘛吧喔噢哟呐嘞咯")


#: Words a refusal ends on that point back at what was said before it ("best vest ever?
#: can't say that lol"), not at what follows, and what may follow them in its clause.
_BACK = frozenset({"that", "this", "it", "so"})
_AFTER_BACK = frozenset({"lol", "haha", "lmao", "tho", "though", "sorry", "honestly", "chat", "folks", "guys", "friends",
                         "babe", "either", "one", "really"})


#: Words a Chinese clause that ends on a refusal starts with, pointing back at the clause
#: before it ("叫它‘全网第一’，这话广告法不让说").
_POINTING_BACK = ("这话", "这句话", "这种话", "这个话", "这说法", "这个说法", "这种说法", "这个词", "这词", "这几个字", "这俩字")


def _points_back(reach: str) -> bool:
    """Whether a refusal's reach is only a word pointing back ("that", "that lol", not "that
    enough" nor "that it cures")."""
    words = reach.split()
    return 0 < len(words) <= 2 and words[0] in _BACK and (len(words) == 1 or words[1] in _AFTER_BACK)


def _clause_before(folded: str, at: int, ends: list[int]) -> int:
    """Where the clause a refusal marker ends begins: a marker with nothing after it in its
    clause refuses what came before it ("治湿疹这种话我不能说", "warmest? that I can't say");
    a clause of two words or fewer before it ("that I"), or one that starts with a word of
    :data:`_POINTING_BACK` ("这话广告法"), points back at the clause before.
    ``ends``: where each clause of ``folded`` ends, in order (found once per text: a list of
    them per marker made a 64 KB reply of "不能说，" take 17 s)."""
    i = bisect_right(ends, at)
    start = ends[i - 1] if i else 0
    before = folded[start:at]
    if i >= 1 and (len(before.split()) <= 2 and before.isascii() or before.lstrip().startswith(_POINTING_BACK)):
        start = ends[i - 2] if i >= 2 else 0
    return start


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


def _words_or_runs(phrases) -> str:
    """One trie pattern (compile with ``re.ASCII``) for literal phrases: English ones from
    a word's start, Chinese ones anywhere."""
    folded = {rule_text(p) for p in phrases if rule_text(p)}
    latin = [f for f in folded if f[:1].isascii() and f[:1].isalnum()]
    other = [f for f in folded if f not in latin]
    # (whole words: "can't say no" is not the start of "can't say nothing compares")
    parts = ([r"\b(?:" + trie_pattern(latin) + r")(?![a-z0-9])"] if latin else []) + ([trie_pattern(other)] if other else [])
    return "|".join(parts)


class Check(NamedTuple):
    """One compiled rule: ``said`` finds it; ``negated`` finds it under a negation.
    ``firsts``: the characters any match of ``said`` starts with (a text holding none of
    them is not searched: most rules are ruled out by a few ``in`` tests).
    ``said_lead`` / ``sound_lead``: the patterns' leads, for long texts
    (:mod:`liveroom_sim.rewards.leading`). ``sound_needs``: per phrase heard, the
    characters each of its positions may be (a long text holding none of one position's
    characters for every phrase cannot match ``sound``). ``objects``: a claim rule's
    objects; ``plain`` (and its lead): ``said`` without the verb-object part, which is
    all ``said`` can match in a text where ``objects`` finds nothing."""

    said: re.Pattern
    negated: re.Pattern | None
    sound: re.Pattern | None = None
    firsts: frozenset = frozenset()
    sound_firsts: frozenset = frozenset()
    keys: tuple[str, ...] = ()
    said_lead: re.Pattern | None = None
    sound_lead: re.Pattern | None = None
    sound_needs: tuple[tuple[frozenset, ...], ...] = ()
    objects: re.Pattern | None = None
    plain: re.Pattern | None = None
    plain_lead: re.Pattern | None = None


def _firsts(phrases) -> frozenset:
    return frozenset(rule_text(p)[:1] for p in phrases if rule_text(p))


_FIRST_TOKEN = re.compile(rf"[a-z]+|[0-9]+|[{CJK}]+|\S")


def _key(phrase: str, inflect: bool) -> tuple[str, tuple[str, ...]]:
    """A literal every match of ``phrase`` contains, as selective as can be, and for an
    English key the whole words a match may spell it as.

    The key is the longest of the phrase's English words (the stem common to its
    inflections: "best" for "the best", "cur" for cure and curing) or Chinese runs.
    An English key must be a whole word in every match (a word glued to its neighbour,
    as "free" in "free100", is not one). ``("", ())`` when there is none: the rule is
    then always searched."""
    text = rule_text(phrase)
    tokens = [(m.group(0), m.start(), m.end()) for m in _FIRST_TOKEN.finditer(text)]
    best, forms = "", ()
    for i, (token, start, end) in enumerate(tokens):
        alnum = token.isascii() and token.isalnum()
        glued = alnum and any(0 <= j < len(tokens) and tokens[j][0].isascii() and tokens[j][0].isalnum()
                              and (tokens[j][2] == start or tokens[j][1] == end) for j in (i - 1, i + 1))
        if alnum and not glued:
            words = inflections(token) if inflect and token.isalpha() else (token,)
            key = os.path.commonprefix(list(words))
        elif not token.isascii():
            key, words = token, ()
        else:
            continue
        if len(key) > len(best):
            best, forms = key, words
    return best, forms


def _rare_key(phrase: str, inflect: bool) -> str:
    """For a substring test: :func:`_key`, or a symbol of the phrase when the key is a
    short word ("#" of "#ad" is rarer in speech than "ad")."""
    key = _key(phrase, inflect)[0] or rule_text(phrase)[:1]
    symbols = [ch for ch in rule_text(phrase) if ch in "#%$@&"]
    return symbols[0] if symbols and len(key) < 4 else key


#: Flags :meth:`Rulebook.candidates` returns beside rule indexes (HELD: a set phrase that
#: holds a negation word, see :meth:`Rulebook.unnegating`).
REFUSAL, ALLOWED, NEGATION, HELD = -1, -2, -3, -4


def _key_index(rules: RuleSet, held: tuple[str, ...] = (), after: tuple[str, ...] = ()) -> tuple[frozenset[int], Literals]:
    """Which banned and claim rules a text may break, from one scan for the literals
    every match contains (a typical reply holds none of them): the rules (and flags)
    with no key literal, and the key literals. Rules are numbered banned first, then
    claims. ``held``: the set phrases that hold a negation word; ``after``: the words that
    take back what comes before them (either flags a negation the text may hold)."""
    keys: dict[str, set[int]] = {}
    words: dict[str, set[int]] = {}

    def add(phrase, inflect, rule):
        key, forms = _key(phrase, inflect)
        if forms:
            for w in forms:
                words.setdefault(w, set()).add(rule)
        else:
            keys.setdefault(key, set()).add(rule)

    for i, b in enumerate(rules.banned):
        for p in (b.phrase, *b.forms):
            add(p, True, i)
    for j, c in enumerate(rules.claims):
        for p in (*c.patterns, *c.verbs):
            add(p, True, len(rules.banned) + j)
    # The same scan tells whether a refusal, an allowed word or a negation may be in
    # the text (flags below zero), so their own patterns run only when one may be.
    for flag, phrases in ((REFUSAL, (*rules.refusal_markers, *rules.not_refusals)),
                          (ALLOWED, [w for b in rules.banned for w in b.allow]), (NEGATION, (*rules.negations, *after)),
                          (HELD, held)):
        for p in phrases:
            add(p, False, flag)
    always = frozenset(keys.pop("", ()))
    # English keys are whole words (the words the rules may be spelt with); Chinese
    # keys count wherever they occur. Both kinds in one automaton: a reply is read
    # once for every rule.
    by_first: dict[str, list[tuple[str, frozenset]]] = {}
    for k, ids in keys.items():
        if not k.isascii():
            by_first.setdefault(k[0], []).append((k, frozenset(ids)))
    return always, Literals([*((w, frozenset(ids)) for w, ids in words.items()),
                             *((k, ids) for entries in by_first.values() for k, ids in entries)])


class Rulebook:
    """Compiled matching for one rule set (see the module docstring)."""

    def __init__(self, rules: RuleSet):
        self.rules = rules
        #: The concept reading of the rules' concept file (``None``: the rules name none).
        self.concepts = concept_reader(rules.concepts, rules.disparaging) if rules.concepts else None
        neg = _alternation(rules.negations, inflect=False)
        self.negation = neg
        self.negates = re.compile(neg) if neg else None
        # The concept file's words that take back what comes before them in a clause
        # ("私下转账没有保障"): a bait's phrase said before one is not said (see reading._plainly).
        after = self.concepts.set.concepts.get("negation_after") if self.concepts is not None else None
        after = (*after.words, *after.exact) if after is not None else ()
        self.negation_after = _alternation(after, inflect=False) if after else ""
        # The concept file's set phrases that hold a negation word but negate nothing (非常,
        # 特别, 不错, 别人: "这款面霜非常能治痘" claims a cure): masked before a negation is looked for.
        held = self.concepts.set.concepts.get("set_phrase") if self.concepts is not None and neg else None
        held = [w for w in (*held.words, *held.exact) if self.negates.search(rule_text(w))] if held is not None else []
        # (with the negation words in one pattern, longest first: a negation that starts
        # before a set phrase keeps it, 并不少 is 并不 + 少, and only the set phrases are masked)
        self._held = frozenset(rule_text(w) for w in held)
        self.set_phrases = re.compile(_alternation([*held, *rules.negations], inflect=False)) if held else None
        cjk_phrases = [rule_text(p) for p in (*(f for b in rules.banned for f in (b.phrase, *b.forms)),
                                               *(p for c in rules.claims for p in c.patterns))
                       if re.fullmatch(rf"[{CJK}]{{2,}}", rule_text(p))]
        self.sounds = Sounds(cjk_phrases) if cjk_phrases else None
        self.banned = [(b, self._check([b.phrase, *b.forms], negatable=False)) for b in rules.banned]
        self.claims = [(c, self._claim(c)) for c in rules.claims]
        #: Rules (and flags) with no key literal, searched in every text; and each key
        #: literal, standing for the rules (and flags) whose every match holds it.
        self.always, self.keys = _key_index(rules, tuple(held), after)
        self.rules_in_order = (*self.banned, *self.claims)
        self.sounded = frozenset(i for i, (_, c) in enumerate(self.rules_in_order) if c.sound is not None)
        firsts = frozenset().union(*(c.sound_firsts for _, c in self.rules_in_order))
        self.sound_first_rules = {ch: frozenset(i for i in self.sounded if ch in self.rules_in_order[i][1].sound_firsts)
                                  for ch in firsts}
        self.sound_sources = self.sounds.sources(firsts) if self.sounds is not None else frozenset()
        self.disclosures = [(d, self._check(d.forms, negatable=True, inflect=False)) for d in rules.disclosures]
        # Which disclosures a text may make, from one scan for their key literals (a
        # disclosure none of whose keys the text holds is neither made nor denied).
        by_key: dict[str, set[int]] = {}
        for i, (_, check) in enumerate(self.disclosures):
            for k in check.keys:
                by_key.setdefault(k, set()).add(i)
        self._disclosure_keys = Literals((k, frozenset(ids)) for k, ids in by_key.items())
        # Both in one automaton (see keys_in): a reply's folded text is scanned once for
        # the rules' keys and the disclosures'.
        self._keys_and_disclosures = JointScan(self.keys, self._disclosure_keys)
        allow = _alternation([w for b in rules.banned for w in b.allow], inflect=False)
        self.allow = re.compile(allow) if allow else None
        self.disparaging = re.compile(_alternation(rules.disparaging)) if rules.disparaging else None
        markers = _words_or_runs(rules.refusal_markers)
        self.refusal = re.compile(rf"(?:{markers})({_stop()}{{0,80}})", re.ASCII) if markers else None
        nots = _words_or_runs(rules.not_refusals)
        self.not_refusal = re.compile(nots, re.ASCII) if nots else None

    def _check(self, phrases, negatable: bool, inflect: bool = True) -> Check:
        body = _alternation(phrases, inflect)
        sound, sound_firsts, needs = self._sound(phrases)
        keys = tuple({_rare_key(p, inflect) for p in phrases})
        said = re.compile(body)
        return Check(said, self._negated(body) if negatable else None, sound, _firsts(phrases), sound_firsts,
                     keys, lead(said), sound and lead(sound), needs)

    def _claim(self, c: ClaimRule) -> Check:
        parts = []
        if c.patterns:
            parts.append(_alternation(c.patterns))
        objects_only = plain = None
        if c.verbs and c.objects:
            verbs, objects = _alternation(c.verbs), _alternation(c.objects)
            objects_only = re.compile(objects)
            plain = re.compile(f"(?:{parts[0]})") if parts else None
            gap = f"{_GAP}{{0,{c.within}}}?"
            parts.append(f"(?:{verbs}){gap}(?:{objects})|(?:{objects}){gap}(?:{verbs})")
        elif c.verbs:
            parts.append(_alternation(c.verbs))
        body = "|".join(f"(?:{p})" for p in parts)
        words = (*c.patterns, *c.verbs, *c.objects)
        sound, sound_firsts, needs = self._sound(c.patterns)
        said = re.compile(body)
        return Check(said, self._negated(body, after=True), sound, _firsts(words), sound_firsts, (), lead(said), sound and lead(sound),
                     needs, objects_only, plain, plain and lead(plain))

    def _negated(self, body: str, after: bool = False) -> re.Pattern | None:
        """The pattern of ``body`` said under a negation in its clause; ``after``: or shortly
        before a word that takes it back (a claim rule's 减肥这事儿别指望它)."""
        if not self.negation:
            return None
        # (and the phrases it joins with "or": "won't melt fat or make you lose weight" takes
        # both back, 不能美白或祛斑 too; "and" may start a claim of its own, so it does not)
        # (a phrase right after it is joined too: 不能减肥刮油 takes back both)
        also = rf"(?:(?:{_GAP}{{0,24}}?{_OR}{_GAP}{{0,24}}?)?(?:{body}))*"
        back = rf"|(?:{body}){_GAP}{{0,12}}?(?:{self.negation_after})" if after and self.negation_after else ""
        return re.compile(rf"(?:{self.negation}){_GAP}{{0,48}}?(?:{body}){also}{back}")

    def _sound(self, phrases) -> tuple[re.Pattern | None, frozenset, tuple]:
        """The sound pattern of the multi-character Chinese phrases, its first characters,
        and what each phrase's positions may be (``Check.sound_needs``)."""
        if self.sounds is None:
            return None, frozenset(), ()
        cjk = [rule_text(p) for p in phrases if re.fullmatch(rf"[{CJK}]{{2,}}", rule_text(p))]
        if not cjk:
            return None, frozenset(), ()
        heard = sorted({self.sounds.pattern(p) for p in cjk}, key=len, reverse=True)
        return (re.compile("|".join(heard)), frozenset(ch for p in cjk for ch in self.sounds.first(p)),
                tuple(dict.fromkeys(self.sounds.elements(p) for p in cjk)))

    def candidates(self, text: str) -> set[int]:
        """Indexes (banned rules first, then claim rules) of the rules ``text`` may break:
        those whose key literal it holds (see the comment in ``__init__``); and the flags
        :data:`REFUSAL`, :data:`ALLOWED`, :data:`NEGATION` for what it may hold."""
        out: set[int] = set(self.always)
        for ids in self.keys.whole_words(text):
            out |= ids
        return out

    def keys_in(self, folded: str) -> tuple[set[int], list[int]]:
        """:meth:`candidates` and :meth:`disclosures_in` of ``folded``, from one scan."""
        keys, disclosed = self._keys_and_disclosures.whole_words_and_present(folded)
        return set(self.always).union(*keys), sorted(set().union(*disclosed)) if disclosed else []

    def disclosures_in(self, folded: str) -> list[int]:
        """Indexes, in order, of the disclosures one of whose keys ``folded`` holds (the
        reading takes them from :meth:`keys_in`; this is the two-scan reference it is tested against)."""
        if not self.disclosures:
            return []
        return sorted(set().union(*self._disclosure_keys.present(folded)))

    def refusals(self, folded: str) -> list[tuple[int, int]]:
        """Spans of the folded text that refuse something: a marker ("I can't say") and
        what it refuses, up to the next comma, sentence end or "but"."""
        if self.refusal is None:
            return []
        spans, ends = [], None
        for m in self.refusal.finditer(folded):
            if self.not_refusal is not None and self.not_refusal.match(folded, m.start()):
                continue
            start = m.start()
            reach = m.group(1)
            if not _WORD.search(folded, m.end() - len(reach), m.end()) or set(reach.replace(" ", "")) <= _PARTICLES \
                    or _points_back(reach):
                if ends is None:
                    ends = [c.end() for c in _CLAUSE_END.finditer(folded)]
                start = _clause_before(folded, start, ends)
            spans.append((start, m.end()))
        return spans

    def unnegating(self, text: str) -> str:
        """``text`` with its set phrases that hold a negation word masked, character for
        character (the same length): what a negation is looked for in."""
        if self.set_phrases is None:
            return text
        held = self._held
        return self.set_phrases.sub(lambda m: "·" * (m.end() - m.start()) if m.group() in held else m.group(), text)

    def unallowed(self, text: str) -> str:
        """``text`` with the rules' innocent words blanked (最近 is not 最)."""
        return self.allow.sub(" ", text) if self.allow is not None and self.allow.search(text) else text


def says(check: Check, text: str, heard: str | None = None, known: bool = False,
         negations: bool = True, chars: set[str] | None = None, written: bool = True,
         heard_chars: set[str] | None = None, unnegating: str | None = None) -> str | None:
    """What of ``check`` the text says outside a negation, or ``None``.

    Occurrences are counted with and without a negation before them, so a reply that
    says it once plainly and once negated still says it. ``known``: the caller found the
    rule's key literal in the text (:meth:`Rulebook.candidates`), so the text is searched.
    ``negations``: ``False`` when the caller knows the text holds no negation word.
    ``chars``: ``set(text)``, when the caller checks many rules against one text.
    ``written``: ``False`` when the caller knows the written pattern cannot match (only
    the sound is searched). ``heard_chars``: ``set(heard)`` of a long text, to skip a
    sound search that cannot match (see ``Check.sound_needs``). ``unnegating``: the text
    with the set phrases that negate nothing masked (:meth:`Rulebook.unnegating`), where
    negations are looked for.
    """
    m = None
    if written and (known or _may_hold(text, check.firsts, chars)):
        if len(text) < LONG:
            m = check.said.search(text)
        elif check.objects is not None and check.objects.search(text) is None:
            # no object named: only the phrases can match (a verb and a gap tried at
            # every position of a long text cost up to 25 ms)
            m = first_match(check.plain, check.plain_lead, text) if check.plain is not None else None
        else:  # (through the pattern's lead: the same match, found faster)
            m = first_match(check.said, check.said_lead, text)
    if m is None:
        if check.sound is not None and heard is not None:
            if heard_chars is not None and not _may_sound(check.sound_needs, heard_chars):
                return None
            s = check.sound.search(heard) if len(heard) < LONG else first_match(check.sound, check.sound_lead, heard)
            return text[s.start():s.end()] if s else None
        return None
    where = text if unnegating is None else unnegating
    if negations and check.negated is not None and check.negated.search(where):
        # (each negation takes back the phrase after it and those joined to it by "or")
        if len(check.said.findall(text)) <= sum(len(check.said.findall(n.group())) for n in check.negated.finditer(where)):
            return None
    return m.group(0)


def _may_sound(needs, chars: set[str]) -> bool:
    """Whether some phrase has, for each of its positions, a character the text holds."""
    for elements in needs:
        for allowed in elements:
            if allowed.isdisjoint(chars):
                break
        else:
            return True
    return False


def _may_hold(text: str, firsts: frozenset, chars=None) -> bool:
    if not firsts:
        return True
    return not firsts.isdisjoint(chars if chars is not None else set(text))


def denied(check: Check, text: str, known: bool = False) -> str | None:
    """A negated occurrence of ``check`` in ``text`` ("it's not an #ad"), or ``None``."""
    if check.negated is None or not (known or _may_hold(text, check.firsts)):
        return None
    m = check.negated.search(text)
    return m.group(0) if m else None


_BOOKS: PerObject[RuleSet, Rulebook] = PerObject(Rulebook, size=256)


def rulebook(rules: RuleSet) -> Rulebook:
    """The rulebook of ``rules``, compiled once per rule set (the same updates give every
    episode of a spec the same rule set objects: see ``RuleSet.plus``)."""
    return _BOOKS(rules)
