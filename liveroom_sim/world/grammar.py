"""The campaign grammar: each episode's timeline drawn from the patterns of real streams.

No two live-shopping streams run the same show, but most have one shape (see
``docs/worlds.md``): a warm-up with the hero product on stage (the ops team sets the
voice, maybe a lucky bag to hold the first viewers), then product segments, each opening
with its link ("link is up", a ``feature`` event); flash-sale waves on the product on
stage, denser toward the close; coupon drops; lucky-bag and red-envelope draws; a product
selling out and, often, restocked; and changes from operations at any time: new rules, a
new style directive, a changed harness. :func:`draw_timeline` draws one stream of that
shape within the spec's ranges (:class:`~liveroom_sim.world.ranges.CampaignGrammar`)
from the episode's world generator: seeds differ in which events happen, how many, in
what order and when, not only in their values.

The rule updates, style directives and harness changes are the campaign file's own
(their texts are written by people), taken in the file's order; everything else is drawn.
Values keep the draw's promises: a flash price below the price in force, a price change
rounded to the product's ending and never nil, a flash quantity within stock, a coupon
taking less than the cheapest price it covers shows during the stream (a spend-save
saving less than its threshold), every event inside the stream, and nothing on sale,
restocked or featured that is sold out.

Example:
    >>> import numpy as np
    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> from liveroom_sim.world.ranges import CampaignGrammar
    >>> w = load_spec(ENVS_DIR / "LiveRoom-v0.yaml")
    >>> g = CampaignGrammar(timeline="drawn")
    >>> a = draw_timeline(w.campaign, w.catalog, g, 900, np.random.default_rng(1))
    >>> b = draw_timeline(w.campaign, w.catalog, g, 900, np.random.default_rng(2))
    >>> [e.type for e in a.events] != [e.type for e in b.events]
    True
"""

from __future__ import annotations

import math
from typing import get_args

import numpy as np

from liveroom_sim.world import campaign as ev
from liveroom_sim.world.campaign import Campaign
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.datafile import replaced
from liveroom_sim.world.ranges import CampaignGrammar
from liveroom_sim.world.retail import cheaper, dearer

__all__ = ["draw_timeline", "fresh_code"]

#: Most flash-sale waves in one product segment.
WAVES_PER_SEGMENT = 2
#: The shortest flash sale or draw worth running (a shorter one is left out).
SHORTEST_S = 15.0
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def fresh_code(rng: np.random.Generator, taken: set[str]) -> str:
    """A coupon code of four letters and two digits that is not in ``taken`` (added)."""
    while True:
        u = rng.random(5).tolist()  # (one call: numpy's integers() costs ten times as much)
        letters = "".join([_LETTERS[min(int(x * 26), 25)] for x in u[:4]])
        code = f"{letters}{10 + min(int(u[4] * 90), 89)}"
        if code not in taken:
            taken.add(code)
            return code


def draw_timeline(campaign: Campaign, catalog: Catalog, grammar: CampaignGrammar, duration_s: float,
                  rng: np.random.Generator) -> Campaign:
    """One episode's timeline drawn from the grammar (see the module docstring).

    Args:
        campaign: The campaign file: its rule updates, style directives and harness
            changes are the pool the stream takes from.
        catalog: The episode's (drawn) catalog: prices and stock the events start from.
        grammar: The spec's ``world.campaign`` ranges.
        duration_s: The stream's length (every event falls inside it).
        rng: The world's generator.
    """
    return _Draw(catalog, grammar, duration_s, rng).timeline(campaign)


