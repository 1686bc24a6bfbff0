"""Reading a reply by concept: which rule families it says, sentence by sentence.

A :class:`ConceptReader` is compiled once per concept file (and the rule file's extra
put-down words). Every concept word, each English word in all its inflections, goes into
one Aho-Corasick automaton (:mod:`liveroom_sim.rewards.scanner`'s library), so a reply is
scanned once for every concept, in time linear in its length. Then, per sentence:

* scoped exceptions are read, not listed: reported speech ("someone asked if it's number
  one") and what a refusal placed after it refuses ("治病的话我可不敢讲") are blanked; a
  quote in a sentence about what may be said ("our rules say I can't call it 'the best'")
  is quoted, not claimed; a run of concepts that makes a term (a rank and a date word:
  "best-before", 最佳赏味期) is a term;
* a concept said just after a negation in its clause ("it doesn't cure eczema", 不能治疗),
  or before a ``negation_after`` word of its clause (私下加微信是不可以的), is taken back,
  for the families whose negation cancels; a word inside a refusal's own word (保证 of
  不敢保证) is the refusal's, not said;
* a family is said when each concept of one of its combinations is said in its own word.

The reader returns the text with the exceptions blanked (which the rule file's banned
phrases and claim rules then read) and each family said, with the sentence it is in.
"""

from __future__ import annotations

import itertools
import re
from array import array
from bisect import bisect_left, bisect_right
from functools import lru_cache
from typing import NamedTuple

from ahocorasick_rs import AhoCorasick, BytesAhoCorasick

from liveroom_sim.rewards.compliance.spans import Cover, Spans, by_concept, first_from, spans_between
from liveroom_sim.rewards.lexicon import fold, inflections
from liveroom_sim.world.concepts import READER_CONCEPTS, ConceptSet, Family, load_concepts
from liveroom_sim.world.text import normalize

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
# (dots in a row, "they're just... gone", are a pause, as the ellipsis "…" is: no end)
# (each branch starts with its mark, the dot's neighbours checked after it: a pattern that
# starts with a set of characters is searched for them, one that starts with a lookbehind
# is tried at every position, at twice the time)
_SENTENCE = re.compile(r"\.(?<!\.\.)(?![0-9.])|[!?;\n。！？；]+")
#: Where a sentence ends (shared with the reading of which products a reply presents).
SENTENCE_END = _SENTENCE
# Punctuation that ends a clause; the words that turn one ("but", 但是) are the concept
# file's ``turn`` concept.
# A comma written directly before a Chinese character is the list comma 、 (normalised to
# ","; the clause comma ， is normalised to ", "): a list ("银行卡号、密码、验证码") stays in
# the clause, and in the scope of a negation before it. A dash set off by spaces ends a clause.
_CLAUSE_MARKS = r"(?<![0-9])\.(?![0-9])|(?<![0-9]),(?![0-9\u4e00-\u9fff])|[!?;:\n。！？；，：]|\s-\s"
_QUOTE = re.compile(r'"[^"\n]{1,80}"|(?<![a-z])\'[^\'\n]{1,60}\'(?![a-z])|「[^」]{1,60}」|『[^』]{1,60}』')
#: A negation said after what it takes back, at its clause's end ("私下加微信是不可以的"):
#: read by the reader by name, like those of ``READER_CONCEPTS``.
NEGATION_AFTER = "negation_after"
_READ_BY_NAME = frozenset((*READER_CONCEPTS[:-1], NEGATION_AFTER))
_REFUSALS = ("refused_before", "refused_after")
#: The concepts whose words start a scoped exception by themselves (reported speech, a
#: refusal, a word about the rules beside a quote).
_SCOPING = frozenset({"reported", *_REFUSALS, "rule_talk"})
_NEGATIONS = ("negation", NEGATION_AFTER)
#: What may stand between two words of a scoped exception's run besides two characters:
#: a number ("最高升到160厘米": a superlative, a number and its unit are a measure).
_NUMBER = frozenset("0123456789")
#: How far after a run's word the next is looked for (two characters and a number).
_RUN_REACH = 24
#: What ends a run's clause (a full stop or comma inside a number, 1.5 or 1,000, does not).
_RUN_BREAK = re.compile(r"[,.!?;:\n。！？；，：]")
_NUMBERS = re.compile(r"[0-9]+(?:[.,][0-9]+)*")
_NONE: frozenset[int] = frozenset()
_NOT_ASCII = re.compile(r"[^\x00-\x7f]")
_UNSET = object()
_COMPETITOR = frozenset({"competitor"})
#: A pitch word said with a negation (see ConceptReader._pitch_first).
_FIRST = object()
#: The most pairs of concept sets a reader keeps the families of (then it starts again).
_MEMO_SIZE = 4096
#: Short English words never inflected when a phrase is expanded ("get rid of").
_KEEP = frozenset({"of", "me", "my", "you", "your", "the", "a", "an", "it", "to", "in", "on", "for", "up", "out", "off"})


