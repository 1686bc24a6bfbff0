"""The market as of now: prices, stock, sales, coupons, featured product, rules, style.

One :class:`Market` per episode. Campaign events and purchases change it; tools and the
reward model read it. It keeps the history the reward model needs to tell an outdated
fact (the price before a change) from an invented one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from liveroom_sim.world import campaign as ev
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.rules import RuleSet


@dataclass(slots=True)
class Style:
    """The style directive in force."""

    tone: str | None = None
    max_chars: int | None = None
    slogan: str | None = None
    avoid_topics: tuple[str, ...] = ()


@dataclass(slots=True)
class Market:
    """Mutable state of the world during one episode."""

    catalog: Catalog
    featured: str
    rules: RuleSet
    prices: dict[str, float] = field(default_factory=dict)
    stock: dict[str, int] = field(default_factory=dict)
    old_prices: dict[str, list[float]] = field(default_factory=dict)
    flash: dict[str, tuple[float, int | None]] = field(default_factory=dict)
    coupons: dict[str, ev.CouponStart] = field(default_factory=dict)
    expired_codes: set[str] = field(default_factory=set)
    style: Style = field(default_factory=Style)
    version: int = 0
    memo: dict = field(default_factory=dict)  # derived values, valid for one version
    #: Derived values that no market event changes (of the catalog: products, policies,
    #: orders; tool results keyed on the harness version): valid all episode, never cleared.
    lasting: dict = field(default_factory=dict)

    @classmethod
    def open(cls, catalog: Catalog, featured: str, rules: RuleSet) -> "Market":
        """The market at the start of a stream."""
        return cls(
            catalog=catalog,
            featured=featured,
            rules=rules,
            prices={p.id: p.price for p in catalog.products},
            stock={p.id: p.stock for p in catalog.products},
            old_prices={p.id: [] for p in catalog.products},
        )

    def price(self, product_id: str) -> float:
        """The price a viewer pays now before coupons (the flash price during a sale)."""
        sale = self.flash.get(product_id)
        return sale[0] if sale else self.prices[product_id]

    def coupons_for(self, product_id: str) -> list[ev.CouponStart]:
        return [c for c in self.coupons.values() if not c.products or product_id in c.products]

    def price_after_coupons(self, product_id: str) -> float:
        """The lowest price one unit reaches with the best single coupon now."""
        base = self.price(product_id)
        best = base
        for c in self.coupons_for(product_id):
            best = min(best, apply_coupon(c, base))
        return round(best, 2)

    def buy(self, product_id: str) -> bool:
        """Take one unit from stock (and from a flash sale's quantity); False if sold out."""
        if self.stock.get(product_id, 0) <= 0:
            return False
        self.stock[product_id] -= 1
        sale = self.flash.get(product_id)
        if sale and sale[1] is not None:
            left = sale[1] - 1
            if left <= 0:
                self._end_sale(product_id)
            else:
                self.flash[product_id] = (sale[0], left)
        self._changed()
        return True

    def apply(self, event) -> None:
        """Apply one campaign event (not harness changes: the room routes those)."""
        self._changed()
        match event:
            case ev.PriceChange(product=pid, price=price):
                if self.prices[pid] != price:
                    self.old_prices[pid].append(self.prices[pid])
                self.prices[pid] = price
            case ev.FlashSaleStart(product=pid, price=price, quantity=qty):
                self.flash[pid] = (price, qty)
            case ev.FlashSaleEnd(product=pid):
                self._end_sale(pid)
            case ev.CouponStart(code=code):
                self.coupons[code] = event
                self.expired_codes.discard(code)
            case ev.CouponEnd(code=code):
                if self.coupons.pop(code, None) is not None:
                    self.expired_codes.add(code)
            case ev.StockOut(product=pid):
                self.stock[pid] = 0
            case ev.Restock(product=pid, quantity=qty):
                self.stock[pid] += qty
            case ev.Feature(product=pid):
                self.featured = pid
            case ev.RuleUpdate(rules=rules):
                self.rules = self.rules.plus(rules)
            case ev.StyleDirective():
                self.style = Style(
                    tone=event.tone or self.style.tone,
                    max_chars=event.max_chars or self.style.max_chars,
                    slogan=event.slogan or self.style.slogan,
                    avoid_topics=event.avoid_topics or self.style.avoid_topics,
                )

    def _changed(self) -> None:
        self.version += 1
        self.memo.clear()

    def _end_sale(self, product_id: str) -> None:
        sale = self.flash.pop(product_id, None)
        if sale:
            self.old_prices[product_id].append(sale[0])


def apply_coupon(coupon: ev.CouponStart, price: float) -> float:
    """The price of one unit at ``price`` after ``coupon`` (spend-save needs the threshold)."""
    if coupon.kind == "amount_off":
        return max(0.0, price - coupon.value)
    if coupon.kind == "percent_off":
        return price * (1 - coupon.value / 100)
    return price - coupon.value if price >= coupon.threshold else price
