"""Long replies searched fast: a rule pattern led by the characters its matches start with.

CPython's regex engine skips ahead through a text only when a pattern starts with a
literal, a character class, or an alternation of literals. Most rule patterns start with
an alternation of groups (``(?:cures|heals)|(?:verbs) ... (?:objects)``) or with a class
per character (the sound patterns, ``[最󰁘][好󰀜]``), so the engine tries the whole
pattern at every position: 1-7 ms per rule over a 64 KB reply.

:func:`lead` gives such a pattern a companion that starts with one character class, the
characters any match can start with (read from the parsed pattern), and then checks,
from the same position, that the pattern matches there (a look-ahead inside a one-char
look-behind). Its first match starts where the pattern's first match starts, so
:func:`first_match` returns exactly what ``pattern.search(text)`` returns: the pattern
matched from that position (``match(text, pos)`` sees the text before ``pos`` as
``search`` does, for look-behinds and ``\\b``). Only worth two calls on long texts.
"""

from __future__ import annotations

import re

try:  # CPython's own pattern parser (private): without it, every pattern is searched plainly
    from re import _constants as C
    from re import _parser
except ImportError:  # pragma: no cover - another Python, or a later CPython that moved it
    C = _parser = None

#: Texts at least this long are searched through the lead (two C calls instead of one).
LONG = 512
_MAX_FIRSTS = 2000


def lead(pattern: re.Pattern) -> re.Pattern | None:
    """The lead of ``pattern`` (see the module docstring), or ``None`` when the characters
    its matches start with cannot be told (a class such as ``.`` or ``\\w``, a negated
    class, an ignore-case flag, a pattern that can match the empty string)."""
    if _parser is None or pattern.flags & re.IGNORECASE:
        return None
    parsed = _parser.parse(pattern.pattern, pattern.flags)
    if _engine_skips(parsed):
        return None  # the engine already skips to the first character: a lead only adds work
    try:
        firsts, nullable = _starts(parsed)
    except _Unknown:
        return None
    if nullable or not firsts or len(firsts) > _MAX_FIRSTS:
        return None
    chars = "".join(re.escape(ch) for ch in sorted(firsts))
    return re.compile(rf"[{chars}](?<=(?=(?:{pattern.pattern}))[\s\S])", pattern.flags & ~re.UNICODE)


def first_match(pattern: re.Pattern, led: re.Pattern | None, text: str) -> re.Match | None:
    """``pattern.search(text)``, through the lead ``led`` when there is one and the text is long."""
    if led is None or len(text) < LONG:
        return pattern.search(text)
    m = led.search(text)
    return None if m is None else pattern.match(text, m.start())


def _engine_skips(items) -> bool:
    """Whether the engine finds a literal or class to skip to by itself: the pattern
    starts (inside non-capturing groups) with a literal, a class, or an alternation whose
    branches all start with a literal (what ``re._compiler`` looks for)."""
    while items.data and items.data[0][0] is C.SUBPATTERN and items.data[0][1][0] is None:
        items = items.data[0][1][3]
    if not items.data:
        return False
    op, av = items.data[0]
    if op in (C.LITERAL, C.IN):
        return True
    return op is C.BRANCH and all(b.data and b.data[0][0] is C.LITERAL for b in av[1])


class _Unknown(Exception):
    pass


def _starts(items) -> tuple[set[str], bool]:
    """The characters a match of the sequence ``items`` may start with, and whether it may
    match the empty string. A superset is fine (zero-width assertions are skipped)."""
    out: set[str] = set()
    for op, av in items:
        if op is C.LITERAL:
            out.add(chr(av))
            return out, False
        if op is C.IN:
            out |= _class(av)
            return out, False
        if op is C.BRANCH:
            nullable = False
            for branch in av[1]:
                chars, empty = _starts(branch)
                out |= chars
                nullable = nullable or empty
            if not nullable:
                return out, False
        elif op is C.SUBPATTERN:
            _group, add_flags, _del, sub = av
            if add_flags & re.IGNORECASE:
                raise _Unknown
            chars, empty = _starts(sub)
            out |= chars
            if not empty:
                return out, False
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            low, _high, sub = av
            chars, empty = _starts(sub)
            out |= chars
            if low > 0 and not empty:
                return out, False
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue  # zero width: the match starts with what follows
        else:
            raise _Unknown
    return out, True


def _class(items) -> set[str]:
    out: set[str] = set()
    for op, av in items:
        if op is C.LITERAL:
            out.add(chr(av))
        elif op is C.RANGE and av[1] - av[0] < _MAX_FIRSTS:
            out.update(chr(c) for c in range(av[0], av[1] + 1))
        else:
            raise _Unknown  # a negated class, a category (\s, \w), a huge range
    return out
