"""Reading replies: normalisation, numbers in the forms people write them, mentions.

Numbers are found with their unit and turned into a canonical quantity, so "$99.90",
"99.9 dollars", "99块9" and "九十九块九" are all ``Quantity("money", 99.9)``, "2 days" and
"48 hours" are both 48 hours, and "half price" and "五折" are a 50 % discount.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from ahocorasick_rs import AhoCorasick, MatchKind

from liveroom_sim.world.normalize import fold_chars

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_CN_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_CN_NUM = "零〇一二两三四五六七八九十百千万"
_CN_MAX = 10**12


def cn_to_number(text: str) -> float | None:
    """Convert a Chinese numeral (一百二十九, 九十九点九, 两千) to a number, or ``None``.

    >>> cn_to_number("一百二十九"), cn_to_number("九十九点九"), cn_to_number("十五")
    (129.0, 99.9, 15.0)
    """
    whole, _, frac = text.partition("点")
    if len(whole) > 24 or len(frac) > 24:
        return None  # no price, count or duration is written with so many characters
    if len(whole) > 1 and all(ch in _CN_DIGITS for ch in whole):
        # Digits with no unit between them: two are a range (三五天 is three to five days, 七八件
        # seven or eight), no one amount; more are read one by one (一二九 is 129, not 9).
        if len(whole) == 2:
            return None
        whole_digits = "".join(str(_CN_DIGITS[ch]) for ch in whole)
        return float(whole_digits + ("." + "".join(str(_CN_DIGITS.get(ch, 0)) for ch in frac) if frac else ""))
    total, section, digit = 0, 0, None
    for ch in whole:
        if ch in _CN_DIGITS:
            if digit is not None:
                return None  # 一百二三 ("a hundred and twenty or thirty"): no one amount
            digit = _CN_DIGITS[ch]
        elif ch in _CN_UNITS:
            unit = _CN_UNITS[ch]
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
        if any(ch not in _CN_DIGITS for ch in frac):
            return None
        value += float("0." + "".join(str(_CN_DIGITS[ch]) for ch in frac))
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


_NUMBER = rf"(\d+(?:,\d{{3}})*(?:\.\d+)?|[{_CN_NUM}]+(?:点[{_CN_NUM}]+)?)"
_QUANTITY = re.compile(
    r"(?<![A-Za-z0-9_.\-])(?P<pre>[$¥￥€£]|us\$|usd\s?|rmb\s?)?\s?" + _NUMBER +
    r"[\s-]?(?P<post>%|percent|per cent|折|美元|美金|人民币|元|块|dollars?|bucks|usd|yuan|rmb|cents?|euros?|(?<=\d)[$¥￥€£](?!\s?\d)"
    r"|hours?|hrs?|h\b|小时|minutes?|mins?\b|分钟|days?|天|weeks?|周|months?|个月|月|years?|年"
    r"|left|in stock|pieces|pcs|units|件|个|份|单"
    r"|ml|毫升|g\b|grams?|克|kg|mah|w\b|inch(?:es)?|英寸)?",
    re.IGNORECASE,
)
_HOURS = {"minute": 1 / 60, "min": 1 / 60, "分钟": 1 / 60, "hour": 1, "hr": 1, "h": 1, "小时": 1, "day": 24, "天": 24, "week": 168, "周": 168,
          "month": 720, "个月": 720, "月": 720, "year": 8640, "年": 8640}  # a year is 12 months
_MAY_HOLD_NUMBER = re.compile(rf"[\d{_CN_NUM}半]|half")
# A text of Chinese characters, spaces and punctuation holding no digit, no currency sign
# and no character that starts a unit of _QUANTITY can only hold Chinese numerals with no
# sign and no unit, which claim nothing (_parsed gives None): finding them is skipped (a
# 64 KB reply of 第一 or 买一送一 holds 32,768 of them).
_MAY_CLAIM = re.compile(r"[^\u3400-\u9fff\s!-#&-/:-@\[-`{-~]|[折美元块小天周个月年件份单毫克英]")
_HALF_PRICE = re.compile(r"half[- ]price|半价")  # 五折 / 5折 are read as numbers
# Percentages written with the unit first or in words: 百分之二十, 百分百, "one hundred percent".
_SPELLED_PERCENT = re.compile(rf"百分之(\d+(?:\.\d+)?|[{_CN_NUM}]+(?:点[{_CN_NUM}]+)?)|百分百")
# Numbers in English words before a unit: "fifty-eight left", "twenty-four hours", "within
# a day", "one hundred percent", "twenty-four dollars and ninety-nine cents". "a"/"an" is
# one only after a word of time ("in a day", "within an hour"), never in "twice a day".
_WORD_VALUES = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                           "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_WORD_VALUES.update({w: 10 * i for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split(), 2)})
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_SMALL = (rf"(?:(?:{_TENS})(?:[- ](?:one|two|three|four|five|six|seven|eight|nine))?|zero|one|two|three|four|five|six"
          r"|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)")
_WORD_QUANTITY = re.compile(
    rf"(?<![a-z-])(?P<n>(?:(?:{_SMALL}|a|one) )?hundred(?: and)?(?: {_SMALL})?|{_SMALL}|(?:(?<=in )|(?<=for ))(?:half )?an?)"
    r"[\s-](?P<unit>dollars?|bucks|percent|per cent|hours?|minutes?|days?|weeks?|months?|years?|left|in stock|pieces"
    rf"|units)(?:\s(?:and\s)?(?P<cents>{_SMALL})\s?cents?)?(?![a-z])")
# The unit words of _WORD_QUANTITY, found in one Aho-Corasick pass: a number in words is
# looked for only just before one (a regex tried at every position costs more than the
# rest of the reading).
_LAST_WORDS = frozenset([*_WORD_VALUES, "hundred", "a", "an"])  # a number in words ends with one of these
_UNIT_WORDS = AhoCorasick(["dollar", "buck", "percent", "per cent", "hour", "minute", "day", "week", "month", "year",
                           "left", "in stock", "piece", "unit"], matchkind=MatchKind.LeftmostLongest)
_STOCK_PREFIX = re.compile(r"(only|just|still|剩|还有|库存|仅剩|还剩)\s*$", re.IGNORECASE)
_UNITS: dict[str, tuple[str, float]] = {}


def quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` with its dimension (see :class:`Quantity`)."""
    return list(iter_quantities(text))


