"""Cue words: which attribute of a product the words around a number name ("list price",
"shipping", "warranty", 到手), for the claim reader (:mod:`liveroom_sim.rewards.claims`).

The words are data: the ``reading:`` section of each phrasebook (``amounts.before`` and
``hours``; :func:`~liveroom_sim.world.phrasebook.reading_words`).
"""

from __future__ import annotations

import re
from functools import cache

from liveroom_sim.rewards.scanner import Literals
from liveroom_sim.world.phrasebook import reading_words


@cache
def money_cues() -> Literals:
    """The words that name a money attribute before an amount (the phrasebooks'), each
    standing for its attribute."""
    return _cue_words(reading_words().amounts.before)


@cache
def hour_cues() -> Literals:
    """The words around a number of hours that name a duration attribute."""
    return _cue_words(reading_words().hours)


def cue(text: str, cues: Literals) -> str | None:
    """The attribute whose cue word (of ``cues``: :func:`money_cues`, :func:`hour_cues`)
    stands nearest the end of ``text`` (the number): the last of the cue words found left
    to right, longest first, without overlaps."""
    found = cues.longest(text)
    return found[-1][2] if found else None


def _cue_words(cues: dict[str, tuple[str, ...]]) -> Literals:
    """The cue words of ``cues`` in one automaton (leftmost-longest, as a regex
    alternation of them longest first finds them), each standing for its attribute."""
    attribute_of = {}
    for attribute, words in cues.items():
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
    found = money_cues().longest(before)
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
