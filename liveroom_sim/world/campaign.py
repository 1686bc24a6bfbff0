"""Campaign timelines: events at stream times that change the world mid-episode.

Each event type is a frozen model with a ``type`` tag and an ``at`` time in stream
seconds. The room applies them to its market state when the clock passes ``at``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Amount, Frozen, PositiveAmount, PositiveCount
from liveroom_sim.world.rules import RuleSet


class _Event(Frozen):
    at: Amount
    note: str = ""


class PriceChange(_Event):
    type: Literal["price_change"]
    product: str
    price: PositiveAmount


class FlashSaleStart(_Event):
    """A flash sale (秒杀): a lower price for a limited time and quantity."""

    type: Literal["flash_sale_start"]
    product: str
    price: PositiveAmount
    quantity: PositiveCount | None = None


class FlashSaleEnd(_Event):
    type: Literal["flash_sale_end"]
    product: str


class CouponStart(_Event):
    """A coupon: ``amount_off`` (value off), ``percent_off`` or ``spend_save``
    (满减: spend ``threshold``, save ``value``). ``products`` empty means storewide."""

    type: Literal["coupon_start"]
    code: str = pydantic.Field(pattern=r"^[A-Z][A-Z0-9]{3,15}$")
    kind: Literal["amount_off", "percent_off", "spend_save"]
    value: PositiveAmount
    threshold: Amount = 0.0
    products: tuple[str, ...] = ()


class CouponEnd(_Event):
    type: Literal["coupon_end"]
    code: str


class StockOut(_Event):
    type: Literal["stock_out"]
    product: str


class Restock(_Event):
    type: Literal["restock"]
    product: str
    quantity: PositiveCount


class Feature(_Event):
    """The host must now present this product ("put up the link")."""

    type: Literal["feature"]
    product: str


class RuleUpdate(_Event):
    """New compliance rules, in force from ``at`` on."""

    type: Literal["rule_update"]
    rules: RuleSet


class StyleDirective(_Event):
    """An operations-team directive about how to speak from now on."""

    type: Literal["style_directive"]
    tone: str | None = None
    max_chars: PositiveCount | None = None
    slogan: str | None = None
    avoid_topics: tuple[str, ...] = ()


class Giveaway(_Event):
    """A lucky-bag (福袋) or red-envelope (红包) draw: viewers who comment before
    ``at + duration_s`` may win ``winners`` prizes; it holds viewers in the room. It
    changes no price or stock (the room's viewers react to it)."""

    type: Literal["giveaway"]
    kind: Literal["lucky_bag", "red_envelope"]
    product: str
    winners: PositiveCount = 1
    duration_s: PositiveAmount = 60.0


#: The types a skill may declare (``type`` in a ``SKILL.md``; see
#: :class:`liveroom_sim.harness.core.Skill`).
SkillType = Literal["reply", "strategy", "after-sales", "compliance"]


class HarnessChange(_Event):
    """The business team changed the harness: a skill added or edited, a tool renamed."""

    type: Literal["harness_change"]
    skill: str | None = None
    skill_text: str | None = None
    skill_when: str = "always"
    skill_type: SkillType = "strategy"
    skill_description: str | None = None
    rename_tool: dict[str, str] = {}


CampaignEvent = Annotated[
    Union[
        PriceChange, FlashSaleStart, FlashSaleEnd, CouponStart, CouponEnd, StockOut,
        Restock, Feature, RuleUpdate, StyleDirective, HarnessChange, Giveaway,
    ],
    pydantic.Field(discriminator="type"),
]


class Campaign(Frozen):
    """A stream's plan: the product featured at the start and the timeline of events."""

    opening_product: str
    events: tuple[CampaignEvent, ...] = ()

    @pydantic.field_validator("events")
    @classmethod
    def _sorted(cls, events):
        return tuple(sorted(events, key=lambda e: e.at))


def load_campaign(path: Path | str) -> Campaign:
    """Load and validate a campaign YAML file."""
    return datafile.load(Campaign, path)
