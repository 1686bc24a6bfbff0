"""Cue words: which attribute of a product the words around a number name ("list price",
"shipping", "warranty", 到手), for the claim reader (:mod:`liveroom_sim.rewards.claims`)."""

from __future__ import annotations

import re
from functools import lru_cache

from liveroom_sim.rewards.scanner import Literals

#: Attribute -> the words that name it before (or around) a number, per dimension.
MONEY_CUES = (
    ("list_price", ("list price", "original", "regular", "msrp", "原价", "划线价", "专柜价", "吊牌价")),
    ("shipping_fee", ("shipping", "delivery fee", "postage", "运费", "邮费")),
    ("price_after_coupon", ("takes it to", "after", "with code", "with the code", "券后", "到手", "用券", "用码")),
    ("coupon_value", (" off", "save", "minus", "立减", "减", "省", "优惠券", "券")),
)
HOUR_CUES = (
    ("returns", ("return", "refund", "退")),
    ("warranty", ("warranty", "guarantee", "保修", "质保")),
    ("ships_within", ("ship", "dispatch", "send", "发货", "发出")),
    ("shelf_life", ("keeps for", "shelf", "expire", "best before", "保质", "保存")),
    ("battery", ("battery", "charge", "runs", "playtime", "续航", "充电", "播放", "电池")),
    ("eta", ("arriv", "deliver", "到货", "送达", "到达")),
)


def cue(text: str, cues) -> str | None:
    """The attribute whose cue word stands nearest the end of ``text`` (the number): the
    last of the cue words found left to right, longest first, without overlaps."""
    found = _cue_words(cues).longest(text)
    return found[-1][2] if found else None


@lru_cache(maxsize=16)
def _cue_words(cues) -> Literals:
    """The cue words of ``cues`` in one automaton (leftmost-longest, as a regex
    alternation of them longest first finds them), each standing for its attribute;
    built once per cue table."""
    attribute_of = {}
    for attribute, words in cues:
        for w in words:
            attribute_of.setdefault(w, attribute)
    return Literals(attribute_of.items())


#: A number that is not part of a code word (GLOW15, MAN200, IPX7).
_LONE_NUMBER = re.compile(r"(?<![a-z])\d[\d.,]*")
#: Deal words, which may name an amount past another one ("$8 off when you spend $50").
_DEALS = ("coupon_value", "price_after_coupon")


def money_cue(before: str) -> str | None:
    """The money attribute the words before an amount name (``before`` ends at it).

    A word that names an attribute ("list price", "shipping", 原价) names the amount right
    after it only: in "list price $59 and it's $39.90 now" the second amount is the price.
    Deal words ("with code", "save", 到手) may reach past an amount.

    >>> money_cue("the list price is "), money_cue("the list price is $59 and it's ")
    ('list_price', None)
    >>> money_cue("use code spend50: $8 off when you spend ")
    'coupon_value'
    """
    return money_cue_at(before)[0]


def money_cue_at(before: str) -> tuple[str | None, int]:
    """:func:`money_cue`, and where its cue word ends in ``before`` (0 when none)."""
    found = _cue_words(MONEY_CUES).longest(before)
    if not found:
        return None, 0
    last = None
    for last in _LONE_NUMBER.finditer(before):
        pass
    start, end, attribute = found[-1]
    # No cue word holds a digit, "." or ",", so none straddles the end of a number: the
    # cue words after the last number are those found in the whole text after it.
    if last is None or start >= last.end():
        return attribute, end  # the cue nearest the amount, with no number in between
    return (attribute, end) if attribute in _DEALS else (None, 0)


# What may join an attribute's word to a product named before the amount: "shipping on
# the glow serum is $4.99". Nothing at all ("shipping. glow serum is $22.99" once
# normalised) or other words name no attribute of that product.
_LINK = re.compile(r"\s*(?:on|for|of|to)(?: the| your| a| this| that| my)?\s*|\s*的\s*")


def money_cue_before(before: str, s: int, norm: str, mentions) -> str | None:
    """:func:`money_cue` of the amount at ``s`` of ``norm`` (``before`` ends at it),
    unless a product is named (``mentions``: ``(start, end, id)`` in order) between an
    attribute's word and the amount without being joined to it: the amount is then
    said of that product ("运费\nGlow Serum is $22.99" states the serum's price)."""
    attribute, cue_end = money_cue_at(before)
    if attribute not in ("list_price", "shipping_fee") or not mentions:
        return attribute
    start = s - len(before) + cue_end  # where the cue word ends in the reply
    for m_start, m_end, _ in mentions:
        if m_start >= start and m_end <= s:
            return attribute if _LINK.fullmatch(norm, start, m_start) else None
    return attribute
