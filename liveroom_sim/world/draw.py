"""Drawn worlds: each episode's own prices, stock, coupons, event times and featured order.

A spec's catalog and campaign files hold *base values*. The spec's ``world:`` section
(:class:`~liveroom_sim.world.ranges.WorldRanges`) says how far each episode may stray
from them; :func:`draw_world` draws one episode's catalog and campaign within those
ranges from a generator of its own. What a policy memorised about one seed's world is
then wrong about the next, while the ground truth of each episode stays exact: the
market, the tools and the reward all read the drawn world. With every range at its
default the world is *pinned*: the draw returns the files' values unchanged (the golden
reward cases are scored on it).

The draw keeps a catalog coherent: a list price stays above the price (or equal, for a
product the file sells at list price); a price keeps the file's ending (``.99``, ``.9``,
whole yuan); a sold-out product stays sold out; a flash price stays below the price in
force; a price change keeps its direction; a coupon takes less off than the cheapest
price it applies to (a spend-save coupon less than its threshold); events keep their
order and stay inside the stream; when the featured order is shuffled, every event about
a featured product follows it to its new slot.

Example:
    >>> import numpy as np
    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> w = load_spec(ENVS_DIR / "LiveRoom-v0.yaml")
    >>> a, _ = draw_world(w.catalog, w.campaign, w.spec.world, 900, np.random.default_rng(1))
    >>> b, _ = draw_world(w.catalog, w.campaign, w.spec.world, 900, np.random.default_rng(2))
    >>> a.by_id["sk-serum-01"].price != b.by_id["sk-serum-01"].price
    True
    >>> draw_world(w.catalog, w.campaign, WorldRanges(), 900, np.random.default_rng(1))[0] is w.catalog
    True
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from liveroom_sim.world import campaign as ev
from liveroom_sim.world.campaign import Campaign
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.datafile import replaced
from liveroom_sim.world.grammar import draw_timeline, fresh_code
from liveroom_sim.world.retail import ending, retail, rounded
from liveroom_sim.world.ranges import Bounds, CouponRanges, ProductSpread, Spread, WorldRanges

__all__ = ["WorldRanges", "draw_world", "retail"]

def draw_world(catalog: Catalog, campaign: Campaign, ranges: WorldRanges, duration_s: float,
               rng: np.random.Generator, plan: CatalogPlan | None = None) -> tuple[Catalog, Campaign]:
    """One episode's catalog and campaign, drawn within ``ranges`` (see the module docstring).

    Args:
        catalog: The catalog file's products (base values).
        campaign: The campaign file's timeline (base values).
        ranges: The spec's ``world:`` section.
        duration_s: The stream's length: drawn event times stay inside it.
        rng: The world's own generator (the same generator state gives the same world).
        plan: :func:`catalog_plan` of ``catalog`` and ``ranges``, when the caller keeps
            it (a spec's world does: :attr:`liveroom_sim.spec.World.catalog_plan`).

    Returns:
        The drawn ``(catalog, campaign)``; the very objects given when ``ranges`` pins
        everything.
    """
    if ranges.pinned:
        return catalog, campaign
    drawn = _draw_catalog(catalog, ranges, rng, plan or catalog_plan(catalog, ranges))
    if not ranges.campaign.pinned:  # the timeline itself drawn from the campaign grammar
        return drawn, draw_timeline(campaign, drawn, ranges.campaign, duration_s, rng)
    base_prices = {p.id: p.price for p in catalog.products}
    new_campaign = _draw_campaign(campaign, drawn, base_prices, ranges, duration_s, rng)
    return drawn, new_campaign


# ------------------------------------------------------------------------- prices
def _within(price: float, bounds: Bounds | None, unit: float) -> float:
    """Move a rounded price back inside its range by whole units (if the range allows)."""
    if bounds is None:
        return price
    lo, hi = bounds
    while price < lo and price + unit <= hi:
        price = round(price + unit, 2)
    while price > hi and price - unit >= lo:
        price = round(price - unit, 2)
    if lo <= price <= hi:
        return price
    lo_cents, hi_cents = math.ceil(lo * 100 - 1e-6) / 100, math.floor(hi * 100 + 1e-6) / 100
    return min(max(price, lo_cents), hi_cents) if lo_cents <= hi_cents else round(lo, 2)


def _draw_catalog(catalog: Catalog, ranges: WorldRanges, rng: np.random.Generator, plan: CatalogPlan) -> Catalog:
    # Every uniform draw of the catalog at once: the same numbers, in the same order, as
    # one scalar draw per site. ``low + span * random()`` is what numpy's ``uniform``
    # computes for each element (the same doubles in the same order, the same two float
    # operations), without its broadcasting of array bounds, which cost four times as much.
    u = (plan.lows + plan.spans * rng.random(len(plan.lows))).tolist() if len(plan.lows) else []
    prices_pinned = ranges.prices.pinned
    products = []
    for p, price_site, list_site, stock_site, endings in plan.products:
        value, bounds = _drawn(price_site, p.price, u)
        price = p.price if prices_pinned else _within(rounded(value, endings[0]), bounds, 1.0)
        list_price = _list_price(p.price, p.list_price, price, list_site, u, endings[1])
        stock = p.stock if stock_site is None else _stock(_drawn(stock_site, float(p.stock), u))
        products.append(replaced(p, {"price": price, "list_price": list_price, "stock": stock}))
    return catalog.with_products(tuple(products))


class CatalogPlan(NamedTuple):
    """Where a catalog's draw takes its uniform numbers: the bounds of each draw in the
    order the draw makes them, and per product the sites of its price, list markup and
    stock (``None`` where nothing is drawn) and the endings (``.99``) of its file's price
    and list price, which the drawn ones keep. A site is ``(index, bounds, relative)``: the
    number is ``u[index]``, times the base when ``relative`` (a jitter), inside
    ``bounds`` when they are absolute. It depends on the catalog file's values and the
    spec's ranges alone, never on the seed."""

    lows: np.ndarray
    spans: np.ndarray  # highs - lows, as numpy's uniform computes them
    products: tuple[tuple, ...]


def catalog_plan(catalog: Catalog, ranges: WorldRanges) -> CatalogPlan:
    """Where the draw of ``catalog`` within ``ranges`` takes its numbers (see
    :class:`CatalogPlan`): the same for every episode of a spec, which keeps it."""
    lows: list[float] = []
    highs: list[float] = []

    def site(spread: Spread, product_id: str | None) -> tuple | None:
        # What Spread.draw / ProductSpread.draw_for draw: an absolute range (the product's
        # own, else the spread's), else a jitter around the base, else nothing.
        bounds = spread.products.get(product_id, spread.range) if isinstance(spread, ProductSpread) else spread.range
        if bounds is not None:
            lows.append(bounds[0])
            highs.append(bounds[1])
            return (len(lows) - 1, bounds, False)
        if spread.jitter:
            lows.append(1 - spread.jitter)
            highs.append(1 + spread.jitter)
            return (len(lows) - 1, None, True)
        return None

    products = []
    for p in catalog.products:
        price_site = site(ranges.prices, p.id)
        list_site = site(ranges.list_prices, None) if p.list_price > p.price else None
        # (a product sold out in the file stays sold out: the campaign's restocks expect it)
        stock_site = site(ranges.stock, p.id) if p.stock != 0 and not ranges.stock.pinned else None
        products.append((p, price_site, list_site, stock_site, (ending(p.price), ending(p.list_price))))
    return CatalogPlan(np.array(lows, dtype=float), np.array(highs, dtype=float) - np.array(lows, dtype=float),
                       tuple(products))


def _drawn(site: tuple | None, base: float, u: list[float]) -> tuple[float, Bounds | None]:
    """A site's value (the base when nothing is drawn there) and its absolute bounds."""
    if site is None:
        return base, None
    index, bounds, relative = site
    return (base * u[index] if relative else u[index]), bounds


def _list_price(base_price: float, base_list: float, price: float, site: tuple | None, u: list[float],
                ending: float) -> float:
    if base_list <= base_price:
        return price  # sold at list price in the file: no reference price to invent
    markup, bounds = _drawn(site, base_list / base_price, u)
    if bounds is not None:  # an absolute markup range
        markup = max(markup, 1.0)
    list_price = rounded(price * markup, ending)  # (the ending of base_list)
    while list_price <= price:
        list_price = round(list_price + 1.0, 2)
    return list_price


def _stock(drawn: tuple[float, Bounds | None]) -> int:
    value, bounds = drawn
    stock = int(round(value))
    if bounds is not None:
        stock = min(max(stock, math.ceil(bounds[0])), math.floor(bounds[1]))
    return max(stock, 1)


# ----------------------------------------------------------------------- campaign
def _draw_campaign(campaign: Campaign, catalog: Catalog, base_prices: dict[str, float], ranges: WorldRanges,
                   duration_s: float, rng: np.random.Generator) -> Campaign:
    swap = _featured_swap(campaign, ranges.featured_order, rng)
    times = _times([e.at for e in campaign.events], ranges.events.time_jitter_s, duration_s, rng)
    codes = _codes(campaign, ranges.coupons, rng)
    # Each event's new field values, gathered pass by pass and copied onto the event once.
    # First pass: products and times (what the events are about, and when); second:
    # the money, once every price the stream will show is known.
    updates = [_moved(e, at, swap, codes) for e, at in zip(campaign.events, times)]
    _priced(updates, campaign.events, catalog, base_prices)
    lowest = None
    for update, old in zip(updates, campaign.events):
        if isinstance(old, ev.CouponStart):
            if lowest is None:  # (the coupons change no price: one reading serves them all)
                lowest = _lowest_prices(catalog, updates, campaign.events)
            _coupon_value(update, old, lowest, ranges.coupons, rng)
    moved = tuple(replaced(old, _noted(update, old)) for update, old in zip(updates, campaign.events))
    opening = swap.get(campaign.opening_product, campaign.opening_product)
    # Not validated again (a tenth of the draw): the events are the file's, validated, with
    # values the draw keeps valid; sorted by time as Campaign's validator does (the drawn
    # times keep the events' order, so this keeps it too).
    return replaced(campaign, {"opening_product": opening, "events": tuple(sorted(moved, key=_at))})


def _at(event) -> float:
    return event.at


def _featured_swap(campaign: Campaign, order: str, rng: np.random.Generator) -> dict[str, str]:
    """Which product takes each featured product's slots (identity when ``fixed``)."""
    featured = list(dict.fromkeys(
        [campaign.opening_product, *(e.product for e in campaign.events if isinstance(e, ev.Feature))]))
    if order == "fixed" or len(featured) < 2:
        return {}
    shuffled = [featured[i] for i in rng.permutation(len(featured))]
    return {old: new for old, new in zip(featured, shuffled) if old != new}


def _times(times: list[float], jitter: float, duration_s: float, rng: np.random.Generator) -> list[float]:
    """Jittered times, sorted back onto the events in their order, inside the stream."""
    if not jitter or not times:
        return times
    last = math.nextafter(duration_s, 0.0)
    # (one draw per event, made at once: the same numbers as one call per event)
    drawn = [min(max(t + u, 0.0), last) for t, u in zip(times, rng.uniform(-jitter, jitter, size=len(times)).tolist())]
    return [math.floor(t * 10) / 10 for t in sorted(drawn)]  # floor: never rounds up out of the stream


def _codes(campaign: Campaign, coupons: CouponRanges, rng: np.random.Generator) -> dict[str, str]:
    if coupons.codes == "fixed":
        return {}
    old = list(dict.fromkeys(e.code for e in campaign.events if isinstance(e, ev.CouponStart)))
    taken = set(old)
    return {code: fresh_code(rng, taken) for code in old}


def _moved(event, at: float, swap: dict[str, str], codes: dict[str, str]) -> dict[str, Any]:
    """An event's new time, and its products and coupon code after the swaps."""
    update: dict[str, Any] = {"at": at}
    fields = event.__dict__  # (a model's fields: getattr on a field an event lacks raises inside pydantic, slowly)
    pid = fields.get("product")
    if pid in swap:
        update["product"] = swap[pid]
    if fields.get("products", ()):
        update["products"] = tuple(swap.get(p, p) for p in event.products)
    if fields.get("code") in codes:
        update["code"] = codes[event.code]
    return update


def _noted(update: dict[str, Any], old) -> dict[str, Any]:
    """Keep an event's note only while what it is about is the file's: a note written
    about the hoodie's $10 coupon would mislead about another product or value."""
    fields = old.__dict__
    for k, value in update.items():
        if k != "at" and value != fields[k]:
            return {**update, "note": ""}
    return update


def _priced(updates: list[dict[str, Any]], originals: tuple, catalog: Catalog, base_prices: dict[str, float]) -> None:
    """Price changes and flash sales re-priced relative to the drawn prices in force
    (into each event's ``updates``)."""
    base_now = {}  # (product in its slot) -> the file's price in force for that slot
    drawn_now = {p.id: p.price for p in catalog.products}
    for update, old in zip(updates, originals):
        if isinstance(old, ev.PriceChange):
            product = update.get("product", old.product)
            before_base = base_now.get(old.product, base_prices[old.product])
            before = drawn_now[product]
            price = retail(before * old.price / before_base, before)
            if old.price < before_base:
                while price >= before and price > 1.0:
                    price = round(price - 1.0, 2)
                price = price if price < before else round(before * old.price / before_base, 2)
            elif old.price > before_base:
                while price <= before:
                    price = round(price + 1.0, 2)
            else:
                price = before
            base_now[old.product] = old.price
            drawn_now[product] = price
            update["price"] = price
        elif isinstance(old, ev.FlashSaleStart):
            product = update.get("product", old.product)
            before_base = base_now.get(old.product, base_prices[old.product])
            before = drawn_now[product]
            ratio = old.price / before_base
            price = retail(before * ratio, before)
            while price >= before and price > 1.0:
                price = round(price - 1.0, 2)
            if price >= before:
                price = max(round(before * min(ratio, 0.9), 2), 0.01)
            stock = catalog.by_id[product].stock
            qty = min(old.quantity, stock) if old.quantity is not None and stock > 0 else old.quantity
            update["price"], update["quantity"] = price, qty


def _lowest_prices(catalog: Catalog, updates: list[dict[str, Any]], originals: tuple) -> dict[str, float]:
    """The lowest price each product shows during the stream (changes and flash sales)."""
    low = {p.id: p.price for p in catalog.products}
    for update, old in zip(updates, originals):
        if isinstance(old, (ev.PriceChange, ev.FlashSaleStart)):
            product = update.get("product", old.product)
            low[product] = min(low[product], update["price"])
    return low


def _coupon_value(update: dict[str, Any], event: ev.CouponStart, low: dict[str, float], coupons: CouponRanges,
                  rng: np.random.Generator) -> None:
    """A coupon's drawn value (into its ``update``; ``event`` is the file's coupon)."""
    bounds = coupons.by_code.get(event.code)
    pinned = bounds is None and coupons.value.pinned
    if pinned and event.kind == "percent_off":
        return
    value = event.value if pinned else (float(rng.uniform(*bounds)) if bounds is not None
                                        else coupons.value.draw(event.value, rng))
    if event.kind == "percent_off":
        value = float(min(max(round(value), 1), 90))
    else:
        covered = update.get("products", event.products) or tuple(low)
        cap = min(low[p] for p in covered) if event.kind == "amount_off" else event.threshold
        value = value if pinned else float(max(round(value), 1))
        # A coupon never takes the whole price (or the whole threshold) off, even a pinned
        # one when the prices it applies to were drawn below it.
        if value >= cap:
            value = float(math.floor(cap / 2)) if cap >= 2 else round(cap / 2, 2)
    if value != event.value:
        update["value"] = value
