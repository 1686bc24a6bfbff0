"""Reading replies: normalisation, numbers in the forms people write them, mentions.

Numbers are found with their unit and turned into a canonical quantity, so "$99.90",
"99.9 dollars", "99块9" and "九十九块九" are all ``Quantity("money", 99.9)``, "2 days" and
"48 hours" are both 48 hours, and "half price" and "五折" are a 50 % discount.

The grammar of a written number is here; its words (numerals, units, currency signs) are
data, the ``reading.numbers`` section of each phrasebook (:class:`Numbers`), so a word
or a language is added there.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache, lru_cache
from typing import Literal, NamedTuple

import pydantic
from ahocorasick_rs import AhoCorasick, MatchKind

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.normalize import fold_chars
from liveroom_sim.world.paths import ENVS_DIR

_CN_MAX = 10**12
#: Hours in each unit of time a time word may name (a month is 30 days, a year 12 months).
_HOURS_IN = {"minute": 1 / 60, "hour": 1, "day": 24, "week": 168, "month": 720, "year": 8640}
_Word = pydantic.constr(min_length=1)
_Char = pydantic.constr(min_length=1, max_length=1)
_Currency = Literal["USD", "CNY", "EUR", "GBP"]


class Numbers(Frozen):
    """The words numbers are written with in one language (the ``reading.numbers`` section
    of a phrasebook; numbers are read with every language's words merged, as a reply may
    mix them).

    Attributes:
        digits / multipliers: Chinese-style numerals: a digit's value, a multiplier's
            (十 10, 百 100, 千 1000, 万 10000: 一百二十九 is 129).
        points: What separates a numeral's whole part from its decimals (九十九点九).
        words: Numbers in words -> value ("fifty" 50); a number in words is read
            only before one of the English units of :func:`_word_quantity`.
        money_before / money_after: Signs and words of money before or after an amount
            ("$", "usd", "dollars", 元) -> its currency; a one-character sign is read after
            a number too ("99$").
        cents: Words of a hundredth of a currency ("cents") -> the currency.
        percent / tenths: Words of a percentage ("%") and of a price in tenths (8折 pays 80 %).
        time: Words of a duration -> the unit of time they name.
        count / size: Words of a stock count ("left", 件) and of a size (ml, 克).
        whole_words: Unit words read only where a word ends ("h", "g").
        stock_before: Words right before a bare number that make it a stock count ("only", 剩).
        stock_after: Words one or two words after a bare number that make it a stock count
            ("214 bags left").
        options: Words after a number (and its count word) that count a product's options,
            an amount nothing checks ("3 colors", 三个颜色, 5种口味).
        half_price: Phrases of a 50 % discount ("half price", 半价).
    """

    digits: dict[_Char, pydantic.conint(ge=0, le=9)] = {}
    multipliers: dict[_Char, Literal[10, 100, 1000, 10000]] = {}
    points: tuple[_Char, ...] = ()
    words: dict[_Word, pydantic.conint(ge=0, le=90)] = {}
    money_before: dict[_Word, _Currency] = {}
    money_after: dict[_Word, _Currency] = {}
    cents: dict[_Word, _Currency] = {}
    percent: tuple[_Word, ...] = ()
    tenths: tuple[_Word, ...] = ()
    time: dict[_Word, Literal["minute", "hour", "day", "week", "month", "year"]] = {}
    count: tuple[_Word, ...] = ()
    size: tuple[_Word, ...] = ()
    whole_words: tuple[_Word, ...] = ()
    stock_before: tuple[_Word, ...] = ()
    stock_after: tuple[_Word, ...] = ()
    options: tuple[_Word, ...] = ()
    half_price: tuple[_Word, ...] = ()


class _Reader(NamedTuple):
    """The patterns and tables the reading of numbers runs on, built once from the
    phrasebooks' :class:`Numbers` (the grammar is here, the words there)."""

    words: Numbers
    numeral: str  # the characters of a Chinese-style numeral, for a character class
    quantity: re.Pattern[str]
    number_start: re.Pattern[str]  # the first character of a quantity's number
    lead: int  # at most how far a quantity's match starts before its number (its sign, spaces)
    half_price: re.Pattern[str] | None
    spelled_percent: re.Pattern[str]
    stock_prefix: re.Pattern[str]
    stock_suffix: re.Pattern[str] | None
    options: re.Pattern[str] | None
    units: dict[str, tuple[str, float]]
    currencies: dict[str, str]
    usd_words: frozenset[str]
    change_start: frozenset[str]
    zh_change: re.Pattern[str]
    word_quantity: re.Pattern[str]
    last_words: frozenset[str]


