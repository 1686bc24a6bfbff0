"""One checkable statement of a reply (:class:`Claim`), and which tool returns each
attribute a claim is about (for tool rationality and support)."""

from __future__ import annotations

from typing import NamedTuple

MAX_CLAIMS = 64

#: Which canonical tool returns each attribute (tool rationality and support).
TOOL_FOR = {
    "price": "get_price_stock", "list_price": "get_price_stock", "old_price": "get_price_stock", "price_after_coupon": "get_price_stock",
    "percent_off": "get_price_stock", "stock": "get_price_stock", "sold_out": "get_price_stock",
    "in_stock": "get_price_stock", "coupon": "get_promotions", "coupon_value": "get_promotions",
    "shipping_fee": "get_policy", "free_shipping": "get_policy", "ships_within": "get_policy",
    "returns": "get_policy", "warranty": "get_policy", "duration": "get_policy",
    "shelf_life": "get_product", "battery": "get_product", "size": "get_product",
    "allergen": "get_product", "ingredient": "get_product", "pregnancy": "get_product",
    "eta": "get_order_status", "order_status": "get_order_status",
}
# Attributes that more than one tool returns.
_ALSO = {"warranty": ("get_product",), "duration": ("get_product",), "coupon_value": ("get_price_stock",),
         "price_after_coupon": ("get_promotions",)}

#: Each attribute's tools: the main one, then the others that also return it.
_TOOLS = {kind: (main, *_ALSO.get(kind, ())) for kind, main in TOOL_FOR.items()}


class Claim(NamedTuple):
    """One checkable statement of a reply: its kind (the attribute: ``price``, ``stock``,
    ``allergen``, ``order_status``...), what was said, its verdict, the product (or
    order) it is about, and the number claimed with its dimension. For an order's
    status, ``dim`` is the stage claimed (``not shipped`` when denied) and ``value`` is
    1 when the claim states the order's own stage, 0 when it is only true of it."""

    kind: str
    said: str
    verdict: str
    product: str | None = None
    value: float | None = None
    dim: str | None = None

    @property
    def tools(self) -> tuple[str, ...]:
        """The canonical tools whose result states this claim's attribute."""
        return _TOOLS.get(self.kind, ())
