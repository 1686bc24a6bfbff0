"""Order-status claims: what a reply says of where an earlier order is ("it has shipped",
"out for delivery", "your refund went through", 已发货, 已签收, 退款已到账), checked against
the status ``get_order_status`` returns now.

A status phrase is read as one **stage** of an order's life: ``processing`` (not shipped
yet), ``shipped`` (it left), ``in_transit`` (on its way), ``out_for_delivery``,
``delivered``, ``refund_pending``, ``refunded``, ``cancelled``. The order's own status
(its catalog text, "in transit", 运输中) is read the same way. A claimed stage is
correct when it is true of the order now: "shipped" is true of an order on its way, out
for delivery or delivered (it did ship), "in transit" not of a delivered one, "out for
delivery" only of one out for delivery; a negated stage ("hasn't shipped yet", 还没发货,
"not refunded") when the stage is not true. While a refund is under way the order's
shipping is not known, so shipping words are not checked then. A claim of the order's
own stage (or "shipped" of one in transit) states its status, as the answer owes.

Only a reply about an order says anything of its status: the question's order, or an
order id the reply names (the nearest named before the phrase, else the first after it
in its sentence). Words about the future or a policy ("will be delivered", "ships
within 24 hours", "to be shipped") state no status; "processing", "pending", "went
through" after "refund" in the same sentence are the refund's, unless "order" comes
between as a new subject ("about your refund: order LR-1 is processing" is the order's;
"the refund on order LR-1 is pending" the refund's).

The words are data: the ``reading.orders`` section of each phrasebook.
"""

from __future__ import annotations

import bisect
import re
from functools import cache, lru_cache
from typing import NamedTuple

from liveroom_sim.rewards.catalog_index import catalog_index
from liveroom_sim.rewards.scanner import Literals
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.phrasebook import reading_words

#: The stages of which each claimed stage is true.
TRUE_OF = {"processing": {"processing"}, "shipped": {"shipped", "in_transit", "out_for_delivery", "delivered"},
           "in_transit": {"shipped", "in_transit", "out_for_delivery"}, "out_for_delivery": {"out_for_delivery"},
           "delivered": {"delivered"}, "refund_pending": {"refund_pending"}, "refunded": {"refunded"},
           "cancelled": {"cancelled"}}
#: Stages that say the same to a viewer asking where the order is (shipped, on its way).
_SAME = {"in_transit": "shipped"}
_SHIPPING = frozenset({"processing", "shipped", "in_transit", "out_for_delivery", "delivered"})
_AFTER_SALES = frozenset({"refund_pending", "refunded", "cancelled"})

#: "order" as the refund's complement ("the refund on order LR-1"), not a new subject.
_OF_BEFORE = re.compile(r"\b(?:on|for|of)\s+$")
_NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never|no)|n't)(?:\s+(?:yet|been|even|actually|already|really))*\s+$")
# Words that make a stage the future, a wish or a policy: "will be delivered", "orders are
# shipped within 24 hours", "to be shipped".
_NOT_NOW_BEFORE = re.compile(r"\b(?:be|will|'ll|would|should|can|could|may|might|usually|normally|always|typically"
                             r"|to|get|gets|are)\s+$")
# ... and words after it that make it a time or a report of damage ("delivered in 3 days",
# "sorry it arrived damaged": the item a viewer complains of, often not the order asked about).
_NOT_NOW_AFTER = re.compile(r"\s*(?:within\b|in\s+(?:\d|a\b|an\b|one|two|three|under)|by\b|free\b|from\b"
                            r"|damaged|broken|defective|cracked|wrong\b|late\b|opened)")
_SENTENCE = re.compile(r"[!?;\n！？；。：]|[.:](?!\d)")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


class _Vocabulary(NamedTuple):
    """The phrasebooks' order words, ready to read with."""

    literals: Literals  # phrase -> (stage or "refund" / "order" / "generic:<word>", denied)
    denied: frozenset[str]  # the phrases that deny a stage outright
    after_refund: dict[str, str]  # word -> the refund's stage it names after "refund"
    own: dict[str, str]  # a word after "refund" that, with no refund before it, is this stage


@cache
def _vocabulary() -> _Vocabulary:
    o = reading_words().orders
    words: dict[str, tuple[str, bool]] = {}
    own: dict[str, str] = {}
    for stage, phrases in o.stages.items():
        for p in phrases:
            words.setdefault(p, (stage, False))
            own.setdefault(p, stage)
    for stage, phrases in o.denied.items():
        for p in phrases:
            words[p] = (stage, True)
    for p in o.after_refund:
        words[p] = ("generic:" + p, False)  # (read by what comes before it: see _stages)
    for p in o.refund:
        words.setdefault(p, ("refund", False))
    for p in o.order:
        words.setdefault(p, ("order", False))
    return _Vocabulary(Literals(words.items()), frozenset(p for phrases in o.denied.values() for p in phrases),
                       dict(o.after_refund), {p: own[p] for p in o.after_refund if p in own})