@cache
def _reader() -> _Reader:
    """The reader of numbers in the shipped phrasebooks' words (built on first use): their
    ``reading.numbers`` sections merged, each language's words after the one before (by
    file name). The sections are read here, not through
    :func:`~liveroom_sim.world.phrasebook.reading_words`: the phrasebook module reads text
    with this one (and validates the same section when it loads a phrasebook).

    Raises:
        SpecError: for a section that is invalid, naming its file and field.
    """
    merged: dict = {}
    for path in sorted((ENVS_DIR / "phrasebook").glob("*.yaml")):
        data = datafile.read_yaml(path)
        reading = data.get("reading") if isinstance(data, dict) else None
        section = (reading.get("numbers") if isinstance(reading, dict) else None) or {}
        for name, value in datafile.validate(Numbers, section, path, "reading.numbers"):
            merged[name] = {**merged.get(name, {}), **value} if isinstance(value, dict) else (*merged.get(name, ()), *value)
    return _build(Numbers.model_validate(merged))


def _alternation(words, whole: frozenset[str] = frozenset()) -> str:
    """Words as one pattern that tries the longest first (个月 before 个), a word in
    ``whole`` only where a word ends; shared beginnings are factored out (d(?:ays?|ollars?)),
    so the engine does not try every word after every number (a flat alternation made
    reading numbers a quarter slower)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = r"\b" if w in whole else ""

    def emit(node: dict) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if "" not in node:
            return branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if not branches:
            return node[""]
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body}|{node['']})" if node[""] else f"(?:{body})?"

    return emit(trie) if trie else "(?!)"


def _build(n: Numbers) -> _Reader:
    numeral = "".join((*n.digits, *n.multipliers))
    points = "|".join(map(re.escape, n.points))
    decimals = rf"(?:(?:{points})[{numeral}]+)?" if points else ""
    number = rf"(\d+(?:,\d{{3}})*(?:\.\d+)?|[{numeral}]+{decimals})"
    signs = "".join(w for w in n.money_before if len(w) == 1 and not w.isalnum())
    sign_words = sorted((w for w in n.money_before if w not in signs), key=len, reverse=True)
    pre = "|".join([f"[{re.escape(signs)}]", *(re.escape(w) + (r"\s?" if w[-1].isalpha() else "") for w in sign_words)])
    after = [*n.money_after, *n.cents, *n.percent, *n.tenths, *n.time, *n.count, *n.size]
    post = _alternation(after, frozenset(n.whole_words)) + rf"|(?<=\d)[{re.escape(signs)}](?!\s?\d)"
    quantity = re.compile(rf"(?<![A-Za-z0-9_.\-])(?P<pre>{pre})?\s?" + number + rf"[\s-]?(?P<post>{post})?", re.IGNORECASE)
    units = {u: ("money", 1.0) for u in (*n.money_after, *n.money_before)}
    units.update({u: ("money", 0.01) for u in n.cents})  # 99 cents is $0.99
    units.update({u: ("percent_off", 1.0) for u in n.percent})
    units.update({u: ("discount_tenths", 1.0) for u in n.tenths})
    units.update({u: ("hours", float(_HOURS_IN[unit])) for u, unit in n.time.items()})
    units.update({u: ("count", 1.0) for u in n.count})
    units.update({u: ("size", 1.0) for u in n.size})
    half = _alternation(n.half_price)
    digits = "".join(n.digits)
    # (a sign of one character; a sign word and the space it may take; then the space before the number)
    lead = max([1 if signs else 0, *(len(w) + (1 if w[-1].isalpha() else 0) for w in sign_words)]) + 1
    return _Reader(
        words=n, numeral=numeral, quantity=quantity, number_start=re.compile(rf"[\d{numeral}]"), lead=lead,
        half_price=re.compile(half) if half else None,
        spelled_percent=re.compile(rf"百分之(\d+(?:\.\d+)?|[{numeral}]+{decimals})|百分百"),
        stock_prefix=re.compile(rf"({_alternation(n.stock_before)})\s*$", re.IGNORECASE),
        stock_suffix=re.compile(rf"\s*(?:[a-z][a-z'-]*\s+){{1,2}}(?:{_alternation(n.stock_after)})(?![a-z])", re.IGNORECASE)
        if n.stock_after else None,
        options=re.compile(rf"\s*(?:{_alternation(n.options)})(?![a-z])", re.IGNORECASE) if n.options else None,
        units=units, currencies={**n.money_before, **n.money_after, **n.cents},
        usd_words=frozenset(w for w, c in n.money_after.items() if c == "USD"),
        change_start=frozenset(" ,a0123456789" + digits),
        zh_change=re.compile(rf"(?:(?P<fen2>\d\d)|零(?P<fen0>[{digits}\d])分|(?P<jiao>[{digits}\d])(?:(?P<mao>[毛角])"
                             rf"(?:(?P<fen>[{digits}\d])分?)?)?)" + _OWN_UNIT),
        word_quantity=_word_quantity(n.words), last_words=frozenset([*n.words, "hundred", "a", "an"]),
    )


def _word_quantity(words: dict[str, int]) -> re.Pattern[str]:
    """Numbers in English words before a unit: "fifty-eight left", "twenty-four hours",
    "within a day", "one hundred percent", "twenty-four dollars and ninety-nine cents".
    "a"/"an" is one only after a word of time ("in a day", "within an hour"), never in
    "twice a day"."""
    by_value = sorted(words, key=words.get)
    tens = "|".join(w for w in by_value if words[w] >= 20)
    ones = "|".join(w for w in by_value if 1 <= words[w] <= 9)
    small = "|".join(w for w in by_value if words[w] < 20)
    small = rf"(?:(?:{tens})(?:[- ](?:{ones}))?|{small})" if tens else rf"(?:{small})"
    return re.compile(
        rf"(?<![a-z-])(?P<n>(?:(?:{small}|a|one) )?hundred(?: and)?(?: {small})?|{small}|(?:(?<=in )|(?<=for ))(?:half )?an?)"
        r"[\s-](?P<unit>dollars?|bucks|percent|per cent|hours?|minutes?|days?|weeks?|months?|years?|left|in stock|pieces"
        rf"|units)(?:\s(?:and\s)?(?P<cents>{small})\s?cents?)?(?![a-z])")


def cn_to_number(text: str) -> float | None:
    """Convert a Chinese numeral (一百二十九, 九十九点九, 两千) to a number, or ``None``.

    >>> cn_to_number("一百二十九"), cn_to_number("九十九点九"), cn_to_number("十五")
    (129.0, 99.9, 15.0)
    """
    n = _reader().words
    digits, multipliers = n.digits, n.multipliers
    whole, frac = text, ""
    for point in n.points:
        if point in text:
            whole, _, frac = text.partition(point)
            break
    if len(whole) > 24 or len(frac) > 24:
        return None  # no price, count or duration is written with so many characters
    if len(whole) > 1 and all(ch in digits for ch in whole):
        # Digits with no unit between them: two are a range (三五天 is three to five days, 七八件
        # seven or eight), no one amount; more are read one by one (一二九 is 129, not 9).
        if len(whole) == 2:
            return None
        whole_digits = "".join(str(digits[ch]) for ch in whole)
        return float(whole_digits + ("." + "".join(str(digits.get(ch, 0)) for ch in frac) if frac else ""))
    total, section, digit = 0, 0, None
    for ch in whole:
        if ch in digits:
            if digit is not None:
                return None  # 一百二三 ("a hundred and twenty or thirty"): no one amount
            digit = digits[ch]
        elif ch in multipliers:
            unit = multipliers[ch]
            if unit == 10000:
                total = (total + section + (digit or 0)) * unit
                section, digit = 0, None
            else:
                section += (1 if digit is None else digit) * unit
                digit = None
        else:
            return None
    whole_value = total + section + (digit or 0)
    if whole_value > _CN_MAX:
        return None  # 一万万万...: not a quantity anyone states (and beyond a float)
    value = float(whole_value)
    if frac:
        if any(ch not in digits for ch in frac):
            return None
        value += float("0." + "".join(str(digits[ch]) for ch in frac))
    return value


class Quantity(NamedTuple):
    """A number found in text with its dimension.

    Dimensions: ``money``, ``percent_off``, ``hours`` (any duration), ``count`` (stock),
    ``size`` (ml, g, mAh and the like), ``bare`` (no unit).
    """

    dim: str
    value: float
    span: tuple[int, int]
    currency: str | None = None  # USD or CNY when the money's sign or word says which
    spelled: bool = False  # written in English words ("fifty-eight left", "within two days")


# A text of Chinese characters, spaces and punctuation holding no digit, no currency sign
# and no character that starts a unit of the quantity pattern can only hold Chinese
# numerals with no sign and no unit, which claim nothing (_parsed gives None): finding
# them is skipped (a 64 KB reply of 第一 or 买一送一 holds 32,768 of them). (This filter's
# characters are today's; it misses 分 of 分钟 and 人 of 人民币, so 三十分钟 alone reads no
# number: deriving them from the unit words would change what replies claim.)
_MAY_CLAIM = re.compile(r"[^\u3400-\u9fff\s!-#&-/:-@\[-`{-~]|[折美元块小天周个月年件份单毫克英]")
# The unit words after a number in words, found in one Aho-Corasick pass: a number in
# words is looked for only just before one (a regex tried at every position costs more
# than the rest of the reading).
_UNIT_WORDS = AhoCorasick(["dollar", "buck", "percent", "per cent", "hour", "minute", "day", "week", "month", "year",
                           "left", "in stock", "piece", "unit"], matchkind=MatchKind.LeftmostLongest)


def quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` with its dimension (see :class:`Quantity`)."""
    return list(iter_quantities(text))


