"""Values derived from frozen models (``@derived``) follow the object they are read from:
a copy with a field changed (augmentation, a harness change, the per-episode draw) never
shows what its original worked out."""

from __future__ import annotations

import doctest
import pickle

import gymnasium as gym
import numpy as np
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.harness.augment import augment
from liveroom_sim.world import derived
from liveroom_sim.world.datafile import replaced


def _world(env_id: str = "LiveRoom-v0"):
    return gym.make(env_id).unwrapped.world


def _tool_names(harness) -> list[str]:
    return [t["function"]["name"] for t in harness.tool_schemas]


def test_the_module_examples_run():
    assert doctest.testmod(derived).failed == 0


def test_a_renamed_copy_of_a_harness_shows_its_own_tool_names():
    harness = _world().harness
    before = _tool_names(harness)  # worked out (and kept) on the original first
    renamed = replaced(harness, {"tools": {k: replaced(v, {"name": f"x_{v.name}"}) for k, v in harness.tools.items()}})
    assert _tool_names(renamed) == [f"x_{n}" for n in before]
    assert renamed.name_tables[0] == {f"x_{n}": c for n, c in harness.name_tables[0].items()}
    assert _tool_names(harness) == before  # the original keeps its own
    assert harness.tool_schemas is harness.tool_schemas  # worked out once


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_an_augmented_harness_lists_the_tools_it_names(seed):
    world = _world()
    harness = world.harness
    _tool_names(harness)
    out = augment(harness, "en", np.random.default_rng(seed), ("rename_tools", "rename_fields"))
    assert _tool_names(out) == [out.tools[c].name for c in out.tools]
    for canonical, view in out.tools.items():
        assert out.canonical_tool(view.name) == canonical == out.name_tables[0][view.name]


def test_a_drawn_catalog_lists_its_base_lineup_and_a_pickled_harness_its_own_tools():
    world = _world()
    drawn = world.for_episode(np.random.default_rng(5))
    assert drawn.catalog is not world.catalog and drawn.catalog.lineup == world.catalog.lineup
    assert all(p.id in drawn.catalog.lineup for p in drawn.catalog.products)
    copy = pickle.loads(pickle.dumps(world.harness))
    assert _tool_names(copy) == _tool_names(world.harness)


def test_a_rule_set_plus_the_same_update_is_one_object():
    world = _world()
    update = next(e.rules for e in world.campaign.events if type(e).__name__ == "RuleUpdate")
    merged = world.rules.plus(update)
    assert world.rules.plus(update) is merged
    assert {b.phrase for b in update.banned} <= {b.phrase for b in merged.banned}


def test_models_that_worked_a_value_out_still_compare_by_their_fields():
    world = _world()
    a, b = (world.for_episode(np.random.default_rng(4)).catalog for _ in range(2))
    assert a.lineup and a == b  # one has worked its lineup out, the other not
    assert b.lineup and a == b  # both have (each its own)
    harness = world.harness
    assert harness.tool_schemas and harness == replaced(harness, {}) == pickle.loads(pickle.dumps(harness))