def iter_quantities(text: str) -> Iterator[Quantity]:
    """The numbers of ``text`` one by one, in order (then half-price phrases, percentages
    written unit first, and numbers in English words), so that a reader that stops after a
    few never parses the rest of a long reply."""
    units = _UNIT_WORDS.find_matches_as_indexes(text)  # (for numbers in words, read last)
    if not _MAY_HOLD_NUMBER.search(text):
        if units:
            yield from _word_quantities(text, units)
        return
    read_to = 0  # the end of the small change read with the last amount ("24 dollars 99")
    for m in _QUANTITY.finditer(text) if _MAY_CLAIM.search(text) else ():
        if m.start() < read_to:
            continue  # the cents of the amount before, or a range's second number, already read
        parsed = _parsed(*m.groups())
        if parsed is None:
            continue
        dim, value, currency = parsed
        if dim is None and text[m.end(2):m.end(2) + 1] in _RANGE_START and (join := _RANGE_JOIN.match(text, m.end(2))) \
                and (second := _RANGE_END.match(text, join.end())):
            # "1-2 days", "1 to 2 days", 1到3天, "3 to 5 left": a range states no one amount (a
            # spec's own range with no such unit, "3000-6000 K", "sizes 26-34", is read as before)
            read_to = second.end()
            continue
        span = m.span()
        if dim == "money" and (end := m.end()) < len(text) and text[end] in _CHANGE_START:
            change = small_change(text, m)
            if change is not None:
                value, span = round(value + change[0], 2), (span[0], change[1])
                read_to = change[1]
        elif dim is None:
            yield _bare(text, m, value)
            continue
        yield Quantity(dim, value, span, currency)
    if "half" in text or "半价" in text:
        for m in _HALF_PRICE.finditer(text):
            yield Quantity("percent_off", 50.0, m.span())
    if "百分" in text:
        for m in _SPELLED_PERCENT.finditer(text):
            value = _to_number(m.group(1)) if m.group(1) else 100.0
            if value is not None:
                yield Quantity("percent_off", value, m.span())
    if units:
        yield from _word_quantities(text, units)