def iter_quantities(text: str) -> Iterator[Quantity]:
    """The numbers of ``text`` one by one, in order (then half-price phrases, percentages
    written unit first, and numbers in English words), so that a reader that stops after a
    few never parses the rest of a long reply."""
    r = _reader()
    units = _UNIT_WORDS.find_matches_as_indexes(text)  # (for numbers in words, read last)
    # The first digit, numeral or half-price phrase: a search for the characters, then one
    # substring search per phrase (one pattern for both was tried at every position of a
    # text without a number, three times slower).
    first = r.number_start.search(text)
    first = first.start() if first is not None else len(text)
    for w in r.words.half_price:
        at = text.find(w, 0, first + len(w) - 1)
        if at >= 0:
            first = at
    if first == len(text):
        if units:
            yield from _word_quantities(r, text, units)
        return
    read_to = 0  # the end of the small change read with the last amount ("24 dollars 99")
    for m in _quantity_matches(r, text, first) if _MAY_CLAIM.search(text) else ():
        if m.start() < read_to:
            continue  # the cents of the amount before, or a range's second number, already read
        parsed = _parsed(*m.groups())
        if parsed is None:
            continue
        dim, value, currency = parsed
        if dim in (None, "count") and r.options is not None and r.options.match(text, m.end()):
            continue  # "3 colors", 三个颜色: how many options, no amount of stock
        if dim is None and text[m.end(2):m.end(2) + 1] in _RANGE_START and (join := _RANGE_JOIN.match(text, m.end(2))) \
                and (second := _RANGE_END.match(text, join.end())):
            # "1-2 days", "1 to 2 days", 1到3天, "3 to 5 left": a range states no one amount (a
            # spec's own range with no such unit, "3000-6000 K", "sizes 26-34", is read as before)
            read_to = second.end()
            continue
        span = m.span()
        if dim == "money" and m.group(3) == "块":
            if text[span[1]:span[1] + 1] == "儿":
                continue  # 一块儿 is "together" (笔记本和手机一块儿充), no sum of money
            if r.stock_prefix.search(text, max(0, m.start() - 8), m.start()):
                yield Quantity("count", value, span)  # 还剩8块, 库存8块: after a word of stock, 块 counts (8块钱 is money)
                continue
        if dim == "money" and (end := m.end()) < len(text) and text[end] in r.change_start:
            change = _small_change(r, text, m)
            if change is not None:
                value, span = round(value + change[0], 2), (span[0], change[1])
                read_to = change[1]
        elif dim is None:
            yield _bare(r, text, m, value)
            continue
        yield Quantity(dim, value, span, currency)
    if r.half_price is not None:
        for w in r.words.half_price:  # (a substring test is cheaper than the pattern's search)
            if w in text:
                for m in r.half_price.finditer(text):  # (五折 / 5折 are read as numbers)
                    yield Quantity("percent_off", 50.0, m.span())
                break
    # Percentages written with the unit first: 百分之二十, 百分百 ("one hundred percent" is in words).
    if "百分" in text:
        for m in r.spelled_percent.finditer(text):
            value = _to_number(m.group(1)) if m.group(1) else 100.0
            if value is not None:
                yield Quantity("percent_off", value, m.span())
    if units:
        yield from _word_quantities(r, text, units)


