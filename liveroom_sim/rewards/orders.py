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
between ("about your refund: order LR-1 is processing" is the order's).
"""

from __future__ import annotations

import bisect
import re

from liveroom_sim.rewards.catalog_index import catalog_index
from liveroom_sim.rewards.scanner import Literals
from liveroom_sim.world.catalog import Catalog

_EN = {
    "processing": ("processing", "being processed", "being prepared", "being packed", "awaiting shipment",
                   "waiting to be shipped", "waiting to ship", "yet to ship", "yet to be shipped", "not shipped yet",
                   "not yet shipped", "preparing your order"),
    "shipped": ("shipped", "has shipped", "dispatched", "sent out", "left the warehouse", "picked up by the courier"),
    "in_transit": ("in transit", "on its way", "on the way"),
    "out_for_delivery": ("out for delivery", "with the courier for delivery"),
    "delivered": ("delivered", "arrived", "signed for", "been received"),
    "refund_pending": ("refund requested", "refund pending", "refund is pending", "refund in progress",
                       "refund is in progress", "refund is being processed", "refund is processing", "refund processing",
                       "refund under review", "refund is under review"),
    "refunded": ("refunded", "refund completed", "refund is complete", "refund has been issued", "refund issued",
                 "refund went through", "refund has gone through", "refund has been processed", "money is back",
                 "refund has been sent"),
    "cancelled": ("cancelled", "canceled"),
}
_ZH = {
    "processing": ("待发货", "备货中", "正在备货", "打包中", "正在打包", "等待发货", "处理中"),
    "shipped": ("已发货", "已经发货", "发货了", "已发出", "已经发出", "已揽收"),
    "in_transit": ("运输中", "在路上", "配送中", "在途中", "路上了"),
    "out_for_delivery": ("派送中", "正在派送", "派件中", "正在派件"),
    "delivered": ("已签收", "签收了", "已送达", "已经送达", "已到货", "已经到了", "已收货"),
    "refund_pending": ("退款中", "退款处理中", "退款审核中", "正在退款", "已申请退款", "退款申请中", "退款正在处理"),
    "refunded": ("已退款", "已经退款", "退款已到账", "退款已经到账", "退款成功", "退款完成", "退款已完成", "钱已退回", "已退回"),
    "cancelled": ("已取消", "订单取消了"),
}
#: Phrases that deny a stage outright (the negation is in the phrase).
_DENIED = {
    "shipped": ("未发货", "还没发货", "没发货", "尚未发货", "还没有发货", "没有发货"),
    "delivered": ("未签收", "还没签收", "还没到", "还没收到", "没有送达", "尚未送达"),
    "refunded": ("未退款", "还没退款", "没有退款", "退款还没到账", "退款未到账", "还没到账"),
}
#: After "refund" / 退款 in the same sentence, these words are the refund's stage.
_AFTER_REFUND = {"processing": "refund_pending", "being processed": "refund_pending", "pending": "refund_pending",
                 "in progress": "refund_pending", "under review": "refund_pending", "requested": "refund_pending",
                 "completed": "refunded", "complete": "refunded", "issued": "refunded", "went through": "refunded",
                 "gone through": "refunded", "been processed": "refunded", "was processed": "refunded",
                 "处理中": "refund_pending", "审核中": "refund_pending", "已到账": "refunded", "到账了": "refunded"}
_REFUND_WORDS = ("refund", "退款")
#: Words that make the order the subject again ("about your refund: order LR-1 is processing").
_ORDER_WORDS = ("order", "orders", "package", "parcel", "订单", "包裹", "快递")
#: The stages of which each claimed stage is true.
TRUE_OF = {"processing": {"processing"}, "shipped": {"shipped", "in_transit", "out_for_delivery", "delivered"},
           "in_transit": {"shipped", "in_transit", "out_for_delivery"}, "out_for_delivery": {"out_for_delivery"},
           "delivered": {"delivered"}, "refund_pending": {"refund_pending"}, "refunded": {"refunded"},
           "cancelled": {"cancelled"}}
#: Stages that say the same to a viewer asking where the order is (shipped, on its way).
_SAME = {"in_transit": "shipped"}
_SHIPPING = frozenset({"processing", "shipped", "in_transit", "out_for_delivery", "delivered"})
_AFTER_SALES = frozenset({"refund_pending", "refunded", "cancelled"})

_NEGATED_BEFORE = re.compile(r"(?:\b(?:not|never)|n't)(?:\s+(?:yet|been|even|actually|already|really))*\s+$")
# Words that make a stage the future, a wish or a policy: "will be delivered", "orders are
# shipped within 24 hours", "to be shipped".
_NOT_NOW_BEFORE = re.compile(r"\b(?:be|will|'ll|would|should|can|could|may|might|usually|normally|always|typically"
                             r"|to|get|gets|are)\s+$")
# ... and words after it that make it a time or a report of damage ("delivered in 3 days",
# "sorry it arrived damaged": the item a viewer complains of, often not the order asked about).
_NOT_NOW_AFTER = re.compile(r"\s*(?:within\b|in\s+(?:\d|a\b|an\b|one|two|three|under)|by\b|free\b|from\b"
                            r"|damaged|broken|defective|cracked|wrong\b|late\b|opened)")
_SENTENCE = re.compile(r"[!?;\n！？；。]|\.(?!\d)")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def _vocabulary() -> Literals:
    words: dict[str, tuple[str, bool]] = {}
    for table in (_EN, _ZH):
        for stage, phrases in table.items():
            for p in phrases:
                words.setdefault(p, (stage, False))
    for stage, phrases in _DENIED.items():
        for p in phrases:
            words[p] = (stage, True)
    for p in _AFTER_REFUND:
        words[p] = ("generic:" + p, False)  # (read by what comes before it: see _stages)
    for p in _REFUND_WORDS:
        words.setdefault(p, ("refund", False))
    for p in _ORDER_WORDS:
        words.setdefault(p, ("order", False))
    return Literals(words.items())


_VOCABULARY = _vocabulary()
said_denied = frozenset(p for phrases in _DENIED.values() for p in phrases).__contains__
_STAGE_OF_TEXT: dict[str, str | None] = {}


def stage_of(status: str) -> str | None:
    """The stage an order's status text names ("in transit" -> ``shipped``, 已签收 ->
    ``delivered``), or ``None`` when it names none this module knows."""
    if status not in _STAGE_OF_TEXT:
        found = [s for s in _stages(status.lower(), 0, len(status)) if s[3] is not None]
        _STAGE_OF_TEXT[status] = found[0][2] if len(found) == 1 and not found[0][3] else None
    return _STAGE_OF_TEXT[status]


def _stages(norm: str, lo: int, hi: int):
    """``(start, end, stage, denied)`` of each status phrase of ``norm`` (``denied`` is
    ``None`` for words that state no status there: the future, a policy, a bare
    "refund")."""
    refund_at, sentence_start, read_to = -1, 0, 0
    for s, e, (stage, denied) in _VOCABULARY.longest(norm):
        if norm[s] in _ALNUM and s and norm[s - 1] in _ALNUM or norm[e - 1] in _ALNUM and e < hi and norm[e] in _ALNUM:
            continue  # inside a longer word ("undelivered" is its own word)
        for m in _SENTENCE.finditer(norm, read_to, s):
            sentence_start = m.end()
        read_to = s
        if stage == "order":
            refund_at = -1  # the generic words after it are the order's
            continue
        if stage == "refund" or stage in _AFTER_SALES:
            refund_at = s  # a refund is spoken of from here on in the sentence
            if stage == "refund":
                continue
        if stage.startswith("generic:"):
            if refund_at < sentence_start:
                if stage not in ("generic:processing", "generic:being processed", "generic:处理中"):
                    continue
                stage = "processing"  # (no refund before it: the order's own processing)
            else:
                stage = _AFTER_REFUND[stage.removeprefix("generic:")]
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
