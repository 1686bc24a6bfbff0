"""Finding many literal strings in a reply in one pass: :class:`Literals`.

A reply is read against fixed vocabularies: product names and aliases, the literals that
key each compliance rule, fact phrases, allergens. Each vocabulary is compiled once (per
catalog, rule set or phrasebook) into one Aho-Corasick automaton from ``ahocorasick_rs``
(a maintained Rust library with wheels for every CPython; its leftmost-longest mode finds
exactly what a regex alternation of the words, longest first, finds), so a reply is read
once per vocabulary, in time linear in its length whatever it holds, instead of once per
word or per regex branch. Offsets are character offsets into the Python string.
"""

from __future__ import annotations

from collections.abc import Iterable

from ahocorasick_rs import AhoCorasick, MatchKind

_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class Literals:
    """A fixed set of non-empty literal strings, each standing for a value, found in one pass.

    Args:
        words: The literals and the value each stands for (a literal may be given more
            than once only with the same value: group the values first). The empty string is in every text, as ``"" in text`` says:
            :meth:`present` and :meth:`whole_words` always report its value, and
            :meth:`longest` never (compare :attr:`everywhere`).
    """

    __slots__ = ("words", "values", "everywhere", "_longest", "_all")

    def __init__(self, words: Iterable[tuple[str, object]]):
        values: dict[str, object] = {}
        everywhere: dict[str, object] = {}
        for w, v in words:
            into = values if w else everywhere
            if into.setdefault(w, v) != v:
                raise ValueError(f"literal {w!r} given with two values")
        #: The value of the empty string, when it was given (``None`` if not).
        self.everywhere = everywhere[""] if everywhere else None
        self.words = tuple(values)
        self.values = tuple(values.values())
        self._longest = AhoCorasick(self.words, matchkind=MatchKind.LeftmostLongest) if self.words else None
        self._all = AhoCorasick(self.words) if self.words else None

    def __bool__(self) -> bool:
        return bool(self.words) or self.everywhere is not None

    def longest(self, text: str) -> list[tuple[int, int, object]]:
        """``(start, end, value)`` of the leftmost-longest, non-overlapping occurrences,
        in order: what ``re.finditer`` of the words' alternation (longest first) finds.

        >>> Literals([("glow", 1), ("glow serum", 2), ("serum", 3)]).longest("a glow serum, a serum")
        [(2, 12, 2), (16, 21, 3)]
        """
        if self._longest is None:
            return []
        found = self._longest.find_matches_as_indexes(text)
        if not found:
            return found  # (a new empty list: most texts hold no cue word, name...)
        values = self.values
        return [(s, e, values[i]) for i, s, e in found]

    def present(self, text: str) -> set[object]:
        """The values of every literal that occurs in ``text`` anywhere (``w in text``).

        >>> sorted(Literals([("最好", "a"), ("好用", "b"), ("用", "c"), ("x", "d")]).present("最好用"))
        ['a', 'b', 'c']
        """
        found = None if self._all is None else self._all.find_matches_as_indexes(text, overlapping=True)
        values = self.values
        out = {values[i] for i, _, _ in found} if found else set()  # (most texts hold none)
        if self.everywhere is not None:
            out.add(self.everywhere)
        return out

    def whole_words(self, text: str) -> set[object]:
        """The values of the literals that occur in ``text`` as whole words: not next to
        an ASCII letter or digit (what ``w in re.findall("[a-z0-9]+", text)`` tells for a
        literal of ASCII letters and digits; other literals count wherever they occur).

        >>> sorted(Literals([("cure", 1), ("cures", 2), ("最", 3)]).whole_words("secure cures 最好"))
        [2, 3]
        """
        out = set() if self.everywhere is None else {self.everywhere}
        if self._all is None:
            return out
        found = self._all.find_matches_as_indexes(text, overlapping=True)
        if not found:
            return out
        values, words, n = self.values, self.words, len(text)
        for i, s, e in found:
            v = values[i]
            if v in out:
                continue
            w = words[i]
            if w[0] in _ALNUM and s and text[s - 1] in _ALNUM:
                continue
            if w[-1] in _ALNUM and e < n and text[e] in _ALNUM:
                continue
            out.add(v)
        return out


class JointScan:
    """Two vocabularies read from a text in one pass: what :meth:`Literals.whole_words`
    finds of ``whole`` and :meth:`Literals.present` finds of ``anywhere``.

    >>> JointScan(Literals([("cure", 1), ("最", 2)]), Literals([("ad", "a")])).whole_words_and_present("secure 最 #ads")
    ({2}, {'a'})
    """

    __slots__ = ("_ac", "_entries", "_whole", "_anywhere")

    def __init__(self, whole: Literals, anywhere: Literals):
        entries: dict[str, list] = {}
        for w, v in zip(whole.words, whole.values):
            entries[w] = [v, (w[0] in _ALNUM) | (w[-1] in _ALNUM) << 1, None]
        for w, v in zip(anywhere.words, anywhere.values):
            entries.setdefault(w, [None, 0, None])[2] = v
        self._ac = AhoCorasick(list(entries)) if entries else None
        self._entries = tuple(tuple(e) for e in entries.values())
        self._whole, self._anywhere = whole.everywhere, anywhere.everywhere

    def whole_words_and_present(self, text: str) -> tuple[set[object], set[object]]:
        whole = set() if self._whole is None else {self._whole}
        anywhere = set() if self._anywhere is None else {self._anywhere}
        found = self._ac.find_matches_as_indexes(text, overlapping=True) if self._ac is not None else None
        if not found:
            return whole, anywhere
        entries, n = self._entries, len(text)
        for i, s, e in found:
            v, edge, a = entries[i]
            if a is not None:
                anywhere.add(a)
            if v is None or v in whole:
                continue
            if (edge & 1 and s and text[s - 1] in _ALNUM) or (edge & 2 and e < n and text[e] in _ALNUM):
                continue
            whole.add(v)
        return whole, anywhere