def _quantity_matches(r: _Reader, text: str, first: int) -> Iterator[re.Match]:
    """``r.quantity.finditer(text)``, faster: the pattern starts with a look-behind and
    optional parts, so its engine tries it at every position of the text; here each
    search starts at most ``r.lead`` characters before the next digit or numeral (a match
    holds a number, after at most that many characters of sign and spaces, so none starts
    earlier), skipping the text between numbers. Each search still ends at the next match,
    or the text's end: the searches cover the text once (linear in its length).
    ``first``: a position at or before the text's first digit or numeral."""
    quantity, number_start, lead = r.quantity, r.number_start, r.lead
    pos, at = 0, first
    while True:
        m = quantity.search(text, max(pos, at - lead))
        if m is None:
            return
        yield m
        pos = m.end()  # (a match is never empty: it holds a number)
        d = number_start.search(text, pos)
        if d is None:
            return
        at = d.start()


def _bare(r: _Reader, text: str, m: re.Match, value: float) -> Quantity:
    """A number with no sign and no unit: a stock count after "only", else bare."""
    stock = r.stock_prefix.search(text, max(0, m.start() - 8), m.start()) or \
        (r.stock_suffix is not None and r.stock_suffix.match(text, m.end()))
    dim = "count" if stock else "bare"
    return Quantity(dim, value, m.span())