class _Draw:
    """One timeline being drawn: the segments, then each kind of event, then the money."""

    def __init__(self, catalog: Catalog, grammar: CampaignGrammar, duration_s: float, rng: np.random.Generator):
        self.catalog, self.g, self.rng = catalog, grammar, rng
        self.end = math.nextafter(duration_s, 0.0)
        self.duration = duration_s
        self.events: list = []

    # ------------------------------------------------------------------ draws
    # (one rng.random() a draw: numpy's integers() costs ten times as much per call)
    def count(self, bounds: tuple[int, int]) -> int:
        return bounds[0] + min(int(self.rng.random() * (bounds[1] - bounds[0] + 1)), bounds[1] - bounds[0])

    def uniform(self, lo: float, hi: float) -> float:
        return float(lo + (hi - lo) * self.rng.random())

    def index(self, n: int) -> int:
        return min(int(self.rng.random() * n), n - 1)

    def pick(self, seq):
        return seq[self.index(len(seq))]

    def add(self, cls, at: float, **fields) -> None:
        # A copy of the type's blank event with the fields set: they are made here within
        # validated ranges, and a reset should not pay pydantic for two dozen events.
        fields["at"] = math.floor(min(max(at, 0.0), self.end) * 10) / 10
        self.events.append(replaced(_BLANK[cls], fields))

    # --------------------------------------------------------------- the stream
    def timeline(self, campaign: Campaign) -> Campaign:
        g, rng = self.g, self.rng
        on_sale = [p.id for p in self.catalog.products if p.stock > 0] or [campaign.opening_product]
        n = min(self.count(g.segments), len(on_sale))
        products = [on_sale[i] for i in rng.permutation(len(on_sale))[:n].tolist()]
        warmup = min(self.uniform(*g.warmup_s), 0.25 * self.duration)
        shares = (0.7 + 0.6 * rng.random(n)).tolist()
        total, cuts, acc = sum(shares), [], 0.0
        for share in shares:
            acc += share
            cuts.append(warmup + acc / total * (self.duration - warmup))
        # (segment i: its product, when its pitch starts, when the next segment starts)
        segments = [(products[i], warmup if i == 0 else cuts[i - 1], cuts[i] if i < n - 1 else self.end)
                    for i in range(n)]
        for pid, start, _ in segments[1:]:
            self.add(ev.Feature, start, product=pid)
        sold_out: dict[str, float] = {}
        waves = self._flash_sales(segments)
        self._price_changes(segments, waves)
        self._stock_outs(segments, waves, sold_out)
        self._coupons(segments)
        self._giveaways(segments, warmup)
        self._operations(campaign, warmup)
        self.events.sort(key=_at)
        self._money()
        return replaced(campaign, {"opening_product": products[0], "events": tuple(self.events)})

    def _flash_sales(self, segments) -> dict[int, list[tuple[float, float]]]:
        """Flash-sale waves, each segment's chance rising toward the close (the hero's
        segment weighs as the middle one). Returns each segment's waves (start, end)."""
        n = len(segments)
        weights = [n / 2 if i == 0 else i + 1 for i in range(n)]
        per = [0] * n
        for _ in range(self.count(self.g.flash_sales)):
            w = [weight if k < WAVES_PER_SEGMENT else 0.0 for weight, k in zip(weights, per)]
            total = sum(w)
            if not total:
                break
            u, i = self.rng.random() * total, 0
            while i < n - 1 and (u >= w[i] or not w[i]):
                u -= w[i]
                i += 1
            if not w[i]:  # (rounding ran past the last open segment)
                i = max(k for k in range(n) if w[k])
            per[i] += 1
        waves: dict[int, list[tuple[float, float]]] = {}
        for i, (pid, start, stop) in enumerate(segments):
            span = (stop - start) / per[i] if per[i] else 0.0
            for j in range(per[i]):
                at = start + span * (j + self.uniform(0.2, 0.5))
                until = min(at + self.uniform(*self.g.flash_s), start + span * (j + 1) - 5.0, self.end - 1.0)
                if until - at < SHORTEST_S:
                    continue
                self.add(ev.FlashSaleStart, at, product=pid, price=1.0, quantity=self.count(self.g.flash_units))
                self.add(ev.FlashSaleEnd, until, product=pid)
                waves.setdefault(i, []).append((at, until))
        return waves

    def _price_changes(self, segments, waves) -> None:
        """Price changes of the product on stage, early in its segment (before its waves)."""
        lo, hi = self.g.price_change
        for _ in range(self.count(self.g.price_changes)):
            i = self.index(len(segments))
            pid, start, stop = segments[i]
            at = start + (stop - start) * self.uniform(0.02, 0.15)
            if any(a <= at for a, _ in waves.get(i, ())):
                continue
            change = self.uniform(lo, hi) or hi
            self.add(ev.PriceChange, at, product=pid, price=1.0 + change)  # (a share until _money prices it)

    def _stock_outs(self, segments, waves, sold_out: dict[str, float]) -> None:
        """The product on stage sells out after its last wave; often restocked later."""
        for _ in range(self.count(self.g.stock_outs)):
            i = self.index(len(segments))
            pid, start, stop = segments[i]
            if pid in sold_out:
                continue
            after = max([start, *(b for _, b in waves.get(i, ()))])
            if stop - after < 10.0:
                continue
            at = after + (stop - after) * self.uniform(0.2, 0.8)
            self.add(ev.StockOut, at, product=pid)
            sold_out[pid] = at
            back = at + self.uniform(60.0, 180.0)
            if back < self.end - 10.0 and self.rng.random() < self.g.restock:
                self.add(ev.Restock, back, product=pid, quantity=self.count(self.g.restock_units))

    def _coupons(self, segments) -> None:
        g = self.g
        taken: set[str] = set()
        by_category: dict[str, list[str]] = {}
        for p in self.catalog.products:
            if p.stock > 0:
                by_category.setdefault(p.category, []).append(p.id)
        for _ in range(self.count(g.coupons)):
            pid, start, stop = self.pick(segments)
            at = start + (stop - start) * self.uniform(0.05, 0.6)
            kind = self.pick(g.coupon_kinds)
            products: tuple[str, ...] = ()
            if kind != "spend_save":  # a coupon on the product on stage and its kin
                kin = [p for p in by_category[self.catalog.by_id[pid].category] if p != pid]
                extra = [kin[k] for k in self.rng.permutation(len(kin))[:self.count((0, 2))].tolist()]
                products = (pid, *extra)
            code = fresh_code(self.rng, taken)
            self.add(ev.CouponStart, at, code=code, kind=kind, value=1.0, threshold=0.0, products=products)
            until = at + self.uniform(*g.coupon_s)
            if until < self.end - 5.0:
                self.add(ev.CouponEnd, until, code=code)

    def _giveaways(self, segments, warmup: float) -> None:
        g = self.g
        held: list[tuple[float, float]] = []  # (one draw at a time: a room runs one lucky bag)
        for _ in range(self.count(g.giveaways)):
            i = self.index(len(segments))
            pid, start, stop = segments[i]
            # (the hero's segment holds the warm-up: a draw there opens the stream)
            first = 10.0 if i == 0 else start
            at = first + (stop - first) * self.uniform(0.1, 0.7)
            length = min(self.uniform(*g.giveaway_s), self.end - 1.0 - at)
            if length < SHORTEST_S or any(a < at + length and at < b for a, b in held):
                continue
            held.append((at, at + length))
            self.add(ev.Giveaway, at, kind=self.pick(g.giveaway_kinds), product=pid,
                     winners=self.count((1, 5)), duration_s=round(length, 1))

    def _operations(self, campaign: Campaign, warmup: float) -> None:
        """The file's own style directives, rule updates and harness changes, in its order."""
        g = self.g
        styles = [e for e in campaign.events if isinstance(e, ev.StyleDirective)]
        if styles:  # the ops team sets the stream's voice in the warm-up
            self.events.append(replaced(styles[0], {"at": math.floor(self.uniform(5.0, max(6.0, warmup * 0.6)) * 10) / 10}))
        pools = ((styles[1:], g.style_changes, 0.9), ([e for e in campaign.events if isinstance(e, ev.RuleUpdate)],
                 g.rule_updates, 0.7), ([e for e in campaign.events if isinstance(e, ev.HarnessChange)],
                 g.harness_changes, 0.85))
        for pool, counts, latest in pools:
            k = min(self.count(counts), len(pool))
            times = sorted(self.uniform(warmup * 0.5, self.duration * latest) for _ in range(k))
            self.events += [replaced(e, {"at": math.floor(t * 10) / 10}) for e, t in zip(pool, times)]

    # ----------------------------------------------------------------- the money
    def _money(self) -> None:
        """Prices, quantities and coupon values, read off the prices and stock in force
        as the stream goes (the events in time order)."""
        price = {p.id: p.price for p in self.catalog.products}
        stock = {p.id: p.stock for p in self.catalog.products}
        low = dict(price)
        out, skip_end = [], set()
        for e in self.events:
            if isinstance(e, ev.PriceChange):
                before, share = price[e.product], e.price
                new = cheaper(before * share, before) if share < 1 else dearer(before * share, before)
                e = replaced(e, {"price": new})
                price[e.product] = new
            elif isinstance(e, ev.FlashSaleStart):
                if stock[e.product] <= 0:
                    skip_end.add(e.product)
                    continue
                before = price[e.product]
                new = cheaper(before * (1 - self.uniform(*self.g.flash_discount)), before)
                e = replaced(e, {"price": new, "quantity": min(e.quantity, stock[e.product])})
            elif isinstance(e, ev.FlashSaleEnd) and e.product in skip_end:
                skip_end.discard(e.product)
                continue
            elif isinstance(e, ev.StockOut):
                stock[e.product] = 0
            elif isinstance(e, ev.Restock):
                stock[e.product] += e.quantity
            if isinstance(e, (ev.PriceChange, ev.FlashSaleStart)):
                low[e.product] = min(low[e.product], e.price)
            out.append(e)
        prices = sorted(price.values())
        typical = prices[len(prices) // 2]  # (the median's upper half: a round threshold follows)
        self.events = [self._coupon_value(e, low, typical) if isinstance(e, ev.CouponStart) else e for e in out]

    def _coupon_value(self, e: ev.CouponStart, low: dict[str, float], typical: float) -> ev.CouponStart:
        g = self.g
        if e.kind == "percent_off":
            return replaced(e, {"value": float(self.count(g.percent_off))})
        if e.kind == "spend_save":  # spend a round sum above a typical basket, save a share of it
            threshold = float(max(10, math.ceil(typical * self.uniform(1.2, 2.0) / 10) * 10))
            value = float(min(max(1, round(threshold * self.uniform(*g.coupon_cut))), threshold - 1))
            return replaced(e, {"value": value, "threshold": threshold})
        cheapest = min(low[p] for p in e.products)
        value = float(max(1, round(cheapest * self.uniform(*g.coupon_cut))))
        if value >= cheapest:  # never the whole price, even of a product of a few cents
            value = float(math.floor(cheapest / 2)) if cheapest >= 2 else round(cheapest / 2, 2)
        return replaced(e, {"value": value})


def _at(event) -> float:
    return event.at


def _blank(cls):
    """An event of type ``cls`` with no fields but its tag and defaults (copied by ``add``)."""
    return cls.model_construct(type=get_args(cls.model_fields["type"].annotation)[0])


_BLANK = {cls: _blank(cls) for cls in (ev.Feature, ev.FlashSaleStart, ev.FlashSaleEnd, ev.PriceChange, ev.StockOut,
                                       ev.Restock, ev.CouponStart, ev.CouponEnd, ev.Giveaway)}
