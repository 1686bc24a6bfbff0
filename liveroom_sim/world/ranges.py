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

from liveroom_sim.world.datafile import Amount, Frozen

Bounds = tuple[Amount, Amount]


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
    """

    prices: ProductSpread = ProductSpread()
    list_prices: Spread = Spread()
    stock: ProductSpread = ProductSpread()
    coupons: CouponRanges = CouponRanges()
    events: EventRanges = EventRanges()
    featured_order: Literal["fixed", "shuffle"] = "fixed"

    @property
    def pinned(self) -> bool:
        """Whether every episode gets the files' own world."""
        return (self.prices.pinned and self.list_prices.pinned and self.stock.pinned and self.coupons.pinned
                and not self.events.time_jitter_s and self.featured_order == "fixed")