def _word_quantities(r: _Reader, text: str, units) -> Iterator[Quantity]:
    """The numbers in words before a unit (:func:`_word_quantity`), each looked for in the
    few characters around one of the unit words ``units`` (:data:`_UNIT_WORDS` matches)."""
    read_to, n = 0, len(text)
    for _, s, e in units:
        if s < read_to:
            continue
        head = text[max(read_to, s - 40):s]
        k = len(head.rstrip(" -"))
        if k == len(head) or head[max(head.rfind(" ", 0, k), head.rfind("-", 0, k)) + 1:k] not in r.last_words:
            continue  # (the word before the unit is no number word: most units are said after digits)
        for m in r.word_quantity.finditer(text, max(read_to, s - 40), min(n, e + 40)):
            if m.start("unit") < s:
                continue
            if m.start("unit") == s:
                unit = m.group("unit").lower()
                dim, factor = r.units[unit]
                value = _word_number(r, m.group("n")) + (_word_number(r, m.group("cents")) / 100 if m.group("cents") else 0.0)
                yield Quantity(dim, round(value * factor, 6), m.span(), r.currencies.get(unit) if dim == "money" else None,
                               True)
                read_to = m.end()
            break


def spoken_numbers(text: str, lo: int = 0, hi: int | None = None) -> list[tuple[int, int, float]]:
    """The numbers said in words in ``text[lo:hi]``, each run of number words read whole, as
    ``(start, end, value)``: "forty-five" 45, "one hundred and twenty" 120, a price as a
    host says it, "twenty-nine ninety-nine" 29.99 and "four fifty" 4.5 (a number after one
    of ten to ninety-nine: its cents); 一百二十八 128 and 一百四十九元九角 149.9 (the
    span is the numeral's and its small change's, a unit after it is left to the caller). A
    run that reads as no one amount (两三天, "three two one" counted down) gives each number
    it holds, or none.

    >>> [v for *_, v in spoken_numbers("now twenty-nine ninety-nine, list price forty five dollars")]
    [29.99, 45.0]
    >>> [v for *_, v in spoken_numbers("现价一百四十九元九角, 原价一百六十九元")]
    [149.9, 169.0]
    """
    hi = len(text) if hi is None else hi
    r = _reader()
    runs, small_change = _spoken_runs()
    out, read_to = [], lo
    for m in runs.finditer(text, lo, hi):
        if m.start() < read_to:
            continue  # (the small change of the amount before)
        if m.group(1) is not None:  # a numeral (一百二十八), and small change said after its 元 or 块
            value = cn_to_number(m.group(1))
            if value is None:
                continue
            end, change = m.end(), small_change.match(text, m.end(), hi)
            if change is not None and change.group(1) in r.words.digits:  # (九块九包邮: 9.9)
                value += r.words.digits[change.group(1)] / 10
                read_to = end = change.end()
            out.append((m.start(), end, round(value, 2)))
            continue
        groups: list[list] = []  # [start, end, value] of each number in the run
        for w in _SPOKEN_WORD.finditer(m.group(0)):
            word, s, e = w.group(0), m.start() + w.start(), m.start() + w.end()
            if word == "and":
                continue
            v = 100 if word == "hundred" else r.words.words[word]
            last = groups[-1][2] if groups else None
            if last is not None and (v == 100 and last < 10 or v < 10 and last % 100 >= 20 and last % 10 == 0
                                     or v < 100 and last % 100 == 0 and last >= 100):
                groups[-1][1:] = [e, last * 100 if v == 100 else last + v]  # (two hundred, twenty-nine, a hundred and five)
            else:
                groups.append([s, e, v])
        if len(groups) == 2 and groups[0][2] < 1000 and 10 <= groups[1][2] < 100:
            groups = [[groups[0][0], groups[1][1], groups[0][2] + groups[1][2] / 100]]
        out += [(s, e, float(v)) for s, e, v in groups]
    return out


