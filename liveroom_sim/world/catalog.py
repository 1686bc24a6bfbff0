"""Product catalogs: what the room sells, as frozen data validated on load.

A catalog file holds products of several categories, each with the attributes viewers
ask about in that category, plus the orders that returning customers ask after and the
competitor brands the host must not disparage.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal, Union

import pydantic

from liveroom_sim.errors import SpecError, UnknownNameError
from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Amount, Count, Frozen, PositiveAmount, PositiveCount
from liveroom_sim.world.derived import Memo, derived

Category = Literal["skincare", "apparel", "snacks", "electronics"]


class Shipping(Frozen):
    """Shipping terms: dispatch time in hours and fee (0 means free shipping)."""

    ships_within_hours: PositiveCount
    fee: Amount = 0.0


class Returns(Frozen):
    """Return terms: days to return, and the condition the item must be in."""

    days: Count
    condition: str


class _ProductBase(Frozen):
    id: str = pydantic.Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    name: str = pydantic.Field(min_length=1)
    aliases: tuple[str, ...] = ()
    #: What viewers call this kind of thing ("serum", "hoodie", 精华); empty: the
    #: name's last word. Viewers say "this serum" / 这款精华 about the product on stage.
    kind: str = ""
    brand: str
    price: PositiveAmount
    list_price: PositiveAmount
    stock: Count
    shipping: Shipping
    returns: Returns
    warranty_months: Count | None = None
    sponsored: bool = False
    pitch: str = ""

    @pydantic.model_validator(mode="after")
    def _list_price_not_below_price(self):
        if self.list_price < self.price:
            raise ValueError(f"list_price {self.list_price} is below price {self.price}")
        return self

    @property
    def names(self) -> tuple[str, ...]:
        """The name and every alias viewers use for this product."""
        return (self.name, *self.aliases)

    @property
    def kind_noun(self) -> str:
        """The word viewers use for this kind of product (see ``kind``)."""
        return self.kind or self.name.split()[-1].lower()

    @derived
    def details(self) -> dict:
        """Brand, category attributes and warranty, as the product lookup tool returns
        them (JSON values; read-only: a tool hands out copies)."""
        return {k: v for k, v in self.model_dump(mode="json").items() if k not in _NOT_DETAILS}


#: What a product lookup leaves to the other tools (prices, stock, terms) or to no one.
_NOT_DETAILS = frozenset({"price", "list_price", "stock", "shipping", "returns", "aliases", "pitch"})


class SkincareProduct(_ProductBase):
    category: Literal["skincare"]
    ingredients: tuple[str, ...] = pydantic.Field(min_length=1)
    skin_types: tuple[str, ...] = pydantic.Field(min_length=1)
    volume_ml: PositiveCount
    shelf_life_months: PositiveCount
    pregnancy_safe: bool


class ApparelProduct(_ProductBase):
    category: Literal["apparel"]
    material: str
    sizes: tuple[str, ...] = pydantic.Field(min_length=1)
    colors: tuple[str, ...] = pydantic.Field(min_length=1)
    care: str


class SnacksProduct(_ProductBase):
    category: Literal["snacks"]
    ingredients: tuple[str, ...] = pydantic.Field(min_length=1)
    allergens: tuple[str, ...] = ()
    shelf_life_months: PositiveCount
    net_weight_g: PositiveCount
    storage: str
    health_food: bool = False


class ElectronicsProduct(_ProductBase):
    category: Literal["electronics"]
    specs: dict[str, str] = pydantic.Field(min_length=1)
    compatibility: tuple[str, ...] = pydantic.Field(min_length=1)
    battery_hours: PositiveAmount | None = None


Product = Annotated[
    Union[SkincareProduct, ApparelProduct, SnacksProduct, ElectronicsProduct],
    pydantic.Field(discriminator="category"),
]


class Order(Frozen):
    """An earlier order, for after-sales questions."""

    id: str
    product_id: str
    status: str
    eta_days: Count | None = None


class Catalog(Frozen):
    """Everything the room sells, keyed by product id."""

    currency: Literal["USD", "CNY"]
    products: tuple[Product, ...] = pydantic.Field(min_length=1)
    orders: tuple[Order, ...] = ()
    competitors: tuple[str, ...] = ()
    @cached_property
    def base(self) -> "Catalog":
        """The catalog as its file holds it (``self`` unless this one was drawn for an
        episode by :mod:`liveroom_sim.world.draw`). A drawn catalog differs from its base
        only in prices, list prices and stock, so what derives from names, aliases,
        categories and attributes is computed once on the base and shared by every
        episode: per-catalog caches key on ``catalog.base``, and stay one entry per spec.
        (A cached property: read on every reply, it costs one dict lookup.)"""
        return self

    def with_products(self, products: tuple["Product", ...]) -> "Catalog":
        """This catalog with its products' prices, list prices or stock replaced (the
        same ids, names and attributes, in the same order); its :attr:`base` is kept."""
        if len(products) != len(self.products) or any(a.id != b.id for a, b in zip(products, self.products)):
            raise ValueError("a drawn catalog keeps the products of its base, in order")
        # Not validated again: the base was, its ids and orders are kept (checked above),
        # and the draw keeps each list price at or above its price (what validating the
        # products would check); validating cost a tenth of a reset. Built as
        # ``model_construct`` builds it (every field set), without its generic machinery;
        # of the base's cached properties only ``base`` carries over (``by_id`` must not).
        fields = self.__dict__
        drawn = datafile.replaced(self, {})
        object.__setattr__(drawn, "__dict__", {**{k: fields[k] for k in type(self).model_fields},
                                               "products": products, "base": self.base})
        object.__setattr__(drawn, "__pydantic_fields_set__", set(type(self).model_fields))
        return drawn

    @pydantic.model_validator(mode="after")
    def _ids_unique_and_orders_known(self):
        ids = [p.id for p in self.products]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate product ids: {dupes}")
        for order in self.orders:
            if order.product_id not in ids:
                raise ValueError(f"order {order.id} names unknown product {order.product_id!r}")
        return self

    @cached_property
    def by_id(self) -> dict[str, "Product"]:
        """Products by id (read-only: built once, the catalog is frozen)."""
        return {p.id: p for p in self.products}

    @derived
    def tool_results(self) -> Memo:
        """Results of the tools that read only the catalog, by tool and arguments
        (:mod:`liveroom_sim.sim.toolbox`; kept on a base catalog: every episode of a spec
        draws its catalog from it and gets the same results). An optimisation: about 1% of
        the env's step time (see :class:`~liveroom_sim.world.derived.Memo`)."""
        return Memo(4096)

    @derived
    def facts(self) -> Memo:
        """The facts answers must contain, by question and what they read of the market
        (:func:`liveroom_sim.world.facts.required_facts`; kept on a base catalog). An
        optimisation: about 3% of the env's step time."""
        return Memo(8192)

    @derived
    def lineup(self) -> str:
        """The lineup as the system prompt lists it: one line per product, its id, name,
        brand and aliases (the same for a drawn catalog as for its base)."""
        if self.base is not self:
            return self.base.lineup
        return "\n".join(f"- {p.id}: {p.name} ({'; '.join((p.brand, *p.aliases))})" for p in self.products)

    def product(self, product_id: str) -> "Product":
        """Return one product, or raise :class:`UnknownNameError` with suggestions."""
        by_id = self.by_id
        if product_id in by_id:
            return by_id[product_id]
        raise UnknownNameError("product", product_id, by_id)

    def order(self, order_id: str) -> Order:
        for o in self.orders:
            if o.id == order_id:
                return o
        raise UnknownNameError("order", order_id, (o.id for o in self.orders))


def load_catalog(path: Path | str) -> Catalog:
    """Load and validate a catalog YAML file.

    Raises:
        SpecError: naming the file, the field and what was expected.
    """
    catalog = datafile.load(Catalog, path)
    if not catalog.products:
        raise SpecError(path, ["field 'products': at least one product expected"])
    return catalog
