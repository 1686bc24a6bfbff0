"""Drawn worlds: different per seed, coherent whatever the draw, pinned when asked."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.spec import World, load_spec
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.draw import draw_world, retail
from liveroom_sim.world.ranges import WorldRanges
from liveroom_sim.world.paths import ENVS_DIR

ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0")


def world(env: str) -> World:
    return load_spec(ENVS_DIR / f"{env}.yaml")


def drawn(env: str, seed: int, ranges: WorldRanges | None = None):
    w = world(env)
    return draw_world(w.catalog, w.campaign, ranges or w.spec.world, w.spec.stream.duration_s,
                      np.random.default_rng(seed))


def featured_at(campaign, index: int) -> str:
    """The product featured when the campaign's ``index``-th event fires."""
    featured = campaign.opening_product
    for e in campaign.events[:index + 1]:
        if isinstance(e, ev.Feature):
            featured = e.product
    return featured


@pytest.mark.parametrize("env", ENVS)
def test_two_seeds_give_two_worlds(env):
    (cat_a, camp_a), (cat_b, camp_b) = drawn(env, 1), drawn(env, 2)
    prices_a = {p.id: p.price for p in cat_a.products}
    prices_b = {p.id: p.price for p in cat_b.products}
    assert sum(prices_a[k] != prices_b[k] for k in prices_a) > len(prices_a) / 2
    assert [p.stock for p in cat_a.products] != [p.stock for p in cat_b.products]
    assert [e.at for e in camp_a.events] != [e.at for e in camp_b.events]
    codes = lambda c: [e.code for e in c.events if isinstance(e, ev.CouponStart)]  # noqa: E731
    assert set(codes(camp_a)).isdisjoint(codes(camp_b))
    assert set(codes(camp_a)).isdisjoint(codes(world(env).campaign))
    orders = {tuple(e.product for e in drawn(env, s)[1].events if isinstance(e, ev.Feature)) for s in range(6)}
    assert len(orders) > 1


@pytest.mark.parametrize("env", ENVS)
def test_the_same_generator_state_gives_the_same_world(env):
    assert drawn(env, 7) == drawn(env, 7)


def test_pinned_ranges_return_the_files_world():
    w = world("LiveRoom-v0")
    catalog, campaign = draw_world(w.catalog, w.campaign, WorldRanges(), 900, np.random.default_rng(3))
    assert catalog is w.catalog and campaign is w.campaign
    assert WorldRanges().pinned and not w.spec.world.pinned


def check_coherent(env: str, catalog, campaign, duration_s: float) -> None:
    """Everything a live-room operator would call a broken catalog or timeline."""
    base = world(env)
    ids = {p.id for p in catalog.products}
    assert ids == {p.id for p in base.catalog.products}
    for p, b in zip(catalog.products, base.catalog.products):
        assert p.price > 0
        assert p.list_price > p.price if b.list_price > b.price else p.list_price == p.price
        assert (p.stock == 0) == (b.stock == 0)
    times = [e.at for e in campaign.events]
    assert times == sorted(times) and all(0 <= t < duration_s for t in times)
    assert [type(e) for e in campaign.events] == [type(e) for e in base.campaign.events]
    price = {p.id: p.price for p in catalog.products}
    low = dict(price)
    started, ended = set(), set()
    for i, (e, b) in enumerate(zip(campaign.events, base.campaign.events)):
        if getattr(e, "product", None) is not None:
            assert e.product in ids
            # An event the file puts on the featured product stays on the featured one.
            assert (featured_at(campaign, i) == e.product) == (featured_at(base.campaign, i) == b.product)
        if isinstance(e, ev.PriceChange):
            assert (e.price < price[e.product]) == (b.price < featured_price(base, b))
            price[e.product] = e.price
            low[e.product] = min(low[e.product], e.price)
        if isinstance(e, ev.FlashSaleStart):
            assert 0 < e.price < price[e.product]
            low[e.product] = min(low[e.product], e.price)
        if isinstance(e, ev.CouponStart):
            started.add(e.code)
        if isinstance(e, ev.CouponEnd):
            assert e.code in started
            ended.add(e.code)
    for e in campaign.events:
        if isinstance(e, ev.CouponStart):
            if e.kind == "percent_off":
                assert 1 <= e.value <= 90
            elif e.kind == "amount_off":
                assert e.value < min(low[p] for p in (e.products or ids))
            else:
                assert e.value < e.threshold
    assert campaign.opening_product in ids


def featured_price(base: World, event) -> float:
    """The file's price in force for a product just before ``event``."""
    price = base.catalog.by_id[event.product].price
    for e in base.campaign.events:
        if e is event:
            return price
        if isinstance(e, ev.PriceChange) and e.product == event.product:
            price = e.price
    raise AssertionError("event not in the campaign")


@settings(max_examples=60, deadline=None)
@given(env=st.sampled_from(ENVS), seed=st.integers(0, 2**32 - 1),
       price=st.floats(0, 0.9), markup=st.floats(0, 0.9), stock=st.floats(0, 0.9),
       coupon=st.floats(0, 0.9), times=st.floats(0, 300), shuffle=st.booleans(), codes=st.booleans())
def test_any_draw_keeps_the_world_coherent(env, seed, price, markup, stock, coupon, times, shuffle, codes):
    ranges = WorldRanges.model_validate({
        "prices": price, "list_prices": markup, "stock": stock,
        "coupons": {"codes": "random" if codes else "fixed", "value": coupon},
        "events": {"time_jitter_s": times}, "featured_order": "shuffle" if shuffle else "fixed",
    })
    catalog, campaign = drawn(env, seed, ranges)
    check_coherent(env, catalog, campaign, world(env).spec.stream.duration_s)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), lo_cents=st.integers(100, 5000), width_cents=st.integers(0, 5000))
def test_absolute_ranges_are_kept(seed, lo_cents, width_cents):
    lo, hi = lo_cents / 100, (lo_cents + width_cents) / 100
    ranges = WorldRanges.model_validate({"prices": {"products": {"sk-cream-01": [lo, hi]}},
                                         "stock": [5, 9], "coupons": {"by_code": {"GLOW15": [10, 20]}}})
    catalog, campaign = drawn("LiveRoom-v0", seed, ranges)
    cream = catalog.by_id["sk-cream-01"].price
    assert lo <= cream <= hi
    assert all(5 <= p.stock <= 9 for p in catalog.products if p.stock)
    glow = next(e for e in campaign.events if isinstance(e, ev.CouponStart) and e.code == "GLOW15")
    assert 10 <= glow.value <= 20
    check_coherent("LiveRoom-v0", catalog, campaign, 900)


@given(value=st.floats(0.5, 5000), like=st.sampled_from([24.99, 129.0, 89.9, 14.5, 5.99]))
def test_retail_prices_keep_the_files_ending(value, like):
    price = retail(value, like)
    assert price > 0
    if value > 2:
        assert round((price - like) % 1, 2) in (0.0, 1.0)
        assert abs(price - value) <= 0.5 + 1e-9