_SPOKEN_WORD = re.compile(r"[a-z]+")


@cache
def _spoken_runs() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """Runs of number words in English (joined by spaces, hyphens or "and"), or a numeral
    in Chinese characters (group 1); and the small change said after a numeral's 元 or 块
    (一百四十九元九角, 九十九块九), its digit in group 1."""
    n = _reader().words
    words = "|".join(sorted([*n.words, "hundred"], key=len, reverse=True))
    numeral = "".join([*n.digits, *n.multipliers, *n.points])
    return (re.compile(rf"([{numeral}]+)|(?<![a-z])(?:{words})(?:(?:[\s-]+|\s+and\s+)(?:{words}))*(?![a-z])"),
            re.compile(rf"[元块](.)[角毛]?(?![{numeral}])"))


def _word_number(r: _Reader, words: str) -> float:
    """The value of a number in words of :func:`_word_quantity` ("fifty-eight", "a
    hundred and five", "half an")."""
    if words.startswith("half"):
        return 0.5
    total, part = 0, 0
    for w in re.split(r"[\s-]+", words):
        if w == "hundred":
            total, part = total + (part or 1) * 100, 0
        elif w in ("a", "an"):
            part = 1
        elif w != "and":
            part += r.words.words[w]
    return float(total + part)


@lru_cache(maxsize=4096)
def _parsed(pre: str | None, raw: str, post: str | None) -> tuple[str | None, float, str | None] | None:
    """``(dimension, value, currency)`` of one written quantity (its sign, number and unit
    as the pattern's groups found them), or ``None`` when it claims nothing. The
    dimension is ``None`` for a number with no sign and no unit: the words before it
    decide. A pure function of the three strings (cached: replies repeat a few forms)."""
    digits = raw[0].isdigit()
    if not digits and not post and not pre:
        return None  # a lone Chinese character such as 一 ("one", "a") claims nothing (not even parsed)
    r = _reader()
    cn_digits = r.words.digits
    post = post.lower() if post else ""
    if post in r.words.tenths and len(raw) == 2 and raw[0] in cn_digits and raw[1] in cn_digits:
        value = cn_digits[raw[0]] + cn_digits[raw[1]] / 10  # 六五折 is 6.5折, not 五折
    else:
        value = _to_number(raw)
    if value is None:
        return None
    if not digits and post == "个":
        post = ""  # 一个 / 两个 is "a" / "a couple" in speech, not a stock claim
    if pre and pre.strip():
        dim, factor = "money", 1.0
    elif post:
        dim, factor = r.units.get(post) or (("money", 1.0) if post.startswith("块") else ("size", 1.0))
    else:
        return None, value, None
    if dim == "discount_tenths":  # 8折 pays 80 %, i.e. 20 % off
        dim, value = "percent_off", round(100 - value * (10 if value < 10 else 1), 6)
    currency = r.currencies.get((pre or "").strip().lower() or post) if dim == "money" else None
    return dim, value * factor, currency