class Said(NamedTuple):
    """A family said in a reply: the family, the sentence (as read), where each concept
    of the combination was said (``(start, end, concept)``), and the sentence's span."""

    family: Family
    sentence: str
    hits: tuple[tuple[int, int, str], ...]
    span: tuple[int, int]


class ConceptReading(NamedTuple):
    """A reply read by concept: ``text`` with the scoped exceptions blanked, the families
    said, per sentence the concepts said outside a negation (for a bait's echo; read when
    asked for, or when the text may say a family), the refused clauses the reader found
    (a refusal placed after what it refuses), and whether a clause declines what was
    asked (the concept file's ``declines``)."""

    text: str
    said: tuple[Said, ...]
    concepts: tuple[frozenset[str], ...]
    refused: tuple[str, ...]
    declined: bool = False
    #: Whether a sentence presents a product: a pitch word said outside a negation, or a
    #: family said.
    pitched: bool = False


def _forms(phrase: str, inflect: bool) -> set[str]:
    """A phrase as the reader writes it, each English word in every inflection."""
    text = fold(normalize(phrase))
    if not text:
        return set()
    tokens = text.split(" ")
    if not inflect or not text.isascii():
        return {text}
    # (the first and last words inflect: "gets rid of", "wipes out", "fine lines"; the word as
    # written comes first, so the combinations kept always hold it)
    options = [(t, *(f for f in inflections(t) if f != t)) if i in (0, len(tokens) - 1) and t.isalpha()
               and t not in _KEEP and len(t) >= 3 else (t,) for i, t in enumerate(tokens)]
    out = set()
    for combo in itertools.islice(itertools.product(*options), 256):
        out.add(" ".join(combo))
    return out


