"""One checkable statement of a reply (:class:`Claim`): its kind, verdict and dimension
as types, the tolerances numbers are checked with, and which tool returns each attribute
a claim is about (for tool rationality and support).

The enums are :class:`~enum.StrEnum`: each member is its string, so a claim compares,
formats and hashes as before (``Verdict.CORRECT == "correct"``, ``f"{v}"`` is
``correct``), and reasons and transcripts read the same.
"""

from __future__ import annotations

from enum import StrEnum
from typing import NamedTuple

MAX_CLAIMS = 64

#: Money is right to the cent: half a cent, and room for the float error of sums.
MONEY_TOLERANCE = 0.006
#: A percentage off may be said rounded to the whole percent.
PERCENT_TOLERANCE = 0.5
#: Durations (in hours) and spec numbers are exact but for float error.
HOURS_TOLERANCE = SIZE_TOLERANCE = 0.01
#: A fact's number is stated by a claim within this of it (money rounded to the cent,
#: a shade over :data:`MONEY_TOLERANCE` x 2 for the two roundings).
STATED_TOLERANCE = 0.011


class Verdict(StrEnum):
    """What a claim is worth as a statement of fact now."""

    CORRECT = "correct"  # true of that attribute of that product now
    OUTDATED = "outdated"  # true before a change (an old price, an expired code)
    INVENTED = "invented"  # false
    WRONG_CURRENCY = "wrong_currency"  # money in another currency than the catalog's
    UNITLESS = "unitless"  # a number without a unit: claims nothing a viewer can rely on
    UNSUPPORTED = "unsupported"  # true, but not looked up this exchange


#: Verdicts that state a fact a viewer can rely on (it may still lack a lookup).
TRUE_VERDICTS = frozenset({Verdict.CORRECT, Verdict.UNSUPPORTED})
#: Verdicts of claims that state a fact (a number without a unit states none).
FACT_VERDICTS = frozenset(Verdict) - {Verdict.UNITLESS}


class ClaimKind(StrEnum):
    """The attribute a claim is about."""

    PRICE = "price"
    LIST_PRICE = "list_price"
    OLD_PRICE = "old_price"
    PRICE_AFTER_COUPON = "price_after_coupon"
    PERCENT_OFF = "percent_off"
    COUPON = "coupon"
    COUPON_VALUE = "coupon_value"
    SHIPPING_FEE = "shipping_fee"
    FREE_SHIPPING = "free_shipping"
    STOCK = "stock"
    SOLD_OUT = "sold_out"
    IN_STOCK = "in_stock"
    SHIPS_WITHIN = "ships_within"
    RETURNS = "returns"
    WARRANTY = "warranty"
    SHELF_LIFE = "shelf_life"
    BATTERY = "battery"
    DURATION = "duration"  # a duration of no named attribute
    SIZE = "size"  # a number the spec sheet states (5 ATM, Bluetooth 5.3, 70% wool)
    NUMBER = "number"  # a bare number of no attribute (unitless)
    EFFICACY = "efficacy"  # an efficacy rate ("100% effective"): never true
    ALLERGEN = "allergen"
    INGREDIENT = "ingredient"
    PREGNANCY = "pregnancy"
    ETA = "eta"
    ORDER_STATUS = "order_status"


class Dim(StrEnum):
    """The dimension of a number claimed (as :func:`~liveroom_sim.world.text.iter_quantities`
    reads it, and as a fact asks for it)."""

    BARE = "bare"
    MONEY = "money"
    PERCENT_OFF = "percent_off"
    PERCENT = "percent"
    HOURS = "hours"
    COUNT = "count"
    SIZE = "size"


def kind_label(kind: str) -> str:
    """How a reason names a claim's kind: a spec sheet's number may be a size, a rating or
    a fabric's share ("70% wool"), so it is a "spec-sheet" claim, never a "size" claim."""
    return "spec-sheet" if kind == ClaimKind.SIZE else str(kind)


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
    """One checkable statement of a reply.

    Attributes:
        kind: The attribute it is about.
        said: What the reply said (``not ...`` for a denial).
        verdict: Whether it holds now.
        product: The product (or, for an order's status or arrival, the order) it is about.
        value: The number claimed, if any.
        dim: That number's dimension.
        bound: ``below`` or ``above`` when the number was said as a bound ("under $30"):
            it then states no amount, and is judged as a bound.
        stage: For an order's status: the stage claimed (``not shipped`` when denied).
        states: For an order's status: whether the claim states the order's own stage
            (it may be only true of it: "shipped" of a delivered order).
    """

    kind: ClaimKind
    said: str
    verdict: Verdict
    product: str | None = None
    value: float | None = None
    dim: Dim | None = None
    bound: str | None = None
    stage: str | None = None
    states: bool = False

    @property
    def tools(self) -> tuple[str, ...]:
        """The canonical tools whose result states this claim's attribute."""
        return _TOOLS.get(self.kind, ())