# Small change said after the unit, read with the amount before it as one amount: "24
# dollars 99", "24 bucks and 99 cents", "$24 and 99 cents", 24块99, 24块9, 24元9毛9, 24块零5分,
# 二十四块九毛九. Never a number with a unit of its own ("24 dollars, 99 left", "24块9折"),
# a longer number (24块999) or a decimal: that is another quantity, read on its own.
_OWN_UNIT = (r"(?![\d%]|[.,]\d|\s?(?:percent|折|件|个|份|单|天|小时|分钟|周|月|年|毫升|克|元|块|包|袋|瓶|盒|支|片|双|条"
             r"|斤|套|张|只|罐|杯|left|in stock|pieces|pcs|units|hours?|hrs?|min|days?|weeks?|months?|years?|ml|g\b"
             r"|grams?|kg|mah|dollars?|bucks|off\b))")
_CENTS_WORDED = re.compile(r",?\s(?:and\s)?(\d{1,2})\s?cents?(?![a-z])")
_CENTS_BARE = re.compile(r"\s(?:and\s)?(\d\d)" + _OWN_UNIT)
#: What joins the two numbers of a range, and its second number with a unit whose range
#: states no one amount (a duration, a count, money, a percentage).
_RANGE_START = frozenset(" -~–至到或")  # (what a range's join starts with; "" is not in it)
_RANGE_JOIN = re.compile(r"\s?(?:-|~|–|to\b|or\b|至|到|或)\s?(?=\d)")
_RANGE_END = re.compile(r"\d+(?:\.\d+)?\s?(?:hours?|hrs?|days?|weeks?|months?|years?|minutes?|小时|天|周|个月|月|年|分钟"
                        r"|left|pieces|units|件|份|单|dollars?|bucks|元|块|%|percent)(?![a-z])", re.IGNORECASE)


def _small_change(r: _Reader, text: str, m: re.Match) -> tuple[float, int] | None:
    """The cents said after an amount of the quantity pattern's match ``m`` (see the note
    above), and where they end; ``None`` when none are."""
    raw, post, at = m.group(2), (m.group("post") or "").lower(), m.end()
    if text[at - 1].isspace():
        at -= 1  # (an amount with no unit keeps the space after it)
    if "." in raw or any(p in raw for p in r.words.points):
        return None  # 24.5 dollars 99 is two quantities
    if post in ("块", "元"):
        c = r.zh_change.match(text, at)
        if c is None or post == "元" and c.group("jiao") and not c.group("mao"):
            return None  # 129元9: no one says it for 129.9 (129块9 they do)
        digit = lambda g: _cn_digit(r, c.group(g)) if c.group(g) else 0  # noqa: E731
        if c.group("fen2"):
            return int(c.group("fen2")) / 100, c.end()
        return digit("jiao") / 10 + (digit("fen") + digit("fen0")) / 100, c.end()
    if post in r.usd_words or not post and (m.group("pre") or "").strip():
        c = _CENTS_WORDED.match(text, at) or (_CENTS_BARE.match(text, at) if post else None)
        return (int(c.group(1)) / 100, c.end()) if c else None
    return None


def _cn_digit(r: _Reader, ch: str) -> int:
    return int(ch) if ch.isdigit() else r.words.digits[ch]


def _to_number(raw: str) -> float | None:
    if raw[0].isdigit():
        try:
            return float(raw.replace(",", ""))
        except ValueError:
            return None
    return cn_to_number(raw)


# A negation written without its apostrophe, as chat does ("it doesnt cure acne", "i cant
# promise results"): the "nt" ends one of these words. (The search starts with the literal
# "nt", which the engine skips ahead to; then one look behind per length of word.)
_NT_WORDS = ("ca", "do", "wo", "does", "is", "are", "was", "were", "did", "could", "would", "should", "has",
             "have", "had", "ai", "must", "need")
_BARE_NT = re.compile("nt(?![a-z0-9'])(?:" + "|".join(
    rf"(?<=(?:{'|'.join(ws)})nt)(?<![a-z0-9'](?:{'|'.join(ws)})nt)"
    for ws in ([w for w in _NT_WORDS if len(w) == n] for n in sorted({len(w) for w in _NT_WORDS}))) + ")")