class ConceptReader:
    """The compiled concepts of one concept file (see the module docstring).

    Args:
        concepts: The concept file.
        put_downs: The rule file's disparaging words, added to the ``put_down`` concept.
    """

    def __init__(self, concepts: ConceptSet, put_downs: tuple[str, ...] = ()):
        self.set = concepts
        by_literal: dict[str, set[str]] = {}
        for name, c in concepts.concepts.items():
            words = [(w, True) for w in c.words] + [(w, False) for w in c.exact]
            words += [(v, False) for vs in c.respellings.values() for v in vs]
            words += [(k, True) for k in c.respellings]
            if name == "put_down":
                words += [(w, True) for w in put_downs]
            for w, inflect in words:
                for form in _forms(w, inflect):
                    by_literal.setdefault(form, set()).add(name)
        self.literals = tuple(by_literal)
        # One set per distinct set of concepts, shared by its literals: the English file's
        # ~87,000 inflected literals say ~220 sets, and 87,000 frozensets were traversed by
        # every full garbage collection (about a tenth of a reward's instructions).
        shared: dict[frozenset[str], frozenset[str]] = {}
        self.names = tuple(shared.setdefault(s, s) for s in (frozenset(by_literal[w]) for w in self.literals))
        as_tuple = {s: tuple(s) for s in shared}
        # A file whose literals are all in Latin script (English) is scanned title-cased:
        # each literal and the text with a capital at every word's start, so that inside a
        # word the automaton stays at its root (without it, each letter of a word walked
        # states of the 60,000 literals' prefixes, and those lookups missed the CPU's
        # caches: about a quarter of the reader's time). A capital follows any character
        # that is not a letter; the whole-word check below still reads the text as written,
        # and characters outside ASCII (no literal holds one) are read as a NUL, so the text
        # is scanned as ASCII bytes (a byte's offset is its character's).
        self._titled = all(w.isascii() for w in self.literals)
        if not self.literals:
            self._ac = None
        elif self._titled:
            self._ac = BytesAhoCorasick([w.title().encode() for w in self.literals])
        else:
            self._ac = AhoCorasick(self.literals)
        self.families = tuple(f for f in concepts.families)
        self._combos = tuple((f, tuple(frozenset(c) for c in f.when)) for f in self.families)
        # Per literal, its kind: what a match needs to be a whole word (1, a letter or digit
        # must not come before it; 2, none after it) and the concepts it says (as a tuple
        # and a set). The ~250 kinds are shared, each literal holds two bytes of an array
        # that picks one: a tuple per literal, or three arrays of 60,000 entries, cost
        # cache misses per match. Per concept, the families (by index) one of whose
        # combinations holds it: a sentence tries only the families its concepts may make
        # (most make none).
        kinds: dict[tuple, int] = {}
        self._kind_of = array("H", (kinds.setdefault(k, len(kinds)) for k in (
            ((w[0] in _ALNUM) | (w[-1] in _ALNUM) << 1, as_tuple[n], n) for w, n in zip(self.literals, self.names))))
        self._kinds = tuple(kinds)
        by_concept: dict[str, set[int]] = {}
        for i, (_, combos) in enumerate(self._combos):
            for combo in combos:
                for c in combo:
                    by_concept.setdefault(c, set()).add(i)
        self._families_of = {c: frozenset(fs) for c, fs in by_concept.items()}
        self._always = frozenset(i for i, (_, combos) in enumerate(self._combos) if any(not c for c in combos))
        self._said_memo: dict[tuple[frozenset[str], frozenset[str]], tuple[Family, ...]] = {}
        self._may_memo: dict[frozenset[str], bool] = {}
        self._plain_memo: dict[frozenset[str], tuple[bool, bool] | None] = {}
        self._across = tuple(f for f in self.families if f.scope == "reply")
        self._named_rivals = frozenset(f.name for f in self._across if any("competitor" in c for c in f.when))
        self.exceptions = tuple((e.sequence, e.refuses, frozenset(e.sequence), e.unless) for e in concepts.exceptions)
        exceptions_from: dict[str, list[int]] = {}  # (by first concept: a text tries those it starts)
        for i, e in enumerate(concepts.exceptions):
            exceptions_from.setdefault(e.sequence[0], []).append(i)
        self._exceptions_from = {c: tuple(i) for c, i in exceptions_from.items()}
        # A run's later words in Latin letters, by word: a unit written onto a number
        # ("最大65w") is no whole word to the scanner, so a run reads it there itself.
        later = {c for e in concepts.exceptions for c in e.sequence[1:]}
        self._glued = {w: n & later for w, n in zip(self.literals, self.names)
                       if w.isascii() and w.isalpha() and not n.isdisjoint(later)}
        # Whether a pitch word may hold a sentence's end (then only the sentences tell
        # whether one is said in a sentence).
        self._pitch_spans = concepts.pitch is not None and any(
            concepts.pitch in n and _SENTENCE.search(w) for w, n in zip(self.literals, self.names))
        self._declines = tuple((run, frozenset(run)) for run in concepts.declines)
        self._declines_start = frozenset(run[0] for run in concepts.declines)
        # Concepts read for ``declines`` only: no other reading sees them (they take no
        # negation away, say no family and no bait's echo).
        used = {c for f in concepts.families for combo in f.when for c in combo}
        used |= {c for e in concepts.exceptions for c in e.sequence} | set(READER_CONCEPTS)
        used |= {"turn", "refusing", concepts.pitch}
        self._declines_only = frozenset(c for run in concepts.declines for c in run) - used
        self._exceptional = frozenset({*_SCOPING,
                                       *(e[0][0] for e in self.exceptions)})
        turns = [fold(normalize(w)) for name in ("turn",) if name in concepts.concepts
                 for w in (*concepts.concepts[name].words, *concepts.concepts[name].exact)]
        # (a turn word right after "not" starts no clause: "not until this song ends" is
        # one negated deadline)
        self._clause = re.compile("|".join([_CLAUSE_MARKS, *(rf"(?<!not )\b{re.escape(w)}\b" if w.isascii() else re.escape(w)
                                                             for w in turns if w)]))

    def hits(self, text: str, competitors=None, words=None) -> list[tuple[int, int, str]]:
        """Every concept word of ``text`` (whole words in Latin script), as ``(start, end,
        concept)``, ordered by start; ``competitors``: a catalog's brand names; ``words``:
        :meth:`_words` of the text, when they are known."""
        out = [(s, e, name) for s, e, names in (self._words(text)[0] if words is None else words) for name in names]
        if competitors is not None:
            found = competitors.finditer(text)
            if found:
                out.extend((m.start(), m.end(), "competitor") for m in found)
        out.sort()
        return out

    def _words(self, text: str) -> tuple[list[tuple[int, int, tuple[str, ...]]], set[str]]:
        """``(start, end, concepts)`` of each concept word of ``text``, and the concepts
        they say."""
        said: set[str] = set()
        if self._ac is None:
            return [], said
        kind_of, kinds, n = self._kind_of, self._kinds, len(text)
        scan = text
        if self._titled:  # (text is lower case, as folded: capitals mark where words start)
            scan = (text if text.isascii() else _NOT_ASCII.sub("\x00", text)).encode("ascii").title()
        out = []
        for i, s, e in self._ac.find_matches_as_indexes(scan, overlapping=True):
            edge, says, names = kinds[kind_of[i]]
            if (edge & 1 and s and text[s - 1] in _ALNUM) or (edge & 2 and e < n and text[e] in _ALNUM):
                continue
            out.append((s, e, says))
            said |= names
        return out, said

    def read(self, text: str, competitors=None, sentences: bool = True) -> ConceptReading:
        """Read folded, spoken text (see the module docstring). ``sentences``: whether the
        concepts of each sentence are wanted (a bait's echo is read from them); without
        them, a text that holds none of the families' combinations is read no further
        than its scoped exceptions (most replies: their sentences would say nothing)."""
        words, concepts = self._words(text)
        if not sentences:
            plain = self._plain(frozenset(concepts))
            # (nothing to read but whether a pitch word is said, unless a brand named would
            # make a family, an exception or a declining run)
            if plain is not None and not (plain[1] and competitors is not None and competitors.finditer(text)):
                pitched = plain[0] if plain[0] is not _FIRST else self._pitch_first(words)
                if pitched is not None:
                    return ConceptReading(text, (), (), (), False, pitched)
        hits = self.hits(text, competitors, words)
        if not hits:
            return ConceptReading(text, (), (), ())
        names = {h[2] for h in hits}
        declined = not names.isdisjoint(self._declines_start) and self._declined(text, hits, names)
        if not names.isdisjoint(self._declines_only):
            hits = [h for h in hits if h[2] not in self._declines_only]
            names -= self._declines_only
            if not hits:
                return ConceptReading(text, (), (), (), declined)
        blanks, refused = (self._exceptions(text, hits) if not names.isdisjoint(self._exceptional)
                           else ((), ()))
        if blanks:
            chars = list(text)
            for a, b in blanks:
                chars[a:b] = " " * (b - a)
            text = "".join(chars)
            cover = Cover(blanks)
            hits = [h for h in hits if cover.furthest(h[0]) <= h[0]]
        may_say = self.may_say(frozenset(names))  # (whether some family's concepts are all in the text)
        if not names.isdisjoint(_REFUSALS):
            hits = _refusal_words_kept_whole(hits)
        pitch = self.set.pitch
        if not (sentences or may_say):  # (then only whether a pitch word is said is read)
            if pitch not in names:
                pitched = False
            elif names.isdisjoint(_NEGATIONS) and not self._pitch_spans:
                pitched = any(h[2] == pitch for h in hits)  # (in the sentence it is in, and no negation)
            else:
                pitched = any(h[2] == pitch for *_, free in self._sentence_hits(text, hits, names) for h in free)
            return ConceptReading(text, (), (), tuple(refused), declined, pitched)
        said, per_sentence, whole = [], [], []
        for start, end, inside, free in self._sentence_hits(text, hits, names):
            whole.append((inside, free))
            said_free = frozenset([h[2] for h in free])
            per_sentence.append(said_free - _READ_BY_NAME)
            if not may_say:
                continue
            said_any = frozenset([h[2] for h in inside]) if len(free) < len(inside) else said_free
            for family in self._families_said(said_any, said_free):  # (most sentences say none)
                pool = inside if family.negation == "ignored" else free
                chosen = _combination(family, pool)
                if chosen is not None:
                    said.append(Said(family, text[start:end].strip(), chosen, (start, end)))
        if may_say and self._across and len(whole) > 1:
            said += self._across_sentences(text, whole, {s.family.name for s in said})
        pitched = bool(said) or any(pitch in c for c in per_sentence)
        return ConceptReading(text, tuple(said), tuple(per_sentence), tuple(refused), declined, pitched)

    def _sentence_hits(self, text: str, hits, names):
        """Per sentence that holds a concept word, ``(start, end, its hits, those said
        outside a negation)``: ``hits`` in order of start, ``names`` their concepts."""
        negations = "negation" in names
        if negations:
            hits = _inner_negations_dropped(hits)
        backward = NEGATION_AFTER in names
        at, n = 0, len(hits)
        for start, end in _sentences(text):
            while at < n and hits[at][0] < start:  # (hits are in order: one pass over them)
                at += 1
            inside = []
            while at < n and hits[at][0] < end:
                if hits[at][1] <= end:
                    inside.append(hits[at])
                at += 1
            if not inside:
                continue
            ends = sorted([h[1] for h in inside if h[2] == "negation"]) if negations else None
            afters = [h[0] for h in inside if h[2] == NEGATION_AFTER] if backward else None
            yield start, end, inside, [h for h in inside if not self._negated(text, ends, h, afters)] if ends or afters else inside

    def _families_said(self, said_any: frozenset[str], said_free: frozenset[str]) -> tuple[Family, ...]:
        """The families (in the file's order) one of whose combinations a sentence says:
        ``said_any``, its concepts; ``said_free``, those said outside a negation (what a
        family whose negation cancels reads). Kept per pair of sets: a room's sentences say
        few distinct sets of concepts, and the answer depends on nothing else."""
        key = (said_any, said_free)
        kept = self._said_memo.get(key)
        if kept is not None:
            return kept
        tried = set(self._always)
        for name in said_any:
            tried |= self._families_of.get(name, _NONE)
        kept = tuple(family for family, combos in (self._combos[i] for i in sorted(tried))
                     if any(combo <= (said_any if family.negation == "ignored" else said_free) for combo in combos))
        if len(self._said_memo) >= _MEMO_SIZE:
            self._said_memo.clear()
        self._said_memo[key] = kept
        return kept

    def may_say(self, names: frozenset[str]) -> bool:
        """Whether one of the families' combinations is in ``names``, a text's concepts
        (else no sentence of it says a family: most texts say none). Kept per set, as
        :meth:`_families_said` keeps its answers."""
        kept = self._may_memo.get(names)
        if kept is None:
            tried = set(self._always)
            for name in names:
                tried |= self._families_of.get(name, _NONE)
            kept = any(combo <= names for i in tried for combo in self._combos[i][1])
            if len(self._may_memo) >= _MEMO_SIZE:
                self._may_memo.clear()
            self._may_memo[names] = kept
        return kept

    def _plain(self, names: frozenset[str]) -> tuple[bool | object, bool] | None:
        """For a text whose concept words say ``names``, read without its sentences, when
        nothing else is to be read (no run declines, no scoped exception whose concepts
        are all said, no family's combination, no word that takes back what comes before
        it): whether a pitch word is said (:data:`_FIRST`: a negation is said too, see
        :meth:`_pitch_first`), and whether a brand named would change that (else ``None``).
        Kept per set, as :meth:`may_say` keeps its answers."""
        kept = self._plain_memo.get(names, _UNSET)
        if kept is _UNSET:
            pitched = self._pitched(names)
            kept = None if pitched is None else (pitched, self._pitched(names | _COMPETITOR) is None)
            if len(self._plain_memo) >= _MEMO_SIZE:
                self._plain_memo.clear()
            self._plain_memo[names] = kept
        return kept

    def _pitched(self, names: frozenset[str]) -> bool | None:
        """:meth:`_plain`'s first answer, worked out."""
        rest = names - self._declines_only
        if not names.isdisjoint(self._declines_start) or not rest.isdisjoint(_SCOPING) or self._pitch_spans \
                or any(needed <= rest for _, _, needed, _ in self.exceptions) or self.may_say(rest):
            return None
        pitch = self.set.pitch in rest
        if pitch and not rest.isdisjoint(_NEGATIONS):
            return None if NEGATION_AFTER in rest else _FIRST
        return pitch

    def _pitch_first(self, words) -> bool | None:
        """Whether a pitch word is said before any negation word (then outside one: a
        negation takes back what comes after it in its clause), else ``None`` (only the
        sentences tell). ``words``: :meth:`_words` of a text that says both."""
        pitch = self.set.pitch
        first = min(s for s, _, names in words if pitch in names)
        return True if all(s > first for s, _, names in words if "negation" in names) else None

    def _declined(self, text: str, hits, names) -> bool:
        """Whether one clause says the concepts of a ``declines`` run in order ("i can't
        ... compare", "stick to ... the facts"); ``hits`` in order of start, ``names``
        their concepts (a run some of whose concepts the text does not say is not tried)."""
        runs = [run for run, concepts in self._declines if concepts <= names]
        if not runs:
            return False
        clauses = Spans(spans_between(self._clause, text))
        where = by_concept(hits)
        for run in runs:
            for s, e in where.get(run[0], ()):
                end = clauses.at(s, (s, e))[1]
                at = e
                for nxt in run[1:]:
                    word = first_from(where, nxt, at)
                    at = word[1] if word is not None and word[0] < end else None
                    if at is None:
                        break
                else:
                    return True
        return False

    def _across_sentences(self, text: str, whole, said: set[str]) -> list[Said]:
        """The reply-scope families said across sentences (each concept in one of them). A
        negated word of a family that names a competitor counts only in a sentence naming
        one ("Brightpeak makes a nice one. Ours leaves no white cast" puts nobody down)."""
        out = []
        for family in self._across:
            if family.name in said:
                continue
            if family.negation != "ignored":
                pool = [h for _, free in whole for h in free]
            elif family.name in self._named_rivals:
                pool = [h for inside, free in whole
                        for h in (inside if any(x[2] == "competitor" for x in inside) else free)]
            else:
                pool = [h for inside, _ in whole for h in inside]
            chosen = _combination(family, pool)
            if chosen is not None:
                lo, hi = min(h[0] for h in chosen), max(h[1] for h in chosen)
                out.append(Said(family, text[lo:hi].strip(), chosen, (lo, hi)))
        return out

    def _negated(self, text: str, ends: list[int] | None, hit: tuple[int, int, str],
                 afters: list[int] | None = None) -> bool:
        """Whether a negation word is said before ``hit`` in its clause (a negation's scope is
        its clause, read up to the next clause mark or turn: "not the cheapest, but the best"),
        or a ``negation_after`` word after it ("走对公转账是不行的"). ``ends``: where the
        sentence's negation words end, in order; ``afters``: where its after-negations start,
        in order. The nearest one decides: a clause mark between a farther one and the hit lies
        between the nearest and the hit too (one look per hit, not one per negation: a long
        reply of "does not cure acne, " over and over took minutes)."""
        s = hit[0]
        if ends:
            i = bisect_right(ends, s) - 1
            if i >= 0 and self._open(text, ends[i], s):
                return True
        if afters and hit[2] != NEGATION_AFTER:
            j = bisect_left(afters, hit[1])
            return j < len(afters) and self._open(text, hit[1], afters[j])
        return False

    def _open(self, text: str, a: int, b: int) -> bool:
        """Whether no clause ends between ``a`` and ``b`` (a mark's lookahead sees ``text[b]``)."""
        m = self._clause.search(text, a, min(b + 1, len(text)))
        return m is None or m.start() >= b

    def _exceptions(self, text: str, hits) -> tuple[list[tuple[int, int]], list[str]]:
        """Spans to blank (reported speech, refused clauses, quotes about rules, terms),
        and the clauses refused."""
        blanks, refused = [], []
        names = {h[2] for h in hits}
        clauses = sentences = None
        if not names.isdisjoint(("reported", "refused_before", "refused_after")):
            clauses = Spans(spans_between(self._clause, text))
            confirms = [s for s, _, n in hits if n == "confirmed"] if "confirmed" in names else ()
            for s, e, name in hits:
                if name not in ("reported", "refused_before", "refused_after"):
                    continue
                a, b = clauses.at(s, (s, e))
                if name != "refused_before":  # (reported speech, or what a refusal before it refuses)
                    if confirms and name == "reported":  # (unless the host confirms it: "asked if it cures acne, and yes it does")
                        sentences = sentences if sentences is not None else Spans(spans_between(_SENTENCE, text))
                        end = sentences.at(s, (s, len(text)))[1]
                        if any(b <= c < end for c in confirms):  # (in a later clause of its sentence)
                            continue
                    blanks.append((e, b))
                    continue
                if not text[a:s].strip():  # "... best seller? I can't confirm that": the clause before
                    a = clauses.start_of_last_ending_by(s, a)
                blanks.append((a, s))
                refused.append(text[a:s].strip())
        if "rule_talk" in names:  # (the sentences are split once, at the first quote)
            talk = [s for s, _, n in hits if n == "rule_talk"]  # (in order)
            for m in _QUOTE.finditer(text):
                if sentences is None:
                    sentences = Spans(spans_between(_SENTENCE, text))
                sentence = sentences.at(m.start())
                if sentence is None:
                    continue
                a, b = sentence  # (a rule word in the sentence, outside the quote)
                in_sentence = bisect_left(talk, b) - bisect_left(talk, a)
                in_quote = bisect_left(talk, min(m.end(), b)) - bisect_left(talk, max(m.start(), a))
                if in_sentence > in_quote:
                    blanks.append(m.span())
        where = None
        for i in sorted(i for c in names if c in self._exceptions_from for i in self._exceptions_from[c]):
            sequence, refuses, needed, unless = self.exceptions[i]
            if not needed <= names:
                continue
            if unless is not None and unless in names:
                sentences = sentences if sentences is not None else Spans(spans_between(_SENTENCE, text))
                contrasts = [s for s, _, n in hits if n == unless]
            else:
                contrasts = None
            for s, e, name in hits:
                if name != sequence[0]:
                    continue
                at, ok = e, True
                where = where if where is not None else by_concept(hits)
                for nxt in sequence[1:]:
                    at = self._run_next(text, where, at, nxt)
                    if at is None:
                        ok = False
                        break
                if ok and refuses:  # (the refusal and the rest of its clause)
                    clauses = clauses if clauses is not None else Spans(spans_between(self._clause, text))
                    end = clauses.at(s, (s, at))[1]
                    blanks.append((s, max(at, end)))
                    refused.append(text[at:end].strip())
                elif ok and not (contrasts and any(at <= c < sentences.at(s, (s, len(text)))[1] for c in contrasts)):
                    blanks.append((s, at))
        return blanks, refused

    def _run_next(self, text: str, where, at: int, concept: str) -> int | None:
        """Where the next word (of ``concept``) of a scoped exception's run ends, or ``None``:
        it starts at most two characters after ``at``, a number between them not counted
        (最高升到160厘米), and in the same clause (最高，天下 is no measure: no term spans a clause
        mark), or it is a word in Latin letters written onto that number (最大65w).
        ``where``: :func:`~liveroom_sim.rewards.compliance.spans.by_concept` of the hits. (Only the first word of the concept from
        ``at`` on can be it: the characters between only grow.)"""
        word = first_from(where, concept, at)
        if word is not None:
            s, e = word
            between = text[at:s]
            if s <= at + _RUN_REACH and sum(c not in _NUMBER for c in between) <= 2 \
                    and _RUN_BREAK.search(_NUMBERS.sub("", between)) is None:
                return e
        if not self._glued:
            return None
        i, n, other = at, len(text), 0
        while i < n and text[i] not in _NUMBER and other < 2:  # (up to two characters before the number)
            i, other = i + 1, other + 1
        j = i
        while j < n and text[j] in _NUMBER:
            j += 1
        k = j
        while k < n and "a" <= text[k] <= "z":
            k += 1
        if j == i or k == j or (k < n and text[k] in _ALNUM):
            return None
        return k if concept in self._glued.get(text[j:k], _NONE) else None


