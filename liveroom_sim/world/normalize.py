"""Character-level folding of text before it is matched against rules and facts.

What a reader sees is what counts, not how it was encoded: full-width and compatibility
forms are folded by Unicode NFKC; zero-width, bidirectional and other format or control
characters and stray combining marks are removed; letters that look like Latin letters or
digits (Cyrillic "а", Greek "ο") become those letters, from Unicode's confusables table as
shipped by the ``confusable_homoglyphs`` package; traditional Chinese characters become
simplified ones, from the character table of ``zhconv`` (MediaWiki's conversion data).

All of it is one ``str.translate`` after NFKC, so folding is linear in the text; ASCII
text (most English replies) skips it entirely, and other text holding no character the
table changes (most Chinese replies) skips the translation after one search.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from importlib import resources

#: Full-width punctuation NFKC keeps, and typographic quotes, folded to ASCII.
_PUNCTUATION = {"“": '"', "”": '"', "‘": "'", "’": "'", "、": ",", "—": "-", "–": "-", "－": "-"}
_KEEP = {"\t", "\n", "\r"}


def fold_chars(text: str) -> str:
    """NFKC, then remove invisible characters and fold confusables and traditional
    characters (see the module docstring). Case and spacing are left as they are.

    >>> fold_chars("ｃｕｒｅ\\u200bs 頂級 сurе")
    'cures 顶级 cure'
    """
    if text.isascii():
        return text.translate(_ascii_controls()) if not text.isprintable() else text
    text = unicodedata.normalize("NFKC", text)
    # (translating looks every character up in a dict; one search tells most texts, of
    # characters the table leaves alone, from the few the table changes)
    return text.translate(_table()) if _may_fold().search(text) else text


@lru_cache(maxsize=1)
def _ascii_controls() -> dict[int, None]:
    return {c: None for c in range(32) if chr(c) not in _KEEP} | {127: None}


@lru_cache(maxsize=1)
def _table() -> dict[int, str | None]:
    """The one translation table (built once per process, about 60 ms)."""
    table: dict[int, str | None] = {}
    for cp in (*range(0x30000), *range(0xE0000, 0xE1000)):
        cat = unicodedata.category(chr(cp))
        if cat in ("Cf", "Cc", "Mn", "Me", "Co", "Cs") and chr(cp) not in _KEEP:
            table[cp] = None
    table.update(_confusables())
    table.update(_simplified())
    table.update({ord(k): v for k, v in _PUNCTUATION.items()})
    return table


@lru_cache(maxsize=1)
def _may_fold() -> re.Pattern[str]:
    """A character the table maps, or any character beyond the Basic Multilingual Plane:
    one character class of the table's keys, for a search (a class of characters up to
    U+FFFF is a bitmap the engine tests in one step; the keys beyond it, hundreds of
    ranges, are tested one by one, for every character: they are all taken)."""
    ranges: list[list[int]] = []
    for cp in sorted(k for k in _table() if k <= 0xFFFF):
        if ranges and ranges[-1][1] == cp - 1:
            ranges[-1][1] = cp
        else:
            ranges.append([cp, cp])
    ranges.append([0x10000, 0x10FFFF])
    return re.compile("[" + "".join(f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges) + "]")


def _confusables() -> dict[int, str]:
    """Non-ASCII letters and digits that Unicode lists as confusable with one ASCII letter
    or digit. CJK and kana are left alone (一 is not a dash)."""
    from confusable_homoglyphs import confusables

    path = resources.files(confusables.__package__) / "confusables.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    out = {}
    for char, glyphs in data.items():
        if len(char) != 1 or char.isascii() or unicodedata.category(char)[0] not in "LN" or _is_cjk(char):
            continue
        for g in glyphs:
            c = g["c"]
            if len(c) == 1 and c.isascii() and c.isalnum():
                out[ord(char)] = c.lower() if char.islower() or not c.isalpha() else c
                break
    return out


def _simplified() -> dict[int, str]:
    """Traditional -> simplified for single characters (zhconv's zh-Hans table)."""
    from zhconv import zhconv

    zhconv.loaddict()
    return {ord(k): v for k, v in zhconv.zhcdicts["zh2Hans"].items() if len(k) == 1 and len(v) == 1 and k != v}


def _is_cjk(char: str) -> bool:
    cp = ord(char)
    return 0x2E80 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF or 0x20000 <= cp <= 0x2FFFF or 0xFF66 <= cp <= 0xFF9F