def normalize(text: str) -> str:
    """Fold characters (:func:`~liveroom_sim.world.normalize.fold_chars`: NFKC, invisible
    characters, confusables, traditional Chinese), lower-case, collapse whitespace, unify
    full-width punctuation and give a negation written without its apostrophe its
    apostrophe back, for matching.

    >>> normalize("Ｔｈｅ  ＢＥＳＴ\u200b！ 頂級"), normalize("It doesnt cure acne, I cant say that")
    ('the best! 顶级', "it doesn't cure acne, i can't say that")
    """
    if text.isascii():  # nothing to fold but control characters
        text = " ".join((text if text.isprintable() else fold_chars(text)).lower().split())
    else:
        # (fold_chars already unifies full-width punctuation: NFKC and its table). A Chinese
        # comma separates, it never groups thousands: "第1，159元" is not 1,159元.
        if "，" in text:
            text = text.replace("，", ", ")
        text = " ".join(fold_chars(text).lower().split())
    return _BARE_NT.sub("n't", text) if "nt" in text else text


def line_starts(text: str, norm: str) -> tuple[int, ...]:
    """Where each line of ``text`` after its first starts in ``norm``, its :func:`normalize`
    (which reads a line break as a space): ``()`` for text of one line, or when the lines
    normalised one by one do not join up to ``norm``.

    >>> line_starts("AFTER\\n\\nGlow Serum is $22.99.", "after glow serum is $22.99.")
    (6,)
    """
    if "\n" not in text and "\r" not in text:
        return ()
    lines = [n for n in map(normalize, text.splitlines()) if n]
    if len(lines) < 2 or " ".join(lines) != norm:
        return ()
    out, at = [], 0
    for line in lines[:-1]:
        at += len(line) + 1
        out.append(at)
    return tuple(out)


_UNIFY = str.maketrans({"，": ",", "：": ":", "’": "'", "‘": "'", "“": '"', "”": '"', "！": "!", "？": "?"})


_LATIN = re.compile(r"[a-z0-9]")


@lru_cache(maxsize=8192)
def normalize_phrase(phrase: str) -> str:
    """:func:`normalize` for the few fixed phrases of rules and fact words (cached)."""
    return normalize(phrase)


@lru_cache(maxsize=4096)
def phrase_pattern(phrase: str) -> re.Pattern[str]:
    """A pattern for ``phrase`` that matches whole words in Latin script (so "cure" is
    not found in "secure") and anywhere in CJK text (which has no spaces)."""
    return re.compile(whole_words(normalize_phrase(phrase)))


def whole_words(text: str, body: str | None = None) -> str:
    """A regular expression for lower-case ``text`` that matches it as whole words in
    Latin script ("and" not in "hand") and anywhere in CJK text (which has no spaces).
    ``body``: the pattern between the bounds, when it is looser than ``text`` written out."""
    left = r"(?<![a-z0-9])" if _LATIN.match(text[:1]) else ""
    right = r"(?![a-z0-9])" if _LATIN.match(text[-1:]) else ""
    return left + (re.escape(text) if body is None else body) + right


@lru_cache(maxsize=2048)
def cue_pattern(cue: str) -> re.Pattern[str]:
    """A pattern for a phrasebook cue (a word that signals what a viewer asks): at the start
    of a word in Latin script ("return" in "returnable", not "ship" in "relationship"),
    anywhere in CJK text. Matched against normalised text."""
    c = normalize(cue)
    return re.compile((r"(?<![a-z0-9])" if c[:1].isascii() and c[:1].isalnum() else "") + re.escape(c))


def contains(norm_text: str, phrase: str) -> bool:
    """Whether normalised text contains ``phrase`` (as :func:`phrase_pattern` matches)."""
    return normalize_phrase(phrase) in norm_text and phrase_pattern(phrase).search(norm_text) is not None


@lru_cache(maxsize=64)
def mention_pattern(mention_format: str) -> re.Pattern[str]:
    """The pattern of a mention under the harness's format, e.g. ``@{name}``."""
    before, _, after = mention_format.partition("{name}")
    stop = re.escape(after[:1]) if after else ""
    # a name may hold a dot between its parts ("fine.print.phil"), not end with one
    name = rf"((?:[^\s@,，:：!?！？。.;；)\]】{stop}]|\.(?=[A-Za-z0-9_]))+)"
    return re.compile(re.escape(before) + name + re.escape(after))


def mentions(text: str, mention_format: str = "@{name}") -> tuple[str, ...]:
    """The viewer names addressed in ``text`` under the mention format."""
    return tuple(mention_pattern(mention_format).findall(text))  # (its one group: the name)