# (a quote of one character is one when a list of quoted words or a word for such words
# follows it, or it ends such a list: “最”“第一”之类, “最”这种字, “第一”“最”这些字)
_CJK_QUOTE = re.compile(r'"([^"\n]{2,60})"|"([^"\n])"(?=\s?["「]|之类|这种|这类|这些|这几|这样|这个字|等字|等词|二字|字眼)'
                        r'|(?<=[^"\s]")"([^"\n])"')  # (after a closing quote)


def keep_quotes(norm: str) -> str:
    """Normalised text with a quotation in Chinese written 「...」, which folding keeps (it
    drops separators between Chinese characters, quotes among them), so that a quote about
    the rules can be read as one. A quote of one character is folded as before (顶"级 is 顶级),
    unless a list of quoted words or a word for such words follows it ("最""第一"之类).

    >>> keep_quotes('不能说"最好"这种词'), keep_quotes('不能用"最""第一"之类的词'), keep_quotes('不让讲"第一""最"')
    ('不能说「最好」这种词', '不能用「最」「第一」之类的词', '不让讲「第一」「最」')
    """
    return _CJK_QUOTE.sub(r"「\1\2\3」", norm) if '"' in norm and not norm.isascii() else norm


def _sentences(text: str) -> list[tuple[int, int]]:
    """The sentences of ``text``, a short question that names a topic read with the
    sentence that answers it ("those psoriasis patches? this clears them right up")."""
    spans = spans_between(_SENTENCE, text)
    if "?" not in text:  # (no question, no topic: most replies)
        return spans
    out: list[tuple[int, int]] = []
    topic = None
    for a, b in spans:
        if topic is not None:
            a = topic
            topic = None
        if text.startswith("?", b) and _short_topic(text[a:b]):
            topic = a
            continue
        out.append((a, b))
    if topic is not None:
        out.append((topic, spans[-1][1]))
    return out


