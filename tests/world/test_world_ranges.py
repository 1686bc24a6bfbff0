"""The spec's ``world:`` section: validated on load, pinned by default, drawn per episode."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.errors import SpecError
from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR

TINY_DIR = Path(__file__).parents[1] / "fixtures" / "tiny"


@pytest.fixture
def tiny(tiny_dir) -> Path:
    return tiny_dir / "tiny-v0.yaml"


def with_world(spec: Path, section: str) -> Path:
    spec.write_text(spec.read_text() + "world:\n" + section)
    return spec


@pytest.mark.parametrize("section, words", [
    ("  prices: {jitter: 1.5}\n", ["world.prices.jitter", "less than 1"]),
    ("  prices: {products: {sk-serum-x: [10, 20]}}\n",
     ["world.prices.products.sk-serum-x", "did you mean 'sk-serum-t'"]),
    ("  stock: [30, 5]\n", ["world.stock", "lo is above hi"]),
    ("  coupons: {by_code: {TINY11: [5, 9]}}\n", ["world.coupons.by_code.TINY11", "did you mean 'TINY10'"]),
    ("  coupons: {codes: secret}\n", ["world.coupons.codes", "'fixed' or 'random'"]),
    ("  featured_order: random\n", ["world.featured_order", "'fixed' or 'shuffle'"]),
    ("  weather: sunny\n", ["world.weather", "Extra inputs"]),
])
def test_bad_world_ranges_are_named(tiny, section, words):
    with pytest.raises(SpecError) as caught:
        load_spec(with_world(tiny, section))
    message = str(caught.value)
    assert str(tiny) in message
    for word in words:
        assert word in message


def prices(env, seed: int) -> dict[str, float]:
    env.reset(seed=seed)
    market = env.unwrapped.room.market
    return {p.id: market.price(p.id) for p in market.catalog.products}


def test_a_spec_without_a_world_section_is_pinned(tiny):
    world = load_spec(tiny)
    assert world.spec.world.pinned
    env = gym.make("LiveRoom-v0").unwrapped.__class__(world)
    assert prices(env, 1) == prices(env, 2) == {p.id: p.price for p in world.catalog.products}


def test_a_spec_pins_nothing_but_what_it_names(tiny):
    world = load_spec(with_world(tiny, "  prices: {jitter: 0.3}\n"))
    catalog = world.for_episode(np.random.default_rng(5)).catalog
    assert [p.stock for p in catalog.products] == [p.stock for p in world.catalog.products]
    assert [p.price for p in catalog.products] != [p.price for p in world.catalog.products]


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0"])
def test_registered_envs_draw_a_world_per_seed(env_id):
    env = gym.make(env_id)
    assert prices(env, 1) != prices(env, 2)
    assert prices(env, 1) == prices(env, 1)


def test_every_harness_variant_of_a_seed_gets_the_seeds_world():
    env = gym.make("LiveRoom-HarnessVariant-v0").unwrapped
    worlds = []
    for variant in range(3):
        env.reset(seed=4, options={"harness_variant": variant})
        worlds.append((env.room.world.catalog, env.room.world.campaign))
    assert worlds[0] == worlds[1] == worlds[2]


def test_the_tools_read_the_drawn_world():
    env = gym.make("LiveRoom-v0").unwrapped
    _, info = env.reset(seed=3)
    tool = next(t["function"]["name"] for t in info["tools"] if "price" in t["function"]["name"])
    call = {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": tool, "arguments": json.dumps({"product_id": "sk-cream-01"})}}]}
    _, _, _, _, info = env.step(json.dumps(call))
    result = json.loads(info["messages"][-1]["content"])
    drawn = env.room.market.price("sk-cream-01")
    assert drawn != load_spec(ENVS_DIR / "LiveRoom-v0.yaml").catalog.by_id["sk-cream-01"].price
    assert drawn in [v for v in result.values() if isinstance(v, (int, float))]


def test_golden_cases_are_scored_on_the_pinned_world():
    """The golden labels name the files' prices: cases must not see a drawn world."""
    assert not world_for("LiveRoom-v0").spec.world.pinned  # the env itself draws
    case = RewardCase.model_validate({"id": "p", "question": {"asker": "mia_22", "intent": "price",
                                      "product": "sk-cream-01"}, "reply": "@mia_22 the barrier cream is $32."})
    market = build_context(case).market
    assert market.price("sk-cream-01") == 32.0
    assert market.catalog is world_for("LiveRoom-v0").catalog


_CHILD = """
import json, gymnasium as gym, liveroom_sim
env = gym.make({env!r}).unwrapped
out = []
for seed in (0, 1, 2):
    env.reset(seed=seed)
    w = env.room.world
    out.append([w.catalog.model_dump(mode="json"), w.campaign.model_dump(mode="json")])
print(json.dumps(out))
"""


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0"])
def test_one_seed_gives_one_world_in_every_process(env_id):
    runs = [subprocess.run([sys.executable, "-c", _CHILD.format(env=env_id)], capture_output=True, text=True,
                           check=True, env={**os.environ, "PYTHONHASHSEED": str(h)}) for h in (1, 2)]
    first, second = (json.loads(r.stdout) for r in runs)
    assert first == second
    assert first[0] != first[1] != first[2]


def test_drawn_catalogs_keep_their_base_and_memory_stays_flat():
    """Every episode draws a catalog; what derives from names and attributes is shared
    through ``catalog.base``, so a long run does not grow by one index per episode."""
    import gc
    import tracemalloc

    env = gym.make("LiveRoom-v0").unwrapped

    def play(seeds):
        for seed in seeds:
            env.reset(seed=seed)
            for _ in range(3):
                env.step("@nobody the glow serum is lovely")

    play(range(10))
    assert env.room.market.catalog is not env.world.catalog
    assert env.room.market.catalog.base is env.world.catalog
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    play(range(10, 110))
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert grown < 2 * 2**20  # was about 12 MiB per 100 episodes before the caches keyed on the base
