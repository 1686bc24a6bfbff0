"""Campaigns drawn from the grammar of real streams: a different show per seed, within the
spec's business ranges, coherent whatever the draw; a fixed timeline when a spec pins it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from liveroom_sim.errors import SpecError
from liveroom_sim.spec import load_spec
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.grammar import draw_timeline
from liveroom_sim.world.market import Market
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.ranges import CampaignGrammar

ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0")


def world(env: str):
    return load_spec(ENVS_DIR / f"{env}.yaml")


def episode(env: str, seed: int):
    return world(env).for_episode(np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed))))


@pytest.mark.parametrize("env", ENVS)
def test_seeds_run_different_shows_not_only_different_values(env):
    shows = [tuple(e.type for e in episode(env, s).campaign.events) for s in range(10)]
    assert len(set(shows)) >= 8
    # and the products on stage, and how many flash sales, change with the seed too
    assert len({episode(env, s).campaign.opening_product for s in range(10)}) >= 5
    assert len({show.count("flash_sale_start") for show in shows}) >= 2


@pytest.mark.parametrize("env", ENVS)
def test_a_drawn_show_has_the_shape_of_a_stream(env):
    for seed in range(10):
        w = episode(env, seed)
        events, g = w.campaign.events, w.spec.world.campaign
        kinds = [e.type for e in events]
        # the ops team sets the voice in the warm-up, before anything is sold
        assert kinds[0] == "style_directive" and events[0].at <= g.warmup_s[1]
        featured = [w.campaign.opening_product, *(e.product for e in events if isinstance(e, ev.Feature))]
        assert g.segments[0] <= len(featured) <= g.segments[1] and len(set(featured)) == len(featured)
        assert kinds.count("flash_sale_start") <= g.flash_sales[1]
        assert g.coupons[0] <= kinds.count("coupon_start") <= g.coupons[1]
        assert kinds.count("giveaway") <= g.giveaways[1] and kinds.count("stock_out") <= g.stock_outs[1]
        assert kinds.count("harness_change") <= g.harness_changes[1]


def check_coherent(catalog, campaign, duration: float, rules) -> None:
    """What an operator would call a broken timeline never happens (docs/worlds.md)."""
    market = Market.open(catalog, campaign.opening_product, rules)
    lowest = {p.id: p.price for p in catalog.products}
    starts: dict[str, float] = {}
    held: list[tuple[float, float]] = []
    times = [e.at for e in campaign.events]
    assert times == sorted(times) and all(0 <= t < duration for t in times)
    for e in campaign.events:
        if isinstance(e, ev.FlashSaleStart):
            assert e.price < market.price(e.product), "a flash price below the price in force"
            assert 0 < e.quantity <= market.stock[e.product], "a flash sale within stock"
            assert e.product == market.featured, "a flash sale runs on the product on stage"
        if isinstance(e, ev.PriceChange):
            assert e.price != market.prices[e.product]
        if isinstance(e, ev.Feature):
            assert market.stock[e.product] > 0, "nothing sold out is put on stage"
        if isinstance(e, ev.CouponStart):
            starts[e.code] = e.at
            assert e.kind != "percent_off" or 1 <= e.value <= 90
            assert e.kind != "spend_save" or 0 < e.value < e.threshold
        if isinstance(e, ev.CouponEnd):
            assert e.code in starts
        if isinstance(e, ev.FlashSaleEnd):
            assert e.product in market.flash
        if isinstance(e, ev.Giveaway):
            assert e.at + e.duration_s < duration and not any(a < e.at + e.duration_s and e.at < b for a, b in held)
            held.append((e.at, e.at + e.duration_s))
        market.apply(e)
        for pid, sale in market.flash.items():
            lowest[pid] = min(lowest[pid], sale[0])
        for pid, price in market.prices.items():
            lowest[pid] = min(lowest[pid], price)
    for e in campaign.events:
        if isinstance(e, ev.CouponStart) and e.kind == "amount_off":
            assert e.value < min(lowest[p] for p in e.products), "a coupon never takes a whole price off"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), env=st.sampled_from(ENVS),
       segments=st.tuples(st.integers(1, 8), st.integers(0, 4)), flash=st.tuples(st.integers(0, 6), st.integers(0, 4)),
       duration=st.sampled_from([120.0, 600.0, 900.0, 3600.0]))
def test_any_draw_keeps_a_coherent_timeline(seed, env, segments, flash, duration):
    w = world(env)
    g = CampaignGrammar(timeline="drawn", segments=(segments[0], segments[0] + segments[1]),
                        flash_sales=(flash[0], flash[0] + flash[1]), stock_outs=(0, 3), price_changes=(0, 3))
    campaign = draw_timeline(w.campaign, w.catalog, g, duration, np.random.default_rng(seed))
    check_coherent(w.catalog, campaign, duration, w.rules)


def test_the_built_in_envs_draw_coherent_timelines():
    for env in ENVS:
        for seed in range(10):
            w = episode(env, seed)
            check_coherent(w.catalog, w.campaign, w.spec.stream.duration_s, w.rules)


def test_a_spec_can_pin_the_files_timeline(tmp_path):
    spec = tmp_path / "pinned-v0.yaml"
    spec.write_text(f"extends: {ENVS_DIR / 'LiveRoom-v0.yaml'}\nid: Pinned-v0\nworld:\n  campaign: {{timeline: fixed}}\n")
    w = load_spec(spec)
    file_kinds = [e.type for e in w.campaign.events]
    for seed in range(3):
        drawn = w.for_episode(np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed))))
        assert [e.type for e in drawn.campaign.events] == file_kinds


@pytest.mark.parametrize("section,words", [
    ("{segments: [5, 2]}", "segments [5, 2]: lo is above hi"),
    ("{segments: [0, 2]}", "at least one product segment"),
    ("{flash_discount: [0.2, 1.5]}", "flash_discount"),
    ("{timeline: sometimes}", "timeline"),
    ("{coupon_kinds: [], coupons: [1, 2]}", "coupon_kinds"),
])
def test_bad_grammar_ranges_are_named(tmp_path, section, words):
    spec = tmp_path / "bad-v0.yaml"
    spec.write_text(f"extends: {ENVS_DIR / 'LiveRoom-v0.yaml'}\nid: Bad-v0\nworld:\n  campaign: {section}\n")
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    assert "world.campaign" in str(err.value) and words in str(err.value)