#: The most words (Chinese characters) a question may have to be a topic the next sentence answers.
_TOPIC_WORDS = 10
_TOPIC_CHARS = 10


def _short_topic(question: str) -> bool:
    """Whether a question is short enough to name a topic ("eczema flare-ups?", 嘴角起疱疹？)."""
    question = question.rsplit(":", 1)[-1]  # (what an assent or a lead-in before a colon says is no topic: "for you: those patches?")
    if question.isascii():
        return len(question.split()) <= _TOPIC_WORDS
    return len("".join(question.split())) <= _TOPIC_CHARS


def _refusal_words_kept_whole(hits):
    """``hits`` without the words said inside a refusal's own word: 保证 of 不敢保证 or 没法保证
    is no promise, and the 不 in it takes nothing back (the refusal has blanked what it
    refuses)."""
    cover = Cover([(s, e) for s, e, name in hits if name in _REFUSALS])
    return [h for h in hits if h[2] in _REFUSALS or cover.furthest(h[0]) < h[1]]


def _inner_negations_dropped(hits):
    """``hits`` without the negations inside a longer word of another concept, which are
    that word's ("no more", "won't catch", 抢不到 take nothing back): one pass over the hits
    in order, keeping the furthest end of a word that starts before each."""
    longest: dict[int, int] = {}
    starts = None
    for s, e, name in hits:
        if name not in ("negation", "refusing") and e > longest.get(s, -1):
            # (a refusing word refuses only before a speech act; a turn that holds a negation,
            # 不过, is a turn: "本品不能代替药物, 不过吃完瘦了一个码" takes nothing back after it,
            # unless another word starts inside it: 不过后就 is 不 + 过后就)
            if name == "turn" and e - s > 1:
                if starts is None:
                    starts = {h[0] for h in hits if h[2] not in ("negation", "refusing", "turn")}
                if any(i in starts for i in range(s + 1, e)):
                    continue
            longest[s] = e
    out, reach, last = [], -1, None
    for h in hits:
        s, e, name = h
        if s != last:
            if last is not None:
                reach = max(reach, longest.get(last, -1))
            last = s
        if name == "negation" and (reach >= e or longest.get(s, -1) > e):
            continue
        out.append(h)
    return out


