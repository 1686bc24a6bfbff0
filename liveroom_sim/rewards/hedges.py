"""Amounts said with a denial or as a bound: "not $30, it's $24.99", "no longer $30",
不要199元 (denied), "under $30", "no more than", 不到200元 (a bound below), "over $20", "at
least", 超过 (a bound above). A denied amount states nothing, and denying the true amount
is false; a price said as a bound is judged against the price and states no price (see
:func:`hedged_claim`). Read word by word from the amount back: no pattern is tried at
every position, for every amount."""

from __future__ import annotations

from typing import TYPE_CHECKING

from liveroom_sim.rewards.claim import MONEY_TOLERANCE, Claim, ClaimKind, Verdict
from liveroom_sim.rewards.truths import money_truth
from liveroom_sim.world.market import Market

if TYPE_CHECKING:
    from liveroom_sim.rewards.claims import ReplyLayout

#: What the words before an amount make of it.
DENIED, BELOW, ABOVE = "denied", "below", "above"

_DENYING = frozenset({"not", "never", "isn't", "aren't", "wasn't", "won't", "doesn't", "don't", "ain't"})
_FILLERS = frozenset({"be", "been", "at", "even", "cost", "costs", "priced", "for"})  # "not even $30", "isn't priced at"
_ZH_DENYING = ("不是", "不要", "并非", "不再是", "不再", "不卖")
_ZH_BELOW = ("不到", "低于", "少于", "不超过", "不高于")  # (before _ZH_ABOVE: 不超过 ends with 超过)
_ZH_ABOVE = ("超过", "高于", "多于", "至少")
_HEDGE_ENDS = _DENYING | _FILLERS | {"longer", "under", "below", "over", "above", "than", "most", "least"}
_ZH_HEDGES = _ZH_DENYING + _ZH_BELOW + _ZH_ABOVE


def may_hedge(norm: str, s: int) -> bool:
    """Whether the last word before the amount at ``s`` may deny or bound it (nearly every
    amount's does not: this is asked first, cheaply)."""
    tail = norm[max(0, s - 32):s].rstrip()
    return tail.endswith(_ZH_HEDGES) or tail[tail.rfind(" ") + 1:] in _HEDGE_ENDS


def hedge_before(norm: str, s: int, r: ReplyLayout) -> str | None:
    """``denied`` when the words right before the amount at ``s`` deny it ("not $30",
    "no longer $30", 不要199元), ``below`` or ``above`` when they make it a bound ("under
    $30", "no more than", 不到200元; "over $20", "at least", 超过), else ``None``. (Read word
    by word from the amount back: no pattern tried at every position, for every amount.)"""
    start = max(0, s - 32)
    tail = norm[start:s].rstrip()
    tail = tail[max(0, r.clause(s)[0] - start):]
    for ends, hedge in ((_ZH_DENYING, DENIED), (_ZH_BELOW, BELOW), (_ZH_ABOVE, ABOVE)):
        if tail.endswith(ends):
            return hedge
    words = tail.rsplit(None, 6)
    while words and words[-1] in _FILLERS:
        words.pop()
    if not words:
        return None
    last, word_before = words[-1], words[-2] if len(words) > 1 else ""
    if last in _DENYING or last == "longer" and word_before == "no":
        return DENIED
    if last in ("under", "below") or last == "most" and word_before == "at":
        return BELOW
    if last in ("over", "above") or last == "least" and word_before == "at":
        return ABOVE
    if last == "than" and word_before in ("less", "cheaper", "fewer", "more"):
        below = word_before != "more"
        if len(words) > 2 and words[-3] in ("no", "not"):  # "no more than", "not less than"
            below = not below
        return BELOW if below else ABOVE
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
