"""The ranges a spec's ``world:`` section sets: how far each episode's world may differ
from its catalog and campaign files (frozen data; :mod:`liveroom_sim.world.draw` draws).

Example:
    >>> WorldRanges.model_validate({"prices": 0.2, "stock": [5, 300]}).stock.range
    (5.0, 300.0)
    >>> WorldRanges().pinned
    True
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import pydantic

from liveroom_sim.world.datafile import Amount, Count, Frozen

Bounds = tuple[Amount, Amount]
#: An inclusive range of whole counts, ``[lo, hi]``.
Counts = tuple[Count, Count]


class Spread(Frozen):
    """How one number is drawn: within ``±jitter`` (a fraction) of the file's value, or
    uniformly in an absolute ``range: [lo, hi]``. Written as a number (the jitter), a
    list (the range) or a mapping. Zero jitter and no range keep the file's value."""

    jitter: float = pydantic.Field(0.0, ge=0.0, lt=1.0)
    range: Bounds | None = None

    @pydantic.model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return value  # let pydantic reject it as a mapping
        if isinstance(value, (int, float)):
            return {"jitter": value}
        if isinstance(value, (list, tuple)):
            return {"range": value}
        return value

    @pydantic.model_validator(mode="after")
    def _one_way(self):
        if self.range is not None:
            if self.jitter:
                raise ValueError("give either jitter or range, not both")
            if self.range[0] > self.range[1]:
                raise ValueError(f"range {list(self.range)}: lo is above hi")
        return self

    @property
    def pinned(self) -> bool:
        return self.range is None and self.jitter == 0.0

    def draw(self, base: float, rng: np.random.Generator) -> float:
        """One value: the base itself when pinned."""
        if self.range is not None:
            return float(rng.uniform(*self.range))
        return base * float(rng.uniform(1 - self.jitter, 1 + self.jitter)) if self.jitter else base


class ProductSpread(Spread):
    """A :class:`Spread` with absolute ``[lo, hi]`` ranges for named products."""

    products: dict[str, Bounds] = {}

    @pydantic.field_validator("products")
    @classmethod
    def _ordered(cls, value):
        for pid, (lo, hi) in value.items():
            if lo > hi:
                raise ValueError(f"{pid}: range [{lo:g}, {hi:g}]: lo is above hi")
        return value

    @property
    def pinned(self) -> bool:
        return super().pinned and not self.products

    def draw_for(self, product_id: str, base: float, rng: np.random.Generator) -> tuple[float, Bounds | None]:
        """One value for a product, and the absolute range it must stay in (if any)."""
        bounds = self.products.get(product_id, self.range)
        if bounds is not None:
            return float(rng.uniform(*bounds)), bounds
        return self.draw(base, rng), None


class CouponRanges(Frozen):
    """Coupons: ``codes: random`` gives every coupon a fresh code per episode; ``value``
    spreads what each takes off (``by_code`` sets ranges for named codes)."""

    codes: Literal["fixed", "random"] = "fixed"
    value: Spread = Spread()
    by_code: dict[str, Bounds] = {}

    @property
    def pinned(self) -> bool:
        return self.codes == "fixed" and self.value.pinned and not self.by_code


class EventRanges(Frozen):
    """Campaign event times move by up to ``time_jitter_s`` seconds, keeping their order."""

    time_jitter_s: Amount = 0.0


