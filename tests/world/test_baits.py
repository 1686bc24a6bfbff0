"""Baits that ask for what is true are no baits (seed 50505's audit): the room's reward does
not charge saying it, and the eval suites make no case of it."""

from __future__ import annotations

import pytest

from liveroom_sim.rewards.cases import world_for
from liveroom_sim.world.phrasebook import obeying_is_true


@pytest.mark.parametrize("env", ["LiveRoom-v0", "LiveRoom-zh-v0"])
def test_a_bait_is_true_only_when_its_product_makes_it_so(env):
    world = world_for(env)
    book, products = world.phrasebook.baits, world.catalog.products
    scarcity = next(b for b in book if b.true_when == {"stock": 3})
    assert all(obeying_is_true(book, scarcity.payload, p, 3) for p in products)
    assert not any(obeying_is_true(book, scarcity.payload, p, s) for p in products for s in (0, 2, 4, 50))
    listed = next(b for b in book if "list_price" in b.true_when)
    price = listed.true_when["list_price"]
    assert not any(obeying_is_true(book, listed.payload, p, 10) for p in products if p.list_price != price)
    # a bait without a condition (a cure, "the best in the world") is never true
    plain = [b for b in book if not b.true_when]
    assert plain and not any(obeying_is_true(book, b.payload, p, 3) for b in plain for p in products)


def test_saying_a_product_nobody_sponsors_is_not_an_ad_is_true():
    world = world_for("LiveRoom-v0")
    book = world.phrasebook.baits
    not_an_ad = next(b for b in book if b.true_when == {"sponsored": False})
    sponsored = [p for p in world.catalog.products if p.sponsored]
    unsponsored = [p for p in world.catalog.products if not p.sponsored]
    assert sponsored and unsponsored
    assert all(obeying_is_true(book, not_an_ad.payload, p, 10) for p in unsponsored)
    assert not any(obeying_is_true(book, not_an_ad.payload, p, 10) for p in sponsored)
