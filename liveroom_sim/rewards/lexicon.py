"""How rule words are written: the forms a reply may use for a rule's phrase.

Three readings of normalised text (:func:`~liveroom_sim.world.text.normalize`) serve the
compliance rules:

* :func:`fold` undoes respellings that change no meaning: spaced or punctuated letters
  (``b.e.s.t``, ``c u r e``), hyphens inside words, separators between Chinese characters
  (``最.好``), the ways of writing "number one" and "100%" (``NO.1``, ``#1``,
  ``number 1``, ``第1``, ``百分百``), and chat's "u" and "ur" ("type ur ssn"). Rule phrases
  are folded the same way.
* :func:`word_forms` turns an English phrase into a pattern that matches every inflection
  of its words (cure, cures, cured, curing), using candidate suffixes that the Snowball
  stemmer (``snowballstemmer``) confirms share the word's stem; a hand list of suffixes
  alone would also accept "cur" + "ed". The stemmer runs when rules are compiled, never on
  replies, so matching stays a regular-expression search.
* :class:`Sounds` reads Chinese by sound: each character becomes a representative of its
  toned reading (``pypinyin``'s table), and pinyin syllables written in Latin letters
  become the character they spell, so 蕞好 and zui好 read as 最好.

Each reading is a few C-level passes (``re.sub``, ``str.translate``): linear in the text.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

CJK = "\u3400-\u9fff\uf900-\ufaff"
_SEP = r"[\s.\-_*·•/|~+'\"^=]"
# Three or more single letters joined by separators: b.e.s.t, c u r e, b-e-s-t. (Each
# pattern here that looks behind starts with a character it matches and looks behind it
# after, so the engine skips ahead to that character instead of trying every position.)
_SPACED = re.compile(rf"[a-z](?<![a-z0-9][a-z])(?:{_SEP}{{1,3}}[a-z](?![a-z0-9])){{2,}}")
# What every such run holds (a single letter between separators, then another one), found
# with a search that starts at a separator: the run's own pattern starts with a letter and
# is tried at each one, which cost more than the rest of the fold.
_MAY_BE_SPACED = re.compile(rf"{_SEP}[a-z]{_SEP}{{1,3}}[a-z](?![a-z0-9])")
_RUN_SEP = re.compile(rf"{_SEP}{{1,3}}")
_NOT_LETTER = re.compile(r"[^a-z]")
_ANY_LATIN = re.compile(r"[a-z]")
_HYPHEN = re.compile(r"-(?<=[a-z]-)(?=[a-z])")
# Separators between two Chinese characters (最.好 is 最好), removed in one C-level
# substitution (a callback checking the character before each separator cost more).
_CJK_SEP_BETWEEN = re.compile(rf"{_SEP}(?<=[{CJK}]{_SEP}){_SEP}{{0,2}}(?=[{CJK}])")
# These patterns start with what they match, not with a look behind, so the regex
# engine skips ahead to it; the boundary before a match is checked in the callback.
_NUMBER_ONE = re.compile(r"(?:#|no\.|no(?=1)|nr\.?|number|num\.?|top|numero)\s?(?:1|one|uno)(?![0-9a-z])")
_DI_YI = re.compile(r"第\s?(?:1|壹)(?![0-9])")
# A cure's potential negative is a negation said before it, of the same length: 治不了 is 不能治,
# 代替不了 不能代替, 治不好 不能治, 降不了 不能降 ("口角炎它治不了", "能量棒降不了血糖" claim no
# cure), and a return's: 退不了 is 不能退 ("拆了就退不了" promises no refund). (Only these verbs:
# 消不掉 read as 不能消 would begin 不能消除, and a concept word holding a negation takes it away.)
_CANNOT = re.compile(r"(根治|治愈|代替|替代|治|降|退)不[了掉]|(治)不好")
_HUNDRED = re.compile(r"100\s?(?:%|percent\b|per cent\b)|(?:one )?hundred percent\b|百分之百|百分百")
# Intensifiers change no claim: "the very very best" is "the very best", "the absolute
# best" is "the best", 最最好 is 最好; "world's" and "worlds" are one word.
_INTENSIFIED = re.compile(r"\b(very|really|truly|so|super)(?:[\s,]+\1\b)+|(最)最+")
# (one substring test each: a pattern of them all was tried at every position of the text)
_MAY_INTENSIFY = ("最最", "very", "really", "truly", "so so", "so, so", "super")
_THE_INTENSIFIED = re.compile(r"\bthe (?:absolute|absolutely|ultimate|truly|real|very very) best\b")
_POSSESSIVE = re.compile(r"['’](?<=[a-z]['’])s\b")
# "u" and "ur" as chat writes "you" and "your" ("type ur ssn", "dm u"): the letter first, then
# a look behind that no letter, digit or Chinese character comes before it ("1u", "you",
# "your", U盘 are none).
_CHAT_YOU = re.compile(rf"u(r?)(?![a-z0-9'{CJK}])(?<![a-z0-9'{CJK}]ur)(?<![a-z0-9'{CJK}]u)")


def fold(norm: str) -> str:
    """Undo respellings in normalised text (see the module docstring).

    >>> fold("the b.e.s.t, risk-free, no.1 and 第1 百分百"), fold("type ur ssn so u get a 1u rack")
    ('the best, risk free, number one and 第一 100%', 'type your ssn so you get a 1u rack')
    """
    if _MAY_BE_SPACED.search(norm):
        norm = _SPACED.sub(_letters, norm)
    if "_" in norm:
        norm = norm.replace("_", " ")  # never meaningful in speech, and it splits words
    if "-" in norm:
        norm = _HYPHEN.sub(" ", norm)
    if not norm.isascii():
        norm = _CJK_SEP_BETWEEN.sub("", norm)
        if "第" in norm:
            norm = _DI_YI.sub("第一", norm)
        if "不了" in norm or "不掉" in norm or "治不好" in norm:  # (most replies hold none)
            norm = _CANNOT.sub(_cannot, norm)
    if "1" in norm or "one" in norm or "uno" in norm:
        norm = _NUMBER_ONE.sub(_number_one, norm)
    if "100" in norm or "hundred" in norm or "百" in norm:
        norm = _HUNDRED.sub(_hundred, norm)
    if "u" in norm:
        norm = _CHAT_YOU.sub(_you, norm)
    if "'" in norm or "’" in norm:
        norm = _POSSESSIVE.sub("s", norm)
    for w in _MAY_INTENSIFY:  # most replies hold none
        if w in norm:
            norm = _INTENSIFIED.sub(_first, norm)
            break
    if "best" in norm:
        norm = _THE_INTENSIFIED.sub("the best", norm)
    return norm


def _you(m: re.Match) -> str:
    return "your" if m.group(1) else "you"


def _cannot(m: re.Match) -> str:
    return "不能" + (m.group(1) or m.group(2))


def _first(m: re.Match) -> str:
    return m.group(1) or m.group(2)


def _after_word(m: re.Match, chars: str = "abcdefghijklmnopqrstuvwxyz0123456789") -> bool:
    return m.start() > 0 and m.string[m.start() - 1] in chars


def _number_one(m: re.Match) -> str:
    return m.group(0) if _after_word(m) else "number one"


def _hundred(m: re.Match) -> str:
    return m.group(0) if _after_word(m, "abcdefghijklmnopqrstuvwxyz0123456789.") else "100%"


def _letters(m: re.Match) -> str:
    run = m.group(0)
    seps = _RUN_SEP.findall(run)
    # A single letter set off by a space before a run joined some other way is a word of
    # its own: "a m-i-r-a-c-l-e" is "a miracle", not "amiracle" (which no rule names).
    if len(seps) >= 3 and seps[0].isspace() and not any(s.isspace() for s in seps[1:]):
        return run[0] + " " + _NOT_LETTER.sub("", run[1:])
    return _NOT_LETTER.sub("", run)


_SUFFIXES = ("s", "es", "ed", "d", "ing", "er", "ers", "ment", "ments", "ly", "ies", "ied", "ation", "ations")
_VOWELS = frozenset("aeiou")


@lru_cache(maxsize=4096)
def inflections(word: str) -> tuple[str, ...]:
    """The word and its inflected forms that share its Snowball stem, longest first.

    >>> {"curing", "cures", "cured", "cure"} <= set(inflections("cure"))
    True
    >>> sorted(inflections("control"))[:4]
    ['control', 'controlation', 'controlations', 'controled']
    """
    if not word.isascii() or not word.isalpha() or len(word) < 3:
        return (word,)
    stem = _stemmer().stemWord(word)
    forms = {word} | {f for s in _SUFFIXES for f in _spelled(word, s)}
    # The stemmer is lenient ("cureed" passes): a form English spelling never makes is
    # left out by :func:`_spelled` (each one was another literal in every phrase a concept
    # file expands, up to 256 per phrase); one the stemmer rejects is not an inflection.
    kept = [f for f in forms if f == word or _stemmer().stemWord(f) == stem]
    return tuple(sorted(kept, key=lambda f: (-len(f), f)))


def _spelled(word: str, suffix: str) -> tuple[str, ...]:
    """``word`` with ``suffix`` as English spells it: a silent e dropped before a vowel
    (cure, curing; not after ee, oe, ye: agreeing), a final y after a consonant turned to
    i (body, bodies), a consonant after one vowel doubled or not (control, controlled,
    traveled; quit, quitting), -es (not -s) after a hiss, -es after an o too, -d only
    after an e, -ies and -ied only for a y."""
    last, vowel_suffix = word[-1], suffix[0] in "aei"
    if suffix in ("ies", "ied"):
        return (word[:-1] + suffix,) if last == "y" else ()
    if suffix == "d":
        return (word + "d",) if last == "e" else ()
    hiss = word.endswith(("s", "x", "z", "ch", "sh"))
    if suffix == "es" and not (hiss or last == "o") or suffix == "s" and hiss:
        return ()
    if last == "y" and word[-2] not in _VOWELS:
        return (word + suffix,) if suffix in ("ing", "ment", "ments", "ly") else ()
    if not vowel_suffix:
        return (word + suffix,)
    if last == "e":
        return (word + suffix,) if word.endswith(("ee", "oe", "ye")) and suffix == "ing" else (word[:-1] + suffix,)
    if last in _VOWELS or last in "wxy" or word[-2] not in _VOWELS or word[-3] in _VOWELS and word[-4:-2] != "qu":
        return (word + suffix,)
    return (word + suffix, word + last + suffix)  # (controlled; traveled and travelled)


_THREAD = threading.local()


def _stemmer():
    # One stemmer per thread: a snowball stemmer keeps its state between calls, and two
    # rooms reset on two threads at once (a server's concurrent resets) broke a shared one.
    stemmer = getattr(_THREAD, "stemmer", None)
    if stemmer is None:
        import snowballstemmer

        stemmer = _THREAD.stemmer = snowballstemmer.stemmer("english")
    return stemmer


def _word(token: str) -> bool:
    return token.isascii() and token.isalnum()


def word_forms(phrase: str) -> str:
    """A regex source matching folded ``phrase`` with each English word in any inflection,
    whole words only in Latin script.

    >>> bool(re.fullmatch(word_forms("treat acne"), "treating acne"))
    True
    """
    joined, prev, end = "", "", 0
    for m in re.finditer(rf"[a-z]+|[0-9]+|[{CJK}]+|\S", phrase):
        token = m.group(0)
        forms = inflections(token) if token.isalpha() and token.isascii() else (token,)
        part = re.escape(forms[0]) if len(forms) == 1 else "(?:" + "|".join(map(re.escape, forms)) + ")"
        if prev:
            spaced = m.start() > end
            joined += (r"\s" if spaced else "") if _word(prev) and _word(token) else r"\s?"
        joined, prev, end = joined + part, token, m.end()
    right = r"(?![a-z0-9])" if phrase[-1:].isascii() and phrase[-1:].isalnum() else ""
    if phrase[:1].isascii() and phrase[:1].isalnum():
        # The first letter, then the boundary behind it: a pattern that starts with a
        # literal lets the regex engine skip ahead to it instead of trying every position.
        first = re.escape(phrase[0])
        return f"{first}(?<![a-z0-9]{first})(?:{joined[len(first):] if joined.startswith(first) else _drop_first(joined)}){right}"
    return joined + right


def _drop_first(joined: str) -> str:
    """``joined`` (starting with a group of forms sharing one first letter) without it."""
    head, _, rest = joined.partition(")")
    forms = head[3:].split("|")  # head is "(?:form|form|..."
    return "(?:" + "|".join(f[1:] for f in forms) + ")" + rest


def trie_pattern(words) -> str:
    """A regex source matching any of ``words``, longest first, with shared prefixes
    factored out so the engine does not try every word at every position.

    >>> re.findall(trie_pattern(["cur", "cure", "best"]), "cure best cur")
    ['cure', 'best', 'cur']
    """
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and "" not in node else "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node else body

    return emit(trie)


class Sounds:
    """Chinese read by sound, for the rules' multi-character Chinese phrases.

    A character stands for its default toned reading: 蕞 and 醉 read zuì like 最. Only
    readings of the rules' own characters are mapped (so the table stays small), and
    only phrases of two characters or more are matched by sound: one character alone
    has too many innocent homophones.
    """

    def __init__(self, phrases: list[str]):
        from pypinyin import Style, lazy_pinyin
        from pypinyin.pinyin_dict import pinyin_dict

        chars = {ch for p in phrases for ch in p if re.match(rf"[{CJK}]", ch)}
        reading = {ch: pinyin_dict.get(ord(ch), "").split(",")[0] for ch in chars}
        rep: dict[str, str] = {}
        for ch in sorted(chars):
            if reading[ch]:
                rep.setdefault(reading[ch], ch)
        self.table = {cp: rep[r.split(",")[0]] for cp, r in pinyin_dict.items()
                      if r.split(",")[0] in rep and chr(cp) != rep[r.split(",")[0]]}
        # A pinyin syllable in Latin letters carries no tone: it becomes a placeholder
        # (a private-use character) that stands for every tone of that syllable.
        self.plain = {ch: lazy_pinyin(ch, style=Style.NORMAL)[0] for ch in chars}
        plains = sorted({p for p in self.plain.values() if p.isascii() and p.isalpha()})
        self.syllables = {p: chr(0xF0000 + i) for i, p in enumerate(plains)}
        # (the left boundary is checked in _spell: a pattern that starts with letters
        # lets the engine skip to them)
        self._latin = re.compile(rf"(?:{trie_pattern(plains)})(?:\s?(?:{trie_pattern(plains)}))*(?![a-z])") if plains else None
        self._rep = {ch: rep.get(reading[ch], ch) for ch in chars}

    def sources(self, firsts) -> frozenset:
        """Every character of written text that may read as one of ``firsts`` (a sound
        pattern's first characters), pinyin initials included: a text holding none of
        them cannot match the pattern by sound."""
        out = set(firsts)
        out.update(chr(cp) for cp, rep in self.table.items() if rep in firsts)
        out.update(p[0] for p, ph in self.syllables.items() if ph in firsts)
        return frozenset(out)

    def first(self, phrase: str) -> str:
        """The characters a sound match of ``phrase`` may start with."""
        ch = phrase[:1]
        out = self._rep.get(ch, ch)
        return out + self.syllables.get(self.plain.get(ch, ""), "")

    def pattern(self, phrase: str) -> str:
        """A regex source for ``phrase`` in text :meth:`read` has read."""
        out = []
        for ch in phrase:
            options = {self._rep.get(ch, ch)}
            if ch in self.plain and self.plain[ch] in self.syllables:
                options.add(self.syllables[self.plain[ch]])
            out.append("[" + "".join(map(re.escape, sorted(options))) + "]" if len(options) > 1 else re.escape(ch))
        return "".join(out)

    def elements(self, phrase: str) -> tuple[frozenset, ...]:
        """The characters :meth:`pattern` accepts at each position of ``phrase``."""
        out = []
        for ch in phrase:
            options = {self._rep.get(ch, ch)}
            if ch in self.plain and self.plain[ch] in self.syllables:
                options.add(self.syllables[self.plain[ch]])
            out.append(frozenset(options) if len(options) > 1 else frozenset(ch))
        return tuple(out)

    def read(self, text: str) -> str:
        """``text`` with each mapped character replaced by its sound's representative
        character, and each run of pinyin syllables by their placeholders."""
        if self._latin is not None and _ANY_LATIN.search(text):
            text = self._latin.sub(self._spell, text)
        return text.translate(self.table)

    def _spell(self, m: re.Match) -> str:
        if m.start() and m.string[m.start() - 1].isascii() and m.string[m.start() - 1].isalpha():
            return m.group(0)  # inside an English word
        run = m.group(0).replace(" ", "")
        out, i = [], 0
        while i < len(run):  # longest syllable first: "dingji" is ding + ji
            for n in range(min(6, len(run) - i), 0, -1):
                ch = self.syllables.get(run[i:i + n])
                if ch:
                    out.append(ch)
                    i += n
                    break
            else:
                return m.group(0)  # not a run of the rules' syllables: English, left alone
        return "".join(out)
