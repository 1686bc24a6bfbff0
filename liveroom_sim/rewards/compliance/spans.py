"""Where things are in a reply, found by bisection: the spans between a pattern's matches
(clauses, sentences), the span that holds a position, how far spans that may overlap reach
(blanked or refused words), and the next word of a concept. A look through every span or
word per word was quadratic in a reply's length (64 KB of "不敢保证，" took 51 s to read)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right


def spans_between(pattern: re.Pattern, text: str) -> list[tuple[int, int]]:
    """The non-empty pieces of ``text`` between the matches of ``pattern``, in order."""
    out, at = [], 0
    for m in pattern.finditer(text):
        if m.start() > at:
            out.append((at, m.start()))
        at = m.end()
    if at < len(text):
        out.append((at, len(text)))
    return out


class Spans:
    """Spans in order that do not overlap (clauses, sentences), looked up by position.

    >>> s = Spans([(0, 4), (6, 9)])
    >>> s.at(7), s.at(5), s.start_of_last_ending_by(6, -1)
    ((6, 9), None, 0)
    """

    def __init__(self, spans: list[tuple[int, int]]):
        self.spans = spans
        self._starts = [a for a, _ in spans]
        self._ends = [b for _, b in spans]

    def at(self, pos: int, default=None):
        """The span holding ``pos``, else ``default``."""
        i = bisect_right(self._starts, pos) - 1
        return self.spans[i] if i >= 0 and pos < self._ends[i] else default

    def start_of_last_ending_by(self, pos: int, default: int) -> int:
        """Where the last span that ends at or before ``pos`` starts, else ``default``."""
        j = bisect_right(self._ends, pos) - 1
        return self.spans[j][0] if j >= 0 else default


class Cover:
    """Spans that may overlap (blanked text, refusal words): how far those that start at or
    before a position reach, so that whether a word lies inside one is one bisection.

    >>> c = Cover([(5, 8), (0, 3), (1, 2)])
    >>> c.furthest(2), c.furthest(6), c.furthest(-1)
    (3, 8, -1)
    """

    def __init__(self, spans):
        self._starts, self._reach, far = [], [], -1
        for a, b in sorted(spans):
            far = max(far, b)
            self._starts.append(a)
            self._reach.append(far)

    def furthest(self, pos: int) -> int:
        """The furthest end of the spans starting at or before ``pos`` (-1 when none does)."""
        i = bisect_right(self._starts, pos) - 1
        return self._reach[i] if i >= 0 else -1


def by_concept(hits) -> dict[str, list[tuple[int, int]]]:
    """Where each concept is said, ``(start, end)`` in order (``hits``: ``(start, end,
    concept)`` in order)."""
    out: dict[str, list[tuple[int, int]]] = {}
    for s, e, name in hits:
        out.setdefault(name, []).append((s, e))
    return out


def first_from(where: dict[str, list[tuple[int, int]]], concept: str, at: int) -> tuple[int, int] | None:
    """The first word of ``concept`` that starts at or after ``at`` (``where``: :func:`by_concept`)."""
    spans = where.get(concept, ())
    i = bisect_left(spans, (at,))
    return spans[i] if i < len(spans) else None