def _combination(family: Family, pool) -> tuple | None:
    """Hits, one per concept of one of the family's combinations, each in a word of its
    own (no two overlap), or ``None``."""
    by_name: dict[str, list] = {}
    for h in pool:
        by_name.setdefault(h[2], []).append(h)
    for combo in family.when:
        options = list(map(by_name.get, combo))
        if None in options:
            continue
        for chosen in itertools.islice(itertools.product(*options), 64):  # (most often one: each concept said once)
            if _apart(chosen):
                return chosen
    return None


def _apart(hits) -> bool:
    """Whether no two of ``hits`` overlap."""
    end = -1
    for s, e, _ in sorted(hits):
        if s < end:
            return False
        end = e
    return True


@lru_cache(maxsize=32)
def concept_reader(name: str, put_downs: tuple[str, ...] = ()) -> ConceptReader:
    """The reader of concept file ``name`` (see :func:`~liveroom_sim.world.concepts.load_concepts`)
    with the rule file's put-down words, compiled once per process."""
    return ConceptReader(load_concepts(name), put_downs)


class Brands(NamedTuple):
    """A catalog's competitor brands as said (see :func:`competitor_pattern`)."""

    forms: tuple[str, ...]
    pattern: re.Pattern

    def finditer(self, text: str):
        """Where ``text`` names a brand (most replies name none: a substring test of each
        form spares the pattern's search, which tries every position)."""
        for f in self.forms:
            if f in text:
                return self.pattern.finditer(text)
        return ()


@lru_cache(maxsize=64)
def competitor_pattern(names: tuple[str, ...]) -> Brands | None:
    """A catalog's competitor brands as said: the whole name, or its first word when that
    is long enough to be the brand's own ("Brightpeak" of "Brightpeak Beauty"), with an
    optional possessive "s" (the fold writes "Snackly's" as "snacklys")."""
    forms = set()
    for n in names:
        folded = fold(normalize(n))
        if not folded:
            continue
        forms.add(folded)
        first = folded.split(" ")[0]
        if folded.isascii() and len(first) >= 5:
            forms.add(first)
    if not forms:
        return None
    ordered = tuple(sorted(forms, key=len, reverse=True))
    body = "|".join(re.escape(f) for f in ordered)
    return Brands(ordered, re.compile(rf"(?<![a-z0-9])(?:{body})(?:s)?(?![a-z0-9])"))
