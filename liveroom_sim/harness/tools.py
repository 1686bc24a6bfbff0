"""The avatar's tools: typed functions over the market as of now.

Each tool's JSON schema comes from its signature and docstring (one source); the harness
only renames and re-describes. A tool never raises on bad input: it returns
``{"error": ...}`` and the episode goes on.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pydantic

from liveroom_sim.errors import UnknownNameError, did_you_mean
from liveroom_sim.world.market import Market

#: The canonical name of the tool that loads a skill (a harness that offers it has skills
#: on demand: :attr:`liveroom_sim.harness.core.Harness.skills_on_demand`).
SKILL_TOOL = "load_skill"


def get_product(market: Market, product_id: str) -> dict:
    """Look up a product's details: brand, category attributes and warranty.

    Args:
        product_id: The product id, as listed in the lineup.
    """
    return dict(market.catalog.product(product_id).details)


def get_price_stock(market: Market, product_id: str) -> dict:
    """Get a product's price and stock right now, including any flash sale and coupons.

    Args:
        product_id: The product id, as listed in the lineup.
    """
    p = market.catalog.product(product_id)
    sale = market.flash.get(product_id)
    return {
        "product_id": p.id,
        "price": market.price(product_id),
        "list_price": p.list_price,
        "currency": market.catalog.currency,
        "flash_sale": {"price": sale[0], "remaining": sale[1]} if sale else None,
        "price_after_best_coupon": market.price_after_coupons(product_id),
        "stock": market.stock[product_id],
        "sold_out": market.stock[product_id] == 0,
    }


def get_promotions(market: Market) -> dict:
    """List the promotions active now: coupons, flash sales and the featured product."""
    return {
        "featured_product": market.featured,
        "coupons": [c.model_dump(mode="json", exclude={"at", "note", "type"}) for c in market.coupons.values()],
        "flash_sales": [
            {"product_id": pid, "price": price, "remaining": left} for pid, (price, left) in market.flash.items()
        ],
    }


def get_policy(market: Market, product_id: str) -> dict:
    """Get a product's shipping, returns and warranty terms.

    Args:
        product_id: The product id, as listed in the lineup.
    """
    p = market.catalog.product(product_id)
    return {
        "product_id": p.id,
        "shipping": p.shipping.model_dump(),
        "returns": p.returns.model_dump(),
        "warranty_months": p.warranty_months,
    }


def get_order_status(market: Market, order_id: str) -> dict:
    """Get the status of a viewer's earlier order, for after-sales questions.

    Args:
        order_id: The order id the viewer gave.
    """
    o = market.catalog.order(order_id)
    return {**o.model_dump(), "product_name": market.catalog.product(o.product_id).name}


def load_skill(harness: Any, skill: str) -> dict:
    """Load a skill: its full instructions, by the name the skill list gives.

    Args:
        skill: The skill's name, as listed under skills.
    """
    found = harness.skill_named(skill)
    if found is None:
        names = [s.name for s in harness.skills]
        return {"error": f"no skill {skill!r}{did_you_mean(skill, names)}; skills now: {', '.join(names)}"}
    return {"skill": found.name, "type": found.type, "instructions": found.instructions}


@dataclass(frozen=True, slots=True)
class Tool:
    """A canonical tool: the function, its argument model and its description."""

    name: str
    fn: Callable[..., dict]
    args: type[pydantic.BaseModel]
    description: str
    field_docs: dict[str, str]
    params: dict[str, type]
    schema: dict

    def run(self, market: Market, arguments: dict[str, Any], harness: Any = None) -> dict:
        """Validate ``arguments`` (canonical field names) and run; errors come back as data.

        ``harness``: the harness in force (a :class:`~liveroom_sim.harness.core.Harness`),
        which :func:`load_skill` reads (the other tools read only the market)."""
        # The common case (exact fields of plain types) is checked directly; anything
        # else goes through the pydantic model, whose messages name field and problem.
        if arguments.keys() != self.params.keys() or not all(
                type(arguments[k]) is t for k, t in self.params.items()):
            try:
                arguments = self.args.model_validate(arguments).model_dump()
            except pydantic.ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
                return {"error": f"bad arguments for {self.name}: {problems}"}
        try:
            if self.name == SKILL_TOOL:
                if harness is None:
                    return {"error": f"{self.name} needs the harness in force"}
                return self.fn(harness, **arguments)
            return self.fn(market, **arguments)
        except UnknownNameError as exc:
            return {"error": str(exc)}


def _make_tool(fn: Callable[..., dict]) -> Tool:
    doc = inspect.getdoc(fn) or ""
    summary = doc.split("\n\n")[0].replace("\n", " ")
    field_docs = dict(re.findall(r"^\s*(\w+): (.+)$", doc.split("Args:")[1], re.M)) if "Args:" in doc else {}
    hints = typing.get_type_hints(fn)
    params = list(inspect.signature(fn).parameters)[1:]  # skip the market (or harness)
    model = pydantic.create_model(
        f"{fn.__name__}_args",
        __config__=pydantic.ConfigDict(extra="forbid", strict=True),
        **{name: (hints[name], ...) for name in params},
    )
    return Tool(fn.__name__, fn, model, summary, field_docs, {name: hints[name] for name in params},
                model.model_json_schema())


#: The tools whose result reads only the catalog (a product's details and terms, an
#: order), which stays the same all episode, or only the harness (a skill); the others
#: read the market's state now.
LASTING_TOOLS = frozenset({"get_product", "get_policy", "get_order_status", SKILL_TOOL})
#: The lasting tools whose result reads only what a drawn catalog keeps from its file
#: (names, attributes, terms, orders: never a price, list price or stock, the values
#: :mod:`liveroom_sim.world.draw` changes), so it is the same in every episode of a spec.
CATALOG_TOOLS = frozenset({"get_product", "get_policy", "get_order_status"})

TOOLS: dict[str, Tool] = {
    t.name: t for t in map(_make_tool, (get_product, get_price_stock, get_promotions, get_policy, get_order_status,
                                 load_skill))
}
