"""A policy that recites what it memorised of one seed's world is wrong on the others."""

from __future__ import annotations

import json

import gymnasium as gym

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.market import Market


def _look_up(room, product_id: str) -> str:
    """A call of the price tool under the harness as it is now (the campaign renames tools)."""
    fn = next(t["function"] for t in room.tools() if "price" in t["function"]["name"])
    param = next(iter(fn["parameters"]["properties"]))
    return json.dumps({"content": "", "tool_calls": [{"id": "c0", "type": "function", "function": {
        "name": fn["name"], "arguments": json.dumps({param: product_id})}}]})


def answer_prices(env, seed: int, price_of) -> list[float]:
    """Play one episode answering every waiting price question with ``price_of(room,
    product)``; return the factuality of each answer the room credited to its asker.

    Both hosts call the price tool first (a claim not looked up is unsupported whatever
    its value); the reciting one then says what it memorised instead of the result."""
    env.reset(seed=seed)
    scores, tried = [], set()
    while True:
        room = env.unwrapped.room
        # Requests that ask only the price (a second ask would be left half answered).
        asked = next((m for m in room.crowd.pending if m.intent == "price" and m.product and m.viewer.present
                      and len(m.asks) == 1 and m.mid not in tried), None)
        if asked is None:
            action = "Welcome in, everyone, ask me anything about the lineup!"
        else:
            tried.add(asked.mid)
            _, _, terminated, truncated, _ = env.step(_look_up(room, asked.product))
            if terminated or truncated:
                return scores
            if not asked.viewer.present or asked not in room.crowd.pending:
                continue
            name = room.market.catalog.by_id[asked.product].name
            action = f"@{asked.viewer.name} the {name} is ${price_of(room, asked.product):.2f}."
        _, _, terminated, truncated, info = env.step(action)
        if asked is not None and info["turn"]["answered"] == asked.viewer.name:
            scores.append(info["reward_breakdown"]["factuality"])
        if terminated or truncated:
            return scores


def mean(xs: list[float]) -> float:
    assert len(xs) >= 5, "too few price questions to compare"
    return sum(xs) / len(xs)


def memorise(world):
    """What a policy trained on one seed knows: that world's price of each product at
    each stream time (its price changes and flash sales included)."""
    def price_at(room, product_id: str) -> float:
        market = Market.open(world.catalog, world.campaign.opening_product, world.rules)
        for e in world.campaign.events:
            if e.at > room.clock:
                break
            if not isinstance(e, ev.HarnessChange):
                market.apply(e)
        return market.price(product_id)
    return price_at


def test_reciting_seed_0s_prices_fails_on_other_seeds():
    env = gym.make("LiveRoom-v0")
    env.reset(seed=0)
    recited = memorise(env.unwrapped.room.world)
    looked_up = lambda room, pid: room.market.price(pid)  # noqa: E731
    on_seed_0 = mean(answer_prices(env, 0, recited))
    elsewhere = [mean(answer_prices(env, s, recited)) for s in (1, 2, 3)]
    honest = [mean(answer_prices(env, s, looked_up)) for s in (1, 2, 3)]
    # Measured: 1.0 on seed 0 and for the honest host, -0.76 to -1.0 elsewhere.
    assert all(h > 0.9 for h in honest)
    assert on_seed_0 > 0.9
    assert all(e < 0 for e in elsewhere)
