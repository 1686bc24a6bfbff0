"""What is true of a product's money attributes now, for the claim readers: the price,
list price, shipping fee, coupon values and the price after a coupon
(:func:`money_truth`), and the discounts in force (:func:`discounts`), read from the market
as of now."""

from __future__ import annotations

from liveroom_sim.rewards.claim import ClaimKind as K
from liveroom_sim.world.market import Market, apply_coupon

# The kinds money_truth tells apart, bound once: a member of an Enum class is looked up
# through its metaclass (~50 ns in Python 3.11), four times per amount.
_LIST_PRICE, _SHIPPING_FEE, _COUPON_VALUE, _PRICE_AFTER_COUPON = \
    K.LIST_PRICE, K.SHIPPING_FEE, K.COUPON_VALUE, K.PRICE_AFTER_COUPON


def near(value: float, candidates, tolerance: float) -> bool:
    """Whether ``value`` is within ``tolerance`` of one of ``candidates``."""
    for c in candidates:
        if -tolerance <= value - c <= tolerance:
            return True
    return False


def money_truth(pid: str, kind: str, market: Market) -> set[float]:
    """True money values of one attribute of one product now. (Not memoised: a few set
    operations, asked a few times a reply; the market's memo did not pay in
    ``benchmarks/bench_rewards.py``.)"""
    p = market.catalog.by_id[pid]
    price = market.price(pid)
    # (the coupons only for the two kinds that read them: most amounts are a price)
    if kind == _LIST_PRICE:
        truth = {p.list_price}
    elif kind == _SHIPPING_FEE:
        truth = {p.shipping.fee}
    elif kind == _COUPON_VALUE:
        coupons = market.coupons_for(pid)
        truth = {c.value for c in coupons if c.kind != "percent_off"} | {c.threshold for c in coupons if c.threshold}
        # "save $10", 便宜50元: also what is saved against the list price (as in discounts), a
        # price before a change this stream or the one a flash sale runs below, or with a coupon
        truth.update(round(was - price, 2) for was in (p.list_price, *market.old_prices.get(pid, ()), market.prices[pid])
                     if was > price)
        truth.update(round(price - apply_coupon(c, price), 2) for c in coupons)
    elif kind == _PRICE_AFTER_COUPON:
        truth = {round(apply_coupon(c, price), 2) for c in market.coupons_for(pid)} | {market.price_after_coupons(pid)}
    else:
        truth = {price}
    return truth


def discounts(pid: str, market: Market) -> set[float]:
    """The percentages off one product now: its percent-off coupons, and its price against
    its list price (rounded and as is)."""
    p = market.catalog.by_id[pid]
    price = market.price(pid)
    out = {c.value for c in market.coupons_for(pid) if c.kind == "percent_off"}
    if p.list_price > price:
        out.add(round((1 - price / p.list_price) * 100))
        out.add((1 - price / p.list_price) * 100)
    return out
