"""Numbers that say whether viewers' chat reads like people or like templates.

:func:`chat_stats` is a pure function over the chat lines of some rooms: how many lines
the commonest openings and the commonest ending start or close, how varied the word pairs
are, how often people use emoji, name a product by its full catalog name, or leave one of
the simulator's own English phrases untranslated in Chinese chat. ``liveroom audit``
prints them per spec; :data:`TARGETS` holds the bounds ``docs/simulator.md`` states.

Tokens are what a reader sees as one unit: a Latin word or number (apostrophes kept), one
Chinese character, one emoji, or a run of other symbols ("???", "!!", "~"). Chinese has no
spaces, so three Chinese characters open a line as three English words do.

Example:
    >>> s = chat_stats(["how much is it??", "how much is it??", "link pls 😭"], "en", ())
    >>> s["lines"], s["top_openings_share"], s["emoji_share"]
    (3, 1.0, 0.333)
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence

#: Least or most each figure may be (``(">=", x)`` or ``("<=", x)``), per language where they differ.
TARGETS: dict[str, dict[str, tuple[str, float]]] = {
    "en": {"top_openings_share": ("<=", 0.15), "top_ending_share": ("<=", 0.01), "distinct_bigrams": (">=", 0.25),
           "emoji_share": (">=", 0.08), "full_name_share": ("<=", 0.03), "untranslated": ("<=", 0)},
    "zh": {"top_openings_share": ("<=", 0.15), "top_ending_share": ("<=", 0.01), "distinct_bigrams": (">=", 0.20),
           "emoji_share": (">=", 0.08), "full_name_share": ("<=", 0.03), "untranslated": ("<=", 0)},
}
#: How many of the commonest three-token openings :data:`TARGETS` bounds together.
TOP_OPENINGS = 20
#: Lines per block over which distinct bigrams are counted (the share falls as a corpus
#: grows, so it is the mean over blocks of this many lines: five seeds' worth of a room).
BIGRAM_BLOCK = 2000

_EMOJI = (r"[\U0001F300-\U0001FAFF\U00002600-\U000027BF\U0001F000-\U0001F2FF\u2B50\u2B06\u2194-\u21FF\u3030\u303D"
          r"\u3297\u3299\u2764]")
# Kaomoji: a face in brackets with symbols or non-Latin letters inside ((╥﹏╥), (๑•̀ㅂ•́)و, (≧▽≦)),
# or the plain-text faces people type (T_T, QAQ, ^_^, >_<, :D, xD, orz).
_KAOMOJI = re.compile(
    r"[(（][^\sA-Za-z0-9\u4e00-\u9fff()（）]{2,}[)）]|(?<![A-Za-z])(?:T_T|TAT|QAQ|QwQ|orz|xD|XD)(?![A-Za-z])"
    r"|\^[_o]?\^|>_<|[:;]-?[)(DP](?![A-Za-z0-9])|o\(\*[^)]*\)o")
_HAS_EMOJI = re.compile(_EMOJI)
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|[\u4e00-\u9fff]|" + _EMOJI + r"|[^\sA-Za-z0-9\u4e00-\u9fff]+")
# Two or more English words in a row inside Chinese chat: a phrase of the simulator's own
# ("好的free shipping", "no promotion") left in English. Brand and product names, and the
# short words Chinese rooms do type (yyds, nb, link, ok), are taken out first.
_EN_PHRASE = re.compile(r"[A-Za-z]{2,}(?:[ '][A-Za-z]{2,})+")
# Latin words Chinese chat does type (greetings, slang, abbreviations, kaomoji in letters).
_ROOM_LATIN = frozenset("ok okk hello hi hey omg yyds nb hhh hhhh xswl awsl pdd emo get link vlog diy bgm cp plus max pro "
                        "qaq qwq tat orz xd wow emm emmm emmmm".split())
_CJK = re.compile(r"[\u4e00-\u9fff]")
_ORDER_ID = re.compile(r"[a-z]+-\d+")  # an order id (LR-20359) is no English phrase


def tokens(line: str) -> list[str]:
    """The tokens of a chat line (see the module docstring), lower-cased.

    >>> tokens("omg 3号链接 SOLD OUT???")
    ['omg', '3', '号', '链', '接', 'sold', 'out', '???']
    """
    return [t.lower() for t in _TOKEN.findall(line)]


def has_emoji(line: str) -> bool:
    """Whether the line holds an emoji or a kaomoji.

    >>> has_emoji("冲冲冲(≧▽≦)"), has_emoji("link? T_T"), has_emoji("price?")
    (True, True, False)
    """
    return bool(_HAS_EMOJI.search(line) or _KAOMOJI.search(line))


def untranslated(line: str, language: str, names: Iterable[str] = ()) -> list[str]:
    """Phrases of another language left in ``line``: in Chinese chat, a run of English
    words holding two or more that are no product or brand name in ``names`` and none of
    the Latin words Chinese rooms type (ok, yyds, hello ...); in English chat, any
    Chinese character.

    >>> untranslated("好的free shipping 那几天发货", "zh"), untranslated("GlowLab精华多少钱", "zh", ["GlowLab"])
    (['free shipping'], [])
    """
    if language == "zh":
        low = _ORDER_ID.sub(" ", line.lower())
        for n in sorted(names, key=len, reverse=True):
            if n and n.isascii():
                low = low.replace(n.lower(), " ")
        return [p for p in _EN_PHRASE.findall(low) if sum(w not in _ROOM_LATIN for w in re.split(r"[ ']", p)) >= 2]
    return _CJK.findall(line)


def chat_stats(lines: Sequence[str], language: str, names: Iterable[str] = (), known: Iterable[str] = ()) -> dict:
    """The chat figures of ``lines`` (every chat line of some rooms, as posted).

    Args:
        lines: The chat lines.
        language: ``en`` or ``zh`` (which words count as untranslated).
        names: Every product's full catalog name.
        known: Other words the room may type in any language (brands, aliases): taken
            out, with ``names``, before looking for untranslated phrases.

    Returns:
        ``lines``; ``top_openings_share`` (lines opened by the :data:`TOP_OPENINGS`
        commonest three-token openings), ``top_opening``; ``top_ending_share`` (lines
        closed by the commonest three-token ending), ``top_ending``; ``distinct_bigrams``
        (distinct token pairs over all pairs within lines, the mean over blocks of
        :data:`BIGRAM_BLOCK` lines); ``emoji_share`` (lines with
        an emoji or kaomoji); ``full_name_share`` (lines naming a product by one of
        ``names``);
        ``untranslated`` (lines with a phrase of another language, see
        :func:`untranslated`) and ``untranslated_examples`` (up to three). Shares are
        rounded to three places.
    """
    names = [n for n in names if n]
    low_names = [n.lower() for n in names]
    known = [*names, *(k for k in known if k)]
    openings: Counter = Counter()
    endings: Counter = Counter()
    emoji = full = 0
    bad: list[str] = []
    tokenized = [tokens(line) for line in lines]
    for line, toks in zip(lines, tokenized):
        if len(toks) >= 3:
            openings[tuple(toks[:3])] += 1
            endings[tuple(toks[-3:])] += 1
        emoji += has_emoji(line)
        low = line.lower()
        full += any(n in low for n in low_names)
        if untranslated(line, language, known):
            bad.append(line)
    n = len(lines) or 1
    top = openings.most_common(TOP_OPENINGS)
    end = endings.most_common(1)
    return {
        "lines": len(lines),
        "top_openings_share": round(sum(c for _, c in top) / n, 3),
        "top_opening": " ".join(top[0][0]) if top else "",
        "top_ending_share": round(end[0][1] / n, 3) if end else 0.0,
        "top_ending": " ".join(end[0][0]) if end else "",
        "distinct_bigrams": distinct_bigrams(tokenized),
        "emoji_share": round(emoji / n, 3),
        "full_name_share": round(full / n, 3),
        "untranslated": len(bad),
        "untranslated_examples": bad[:3],
    }


def distinct_bigrams(tokenized: Sequence[list[str]]) -> float:
    """Distinct token pairs over all pairs within lines, the mean over consecutive blocks
    of :data:`BIGRAM_BLOCK` lines (full blocks only: a short last one would read more
    varied; all the lines when there are fewer), rounded to three places.

    >>> distinct_bigrams([["how", "much", "?"], ["how", "much", "?"]])
    0.5
    """
    size = min(BIGRAM_BLOCK, len(tokenized))
    shares = []
    for start in range(0, len(tokenized) - size + 1, size or 1):
        pairs = [p for toks in tokenized[start:start + size] for p in zip(toks, toks[1:])]
        if pairs:
            shares.append(len(set(pairs)) / len(pairs))
    return round(sum(shares) / len(shares), 3) if shares else 0.0


def misses(stats: dict, language: str) -> dict[str, str]:
    """The figures of ``stats`` that miss their :data:`TARGETS`, each with why.

    >>> misses({"emoji_share": 0.02, "untranslated": 0}, "en")
    {'emoji_share': '0.02 < 0.08'}
    """
    out = {}
    for key, (op, bound) in TARGETS.get(language, TARGETS["en"]).items():
        value = stats.get(key)
        if value is None:
            continue
        if op == ">=" and value < bound:
            out[key] = f"{value} < {bound}"
        elif op == "<=" and value > bound:
            out[key] = f"{value} > {bound}"
    return out
