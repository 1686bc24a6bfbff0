"""A reply is matched to the waiting message it answers by what it says (issue 25 item 3):
the product it names and the facts it states of that product, never a number that
happens to be another product's fact too; and an honest host is never gated for
answering a viewer's asks in another order than the reference host does."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.sim.reactions import reply_target
from liveroom_sim.sim.viewers import Ask, ChatMessage, Viewer


@pytest.fixture(scope="module")
def room():
    env = gym.make("LiveRoom-v0")
    env.reset(seed=0)
    return env.unwrapped.room


def _crowd(*messages):
    return SimpleNamespace(waiting=lambda: messages, waiting_of=lambda v: [m for m in messages if m.viewer is v])


def _two_questions(intents=("shelf_life", "warranty")):
    kai = Viewer("kai_77", SimpleNamespace(name="p"), 0.0, 1e9)
    bars = ChatMessage(1, kai, "how long do the protein bars keep?", 0.0, (Ask(intents[0], "sn-protein-01"),))
    mouse = ChatMessage(2, kai, "warranty on the silent mouse?", 5.0, (Ask(intents[1], "el-mouse-01"),))
    return bars, mouse


@pytest.mark.parametrize("mention", ["@kai_77 ", ""])
def test_a_warranty_of_the_mouse_answers_the_mouse_not_the_bars_shelf_life(room, mention):
    # 12 months is both the mouse's warranty and the bars' shelf life: the reply names the mouse.
    bars, mouse = _two_questions()
    reply = f"{mention}The Nimbly Silent Wireless Mouse comes with 12 months of warranty."
    target = reply_target(reply, _crowd(bars, mouse), "@{name}", room.facts_of, room.market.catalog)
    assert target is mouse


def test_a_fact_of_no_named_product_still_goes_to_the_oldest_it_states(room):
    bars, mouse = _two_questions()
    target = reply_target("@kai_77 12 months!", _crowd(bars, mouse), "@{name}", room.facts_of, room.market.catalog)
    assert target is bars  # nothing tells them apart: the oldest, as before


def test_naming_the_product_breaks_a_tie_of_facts(room):
    # Two price questions whose replies state no fact of either: the one named is answered.
    bars, mouse = _two_questions(("price", "price"))
    reply = "@kai_77 the silent mouse? let me check its price for you"
    target = reply_target(reply, _crowd(bars, mouse), "@{name}", room.facts_of, room.market.catalog)
    assert target is mouse


class _NewestFirst(ScriptedAvatar):
    """An honest host that serves the request that came last first (the reference serves
    the one that has waited longest): the same answers, in another order."""

    def _first(self, asks):
        return min(asks, key=lambda a: a[1])


@pytest.mark.slow
@pytest.mark.parametrize("env_id,seed", [("LiveRoom-v0", 300), ("LiveRoom-zh-v0", 1)])
@pytest.mark.parametrize("host", [ScriptedAvatar, _NewestFirst], ids=["reference", "newest-first"])
def test_an_honest_host_is_never_gated(env_id, seed, host):
    env = gym.make(env_id)
    policy = host()
    obs, info = env.reset(seed=seed)
    gated = []
    while True:
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        if info["turn"]["gated"]:
            gated.append((info["turn"]["reply"], info["reward_reasons"]["compliance"]))
        if terminated or truncated:
            break
    assert not gated, gated[:3]
