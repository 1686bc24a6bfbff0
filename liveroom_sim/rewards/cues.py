"""Cue words: which attribute of a product the words around a number name ("list price",
"shipping", "warranty", 到手), for the claim reader (:mod:`liveroom_sim.rewards.claims`)."""

from __future__ import annotations

import re

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
    """The attribute whose cue word stands nearest the end of ``text`` (the number)."""
    pattern, attribute_of = _cue_pattern(cues)
    best = None
    for m in pattern.finditer(text):
        best = m.group(0)
    return attribute_of[best] if best is not None else None


_CUE_PATTERNS: dict[int, tuple] = {}


def _cue_pattern(cues) -> tuple[re.Pattern[str], dict[str, str]]:
    entry = _CUE_PATTERNS.get(id(cues))
    if entry is None:
        attribute_of = {}
        for attribute, words in cues:
            for w in words:
                attribute_of.setdefault(w, attribute)
        words = sorted(attribute_of, key=len, reverse=True)
        entry = _CUE_PATTERNS[id(cues)] = (re.compile("|".join(map(re.escape, words))), attribute_of)
    return entry


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
    last = None
    for last in _LONE_NUMBER.finditer(before):
        pass
    if last is None:
        return cue(before, MONEY_CUES)
    near = cue(before[last.end():], MONEY_CUES)
    if near is not None:
        return near
    far = cue(before, MONEY_CUES)
    return far if far in _DEALS else None