def _bare(text: str, m: re.Match, value: float) -> Quantity:
    """A number with no sign and no unit: a stock count after "only", else bare."""
    dim = "count" if _STOCK_PREFIX.search(text, max(0, m.start() - 8), m.start()) else "bare"
    return Quantity(dim, value, m.span())


def _word_quantities(text: str, units) -> Iterator[Quantity]:
    """The numbers in words before a unit (:data:`_WORD_QUANTITY`), each looked for in the
    few characters around one of the unit words ``units`` (:data:`_UNIT_WORDS` matches)."""
    read_to, n = 0, len(text)
    for _, s, e in units:
        if s < read_to:
            continue
        head = text[max(read_to, s - 40):s]
        k = len(head.rstrip(" -"))
        if k == len(head) or head[max(head.rfind(" ", 0, k), head.rfind("-", 0, k)) + 1:k] not in _LAST_WORDS:
            continue  # (the word before the unit is no number word: most units are said after digits)
        for m in _WORD_QUANTITY.finditer(text, max(read_to, s - 40), min(n, e + 40)):
            if m.start("unit") < s:
                continue
            if m.start("unit") == s:
                unit = m.group("unit").lower()
                dim, factor = _UNITS[unit]
                value = _word_number(m.group("n")) + (_word_number(m.group("cents")) / 100 if m.group("cents") else 0.0)
                yield Quantity(dim, round(value * factor, 6), m.span(), _currency(None, unit) if dim == "money" else None,
                               True)
                read_to = m.end()
            break