class CampaignGrammar(Frozen):
    """The ``world.campaign`` section: each episode's timeline drawn from the patterns of
    real streams (:mod:`liveroom_sim.world.grammar`), within these business ranges, or the
    campaign file's own timeline (``timeline: fixed``, the default; a regression test
    pins it so). Counts are ``[lo, hi]`` (inclusive), times in seconds, shares of a price
    as fractions.

    Attributes:
        timeline: ``drawn`` (per seed, from the grammar) or ``fixed`` (the file's events).
        warmup_s: The warm-up before the hero product's pitch.
        segments: Product segments; the first is the hero product's (on stage from the
            opening), each later one opens with a featured product ("link is up").
        flash_sales: Flash-sale waves over the stream (denser toward the end).
        flash_discount: A flash price's cut off the price in force.
        flash_s, flash_units: How long a flash sale runs and how many units it has.
        coupons, coupon_kinds, coupon_s: Coupon drops, their kinds and how long they run.
        percent_off: What a ``percent_off`` coupon takes off, in percent.
        coupon_cut: What an ``amount_off`` coupon takes off its cheapest product (a
            fraction), and a ``spend_save`` coupon off its threshold.
        giveaways, giveaway_kinds, giveaway_s: Lucky-bag and red-envelope draws.
        price_changes, price_change: Price changes of the product on stage and their
            size (a fraction of the price in force; negative is a cut).
        stock_outs, restock, restock_units: Products selling out, the chance each is
            restocked later, and by how many units.
        rule_updates, style_changes, harness_changes: How many of the campaign file's
            rule updates, style directives (after the opening one, which always comes)
            and harness changes the stream takes, in the file's order, at drawn times.
    """

    timeline: Literal["fixed", "drawn"] = "fixed"
    warmup_s: Bounds = (30.0, 90.0)
    segments: Counts = (4, 6)
    flash_sales: Counts = (2, 4)
    flash_discount: Bounds = (0.1, 0.35)
    flash_s: Bounds = (40.0, 90.0)
    flash_units: Counts = (10, 40)
    coupons: Counts = (1, 3)
    coupon_kinds: tuple[Literal["amount_off", "percent_off", "spend_save"], ...] = (
        "amount_off", "percent_off", "spend_save")
    coupon_s: Bounds = (120.0, 360.0)
    percent_off: Counts = (5, 20)
    coupon_cut: Bounds = (0.08, 0.25)
    giveaways: Counts = (1, 3)
    giveaway_kinds: tuple[Literal["lucky_bag", "red_envelope"], ...] = ("lucky_bag", "red_envelope")
    giveaway_s: Bounds = (30.0, 90.0)
    price_changes: Counts = (0, 2)
    price_change: tuple[float, float] = (-0.15, 0.1)
    stock_outs: Counts = (0, 2)
    restock: float = pydantic.Field(0.7, ge=0.0, le=1.0)
    restock_units: Counts = (10, 40)
    rule_updates: Counts = (0, 1)
    style_changes: Counts = (0, 2)
    harness_changes: Counts = (0, 2)

    @pydantic.model_validator(mode="after")
    def _ordered(self):
        for name, value in self:
            if isinstance(value, tuple) and len(value) == 2 and not isinstance(value[0], str) and value[0] > value[1]:
                raise ValueError(f"{name} [{value[0]:g}, {value[1]:g}]: lo is above hi")
        if self.segments[0] < 1:
            raise ValueError("segments: a stream has at least one product segment")
        if not (-1.0 < self.price_change[0] and self.price_change[1] < 1.0):
            raise ValueError("price_change: a change stays within (-1, 1) of the price")
        if not (0.0 < self.flash_discount[0] and self.flash_discount[1] < 1.0):
            raise ValueError("flash_discount: a cut stays within (0, 1) of the price")
        if self.coupons[1] and not self.coupon_kinds:
            raise ValueError("coupon_kinds: coupons are drawn, so at least one kind is needed")
        if self.giveaways[1] and not self.giveaway_kinds:
            raise ValueError("giveaway_kinds: giveaways are drawn, so at least one kind is needed")
        return self

    @property
    def pinned(self) -> bool:
        return self.timeline == "fixed"


class WorldRanges(Frozen):
    """The ``world:`` section of a spec: how far each episode's world may differ from the
    catalog and campaign files. Every default pins its part to the files' values.

    Attributes:
        prices: Each product's price (absolute ranges per product under ``products``).
        list_prices: The markup of list price over price (``range`` is a markup ratio).
        stock: Each product's opening stock in units.
        coupons: Coupon codes and values.
        events: Campaign event times.
        featured_order: ``shuffle`` permutes which product is featured when.
        campaign: The campaign's timeline: the file's, or drawn per episode from the
            grammar of real streams (then ``events`` and ``featured_order`` are moot:
            the grammar draws times and products itself).
    """

    prices: ProductSpread = ProductSpread()
    list_prices: Spread = Spread()
    stock: ProductSpread = ProductSpread()
    coupons: CouponRanges = CouponRanges()
    events: EventRanges = EventRanges()
    featured_order: Literal["fixed", "shuffle"] = "fixed"
    campaign: CampaignGrammar = CampaignGrammar()

    @property
    def pinned(self) -> bool:
        """Whether every episode gets the files' own world."""
        return (self.prices.pinned and self.list_prices.pinned and self.stock.pinned and self.coupons.pinned
                and not self.events.time_jitter_s and self.featured_order == "fixed" and self.campaign.pinned)
