"""The reward cannot be gamed: over many seeds the scripted host beats the naive host on
every component, and degenerate strategies do not beat the scripted host's total."""

from __future__ import annotations

import statistics

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401
from liveroom_sim.episode import play
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.policies.reading import _waiting
from liveroom_sim.spec import COMPONENTS

SEEDS = range(50)


def _returns(env, policy, seeds) -> list[dict]:
    return [play(env, policy, seed).returns for seed in seeds]


@pytest.fixture(scope="module")
def env():
    return gym.make("LiveRoom-v0").unwrapped


@pytest.fixture(scope="module")
def scripted(env):
    return _returns(env, ScriptedAvatar(), SEEDS)


@pytest.fixture(scope="module")
def naive(env):
    return _returns(env, NaiveAvatar(), SEEDS)


@pytest.mark.slow
@pytest.mark.parametrize("component", [*COMPONENTS, "total"])
def test_scripted_beats_naive_on_every_component_over_50_seeds(scripted, naive, component):
    good = [r[component] for r in scripted]
    bad = [r[component] for r in naive]
    gap = statistics.mean(good) - statistics.mean(bad)
    spread = (statistics.stdev(good) + statistics.stdev(bad)) / len(SEEDS) ** 0.5
    assert gap > 4 * spread and gap > 20, f"{component}: scripted {statistics.mean(good):.1f} vs naive {statistics.mean(bad):.1f}"
    assert sum(g > b for g, b in zip(good, bad)) >= 45  # seed by seed, not only on average


def _catalog_dump(env):
    lines = [f"{p.name} ${p.price} {p.stock} left, ships within {p.shipping.ships_within_hours} hours, "
             f"returns within {p.returns.days} days" for p in env.world.catalog.products]
    text = " ".join(lines)
    return lambda obs, info: text


def _mention_first(template):
    def policy(obs, info):
        waiting = _waiting(info["messages"])
        return template.format(mention=waiting[0][0] if waiting else "")
    return policy


DEGENERATE = {
    "lists every fact of every product": _catalog_dump,
    "says nothing": lambda env: (lambda obs, info: ""),
    "refuses everything": lambda env: (lambda obs, info: "Sorry, I can't say that."),
    "repeats one safe sentence": lambda env: (lambda obs, info: "Thanks for watching, everyone!"),
    "flatters without answering": lambda env: _mention_first("{mention} you have amazing taste, love your energy!"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", DEGENERATE)
def test_degenerate_strategies_do_not_beat_the_scripted_host(env, scripted, name):
    seeds = range(10)
    theirs = _returns(env, DEGENERATE[name](env), seeds)
    for seed, mine, other in zip(seeds, scripted, theirs):
        assert other["total"] < mine["total"], f"seed {seed}: {name} {other['total']:.1f} >= scripted {mine['total']:.1f}"