def _word_number(words: str) -> float:
    """The value of a number in words of :data:`_WORD_QUANTITY` ("fifty-eight", "a
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
            part += _WORD_VALUES[w]
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
    post = post.lower() if post else ""
    if post == "折" and len(raw) == 2 and raw[0] in _CN_DIGITS and raw[1] in _CN_DIGITS:
        value = _CN_DIGITS[raw[0]] + _CN_DIGITS[raw[1]] / 10  # 六五折 is 6.5折, not 五折
    else:
        value = _to_number(raw)
    if value is None:
        return None
    if not digits and post == "个":
        post = ""  # 一个 / 两个 is "a" / "a couple" in speech, not a stock claim
    if pre and pre.strip():
        dim, factor = "money", 1.0
    elif post:
        dim, factor = _UNITS.get(post) or (("money", 1.0) if post.startswith("块") else ("size", 1.0))
    else:
        return None, value, None
    if dim == "discount_tenths":  # 8折 pays 80 %, i.e. 20 % off
        dim, value = "percent_off", round(100 - value * (10 if value < 10 else 1), 6)
    currency = _currency(pre, post) if dim == "money" else None
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
_JIAO = "[零〇一二两三四五六七八九\\d]"
_ZH_CHANGE = re.compile(
    rf"(?:(?P<fen2>\d\d)|零(?P<fen0>{_JIAO})分|(?P<jiao>{_JIAO})(?:(?P<mao>[毛角])(?:(?P<fen>{_JIAO})分?)?)?)" + _OWN_UNIT)
#: What joins the two numbers of a range, and its second number with a unit whose range
#: states no one amount (a duration, a count, money, a percentage).
_RANGE_START = frozenset(" -~–至到或")  # (what a range's join starts with; "" is not in it)
_RANGE_JOIN = re.compile(r"\s?(?:-|~|–|to\b|or\b|至|到|或)\s?(?=\d)")
_RANGE_END = re.compile(r"\d+(?:\.\d+)?\s?(?:hours?|hrs?|days?|weeks?|months?|years?|minutes?|小时|天|周|个月|月|年|分钟"
                        r"|left|pieces|units|件|份|单|dollars?|bucks|元|块|%|percent)(?![a-z])", re.IGNORECASE)
#: What the text right after an amount starts with when small change may follow it.
_CHANGE_START = frozenset(" ,a0123456789零〇一二两三四五六七八九")
_EN_MONEY_WORDS = frozenset({"dollar", "dollars", "bucks", "usd", "美元", "美金"})


def small_change(text: str, m: re.Match) -> tuple[float, int] | None:
    """The cents said after an amount of :data:`_QUANTITY`'s match ``m`` (see the note
    above), and where they end; ``None`` when none are."""
    raw, post, at = m.group(2), (m.group("post") or "").lower(), m.end()
    if text[at - 1].isspace():
        at -= 1  # (an amount with no unit keeps the space after it)
    if "." in raw or "点" in raw:
        return None  # 24.5 dollars 99 is two quantities
    if post in ("块", "元"):
        c = _ZH_CHANGE.match(text, at)
        if c is None or post == "元" and c.group("jiao") and not c.group("mao"):
            return None  # 129元9: no one says it for 129.9 (129块9 they do)
        digit = lambda g: _cn_digit(c.group(g)) if c.group(g) else 0  # noqa: E731
        if c.group("fen2"):
            return int(c.group("fen2")) / 100, c.end()
        return digit("jiao") / 10 + (digit("fen") + digit("fen0")) / 100, c.end()
    if post in _EN_MONEY_WORDS or not post and (m.group("pre") or "").strip():
        c = _CENTS_WORDED.match(text, at) or (_CENTS_BARE.match(text, at) if post else None)
        return (int(c.group(1)) / 100, c.end()) if c else None
    return None


def _cn_digit(ch: str) -> int:
    return int(ch) if ch.isdigit() else _CN_DIGITS[ch]


def _currency(pre: str | None, post: str) -> str | None:
    sign = (pre or "").strip().lower() or post
    if sign in ("$", "us$", "dollar", "dollars", "bucks", "usd", "cent", "cents", "美元", "美金"):
        return "USD"
    if sign in ("¥", "￥", "rmb", "元", "yuan", "人民币") or sign.startswith(("rmb", "块")):
        return "CNY"
    if sign in ("€", "euro", "euros"):
        return "EUR"  # (never a room's currency: a price in it is in the wrong one)
    return "GBP" if sign == "£" else None


def _to_number(raw: str) -> float | None:
    if raw[0].isdigit():
        try:
            return float(raw.replace(",", ""))
        except ValueError:
            return None
    return cn_to_number(raw)


def _units() -> dict[str, tuple[str, float]]:
    """Every unit word after a number -> (dimension, factor to the dimension's unit)."""
    units = {u: ("money", 1.0) for u in ("元", "块", "人民币", "美元", "美金", "dollar", "dollars", "bucks", "usd", "yuan", "rmb",
                                         "euro", "euros", "$", "¥", "￥", "€", "£")}
    units.update({"cent": ("money", 0.01), "cents": ("money", 0.01)})  # 99 cents is $0.99
    units.update({"%": ("percent_off", 1.0), "percent": ("percent_off", 1.0), "per cent": ("percent_off", 1.0),
                  "折": ("discount_tenths", 1.0)})
    for unit, hours in _HOURS.items():
        units[unit] = units[unit + "s"] = ("hours", float(hours))
    units.update({u: ("count", 1.0) for u in ("left", "in stock", "pieces", "pcs", "units", "件", "个", "份", "单")})
    return units


_UNITS.update(_units())


def normalize(text: str) -> str:
    """Fold characters (:func:`~liveroom_sim.world.normalize.fold_chars`: NFKC, invisible
    characters, confusables, traditional Chinese), lower-case, collapse whitespace and
    unify full-width punctuation, for matching.

    >>> normalize("Ｔｈｅ  ＢＥＳＴ\u200b！ 頂級")
    'the best! 顶级'
    """
    if text.isascii():  # nothing to fold but control characters
        return " ".join((text if text.isprintable() else fold_chars(text)).lower().split())
    # (fold_chars already unifies full-width punctuation: NFKC and its table). A Chinese
    # comma separates, it never groups thousands: "第1，159元" is not 1,159元.
    if "，" in text:
        text = text.replace("，", ", ")
    return " ".join(fold_chars(text).lower().split())


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
    p = normalize_phrase(phrase)
    body = re.escape(p)
    left = r"(?<![a-z0-9])" if _LATIN.match(p[:1]) else ""
    right = r"(?![a-z0-9])" if _LATIN.match(p[-1:]) else ""
    return re.compile(left + body + right)


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
    name = rf"([^\s@,，:：!?！？。.;；)\]】{stop}]+)"
    return re.compile(re.escape(before) + name + re.escape(after))


def mentions(text: str, mention_format: str = "@{name}") -> tuple[str, ...]:
    """The viewer names addressed in ``text`` under the mention format."""
    return tuple(m.group(1) for m in mention_pattern(mention_format).finditer(text))
