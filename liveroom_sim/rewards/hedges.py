"""Amounts said with a denial or as a bound: "not $30, it's $24.99", "no longer $30",
不要199元 (denied), "under $30", "no more than", 不到200元 (a bound below), "over $20", "at
least", 超过 (a bound above); the words are the phrasebooks' ``reading.hedges``. A denied amount states nothing, and denying the true amount
is false; a price said as a bound is judged against the price and states no price (see
:func:`hedged_claim`). Read word by word from the amount back: no pattern is tried at
every position, for every amount."""

from __future__ import annotations

from functools import cache
from typing import NamedTuple

from liveroom_sim.rewards.claim import MONEY_TOLERANCE, Claim, ClaimKind, Verdict
from liveroom_sim.rewards.truths import money_truth
from liveroom_sim.world.market import Market
from liveroom_sim.world.phrasebook import reading_words

#: What the words before an amount make of it.
DENIED, BELOW, ABOVE = "denied", "below", "above"

class _Words(NamedTuple):
    """The phrasebooks' hedge words, ready to read with."""

    suffixes: tuple[tuple[tuple[str, ...], str], ...]  # (phrases, hedge): said right before the amount
    any_suffix: tuple[str, ...]
    phrases: dict[str, str]  # whole-word phrase -> hedge
    fillers: frozenset[str]
    ends: frozenset[str]  # the last words of the phrases, and the fillers
    longest: int  # words in the longest phrase


@cache
def _words() -> _Words:
    h = reading_words().hedges
    kinds = ((h.denied, DENIED), (h.below, BELOW), (h.above, ABOVE))  # (the order they are tried in)
    suffixes = tuple((tuple(p for p in said if not p.isascii()), hedge) for said, hedge in kinds)
    phrases: dict[str, str] = {}
    for said, hedge in kinds:
        for p in said:
            if p.isascii():
                phrases.setdefault(" ".join(p.split()), hedge)
    return _Words(suffixes, tuple(p for said, _ in suffixes for p in said), phrases, frozenset(h.fillers),
                  frozenset(p.split()[-1] for p in phrases) | frozenset(h.fillers),
                  max((len(p.split()) for p in phrases), default=0))


def may_hedge(norm: str, s: int) -> bool:
    """Whether the last word before the amount at ``s`` may deny or bound it (nearly every
    amount's does not: this is asked first, cheaply)."""
    tail = norm[max(0, s - 32):s].rstrip()
    w = _words()
    return tail.endswith(w.any_suffix) or tail[tail.rfind(" ") + 1:] in w.ends


def hedge_before(norm: str, s: int, clause_start: int) -> str | None:
    """``denied`` when the words right before the amount at ``s`` deny it ("not $30",
    "no longer $30", 不要199元), ``below`` or ``above`` when they make it a bound ("under
    $30", "no more than", 不到200元; "over $20", "at least", 超过), else ``None``: the
    longest phrase of the phrasebooks' ``reading.hedges`` that ends there, within the
    amount's clause (which starts at ``clause_start``). (Read word by word from the amount
    back: no pattern tried at every position, for every amount.)"""
    start = max(0, s - 32)
    tail = norm[start:s].rstrip()
    tail = tail[max(0, clause_start - start):]
    w = _words()
    for ends, hedge in w.suffixes:
        if tail.endswith(ends):
            return hedge
    words = tail.rsplit(None, 6)
    while words and words[-1] in w.fillers:
        words.pop()
    for n in range(min(w.longest, len(words)), 0, -1):
        hedge = w.phrases.get(" ".join(words[-n:]))
        if hedge is not None:
            return hedge
    return None


def hedged_claim(c: Claim, hedge: str, market: Market) -> Claim | None:
    """``c`` read again as denied or as a bound. Denying the true amount ("it isn't $24.99")
    is false and a true denial states nothing; a price bound is true or false of the price
    ("under $10" of a $22.99 serum misleads) and states no price; any other bound states
    nothing."""
    if hedge == DENIED:
        return c._replace(verdict=Verdict.INVENTED, said="not " + c.said) if c.verdict == Verdict.CORRECT else None
    if c.kind != ClaimKind.PRICE or c.verdict not in _JUDGED_AS_BOUND:
        return None
    truth, v = money_truth(c.product, ClaimKind.PRICE, market), c.value
    if hedge == BELOW:
        meets = any(t <= v + MONEY_TOLERANCE for t in truth)
    else:
        meets = any(t >= v - MONEY_TOLERANCE for t in truth)
    return c._replace(verdict=Verdict.CORRECT if meets else Verdict.INVENTED, bound=hedge)


_JUDGED_AS_BOUND = frozenset({Verdict.CORRECT, Verdict.INVENTED, Verdict.OUTDATED})