def said_denied(phrase: str) -> bool:
    """Whether ``phrase`` is one that denies a stage outright (还没发货)."""
    return phrase in _vocabulary().denied


@lru_cache(maxsize=1024)
def stage_of(status: str) -> str | None:
    """The stage an order's status text names ("in transit" -> ``shipped``, 已签收 ->
    ``delivered``), or ``None`` when it names none this module knows."""
    found = [s for s in _stages(status.lower(), 0, len(status)) if s[3] is not None]
    return found[0][2] if len(found) == 1 and not found[0][3] else None


def _stages(norm: str, lo: int, hi: int):
    """``(start, end, stage, denied)`` of each status phrase of ``norm`` (``denied`` is
    ``None`` for words that state no status there: the future, a policy, a bare
    "refund")."""
    refund_at, sentence_start, read_to = -1, 0, 0
    vocabulary = _vocabulary()
    for s, e, (stage, denied) in vocabulary.literals.longest(norm):
        if norm[s] in _ALNUM and s and norm[s - 1] in _ALNUM or norm[e - 1] in _ALNUM and e < hi and norm[e] in _ALNUM:
            continue  # inside a longer word ("undelivered" is its own word)
        for m in _SENTENCE.finditer(norm, read_to, s):
            sentence_start = m.end()
        read_to = s
        if stage == "order":
            if not _OF_BEFORE.search(norm[max(lo, s - 5):s]):  # (not "the refund on order LR-1 is pending")
                refund_at = -1  # the generic words after it are the order's
            continue
        if stage == "refund" or stage in _AFTER_SALES:
            refund_at = s  # a refund is spoken of from here on in the sentence
            if stage == "refund":
                continue
        if stage.startswith("generic:"):
            word = stage.removeprefix("generic:")
            if refund_at < sentence_start:
                stage = vocabulary.own.get(word)  # (no refund before it: the order's own stage, if any)
                if stage is None:
                    continue
            else:
                stage = vocabulary.after_refund[word]
        before = norm[max(lo, s - 24):s]
        if not denied and _NOT_NOW_BEFORE.search(before) or _NOT_NOW_AFTER.match(norm, e):
            yield s, e, stage, None
            continue
        yield s, e, stage, denied or bool(_NEGATED_BEFORE.search(before))


def order_claims(norm: str, catalog: Catalog, asked_order: str | None, named_over, max_claims: int):
    """``(order id, stage, denied, said, correct, states)`` of each status claim of the
    reply (see the module docstring); ``named_over(start, end)`` tells whether a
    product's name holds a span (its words claim nothing)."""
    named = _orders_named(norm, catalog)
    if asked_order is None and not named:
        return []
    out = []
    for s, e, stage, denied in _stages(norm, 0, len(norm)):
        if denied is None or named_over(s, e):
            continue
        order_id = _order_at(named, s, norm) or asked_order
        if order_id is None:
            continue
        truth = stage_of(catalog.order(order_id).status)
        if truth is None or truth in _AFTER_SALES and stage in _SHIPPING:
            continue  # a status this reader does not know, or a refund's shipping: not judged
        holds = truth in TRUE_OF[stage]
        states = not denied and _SAME.get(stage, stage) == _SAME.get(truth, truth)
        said = norm[s:e] if not denied or said_denied(norm[s:e]) else "not " + norm[s:e]
        out.append((order_id, stage, denied, said, holds != denied, states))
        if len(out) >= max_claims:
            break
    return out


def may_name_an_order(norm: str, catalog: Catalog) -> bool:
    """Whether ``norm`` may name one of the catalog's orders: it holds the first three
    characters of one (a few substring tests; most replies name none)."""
    if not catalog.orders:
        return False
    for h in catalog_index(catalog).order_heads:
        if h in norm:
            return True
    return False


def _orders_named(norm: str, catalog: Catalog) -> list[tuple[int, str]]:
    if not may_name_an_order(norm, catalog):
        return []
    return [(s, oid) for s, _, oid in catalog_index(catalog).order_ids.longest(norm)]


def _order_at(named: list[tuple[int, str]], pos: int, norm: str) -> str | None:
    """The order named nearest before ``pos``, else the first named after it in its sentence."""
    i = bisect.bisect_left(named, (pos, ""))
    if i:
        return named[i - 1][1]
    if named and not _SENTENCE.search(norm, pos, named[0][0]):
        return named[0][1]
    return None


def orders_at(norm: str, catalog: Catalog, asked_order: str | None):
    """The order a number at a position of ``norm`` is about, as a function of the position:
    the order named nearest before it (else the first after it in its sentence), else the
    question's ("order LR-1 arrives in 2 days, LR-2 in 5 days": 5 days is LR-2's)."""
    named = _orders_named(norm, catalog)
    if not named:
        return lambda pos: asked_order
    return lambda pos: _order_at(named, pos, norm) or asked_order
