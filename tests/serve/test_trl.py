"""TRL through OpenEnv: the environment_factory class, driven the way GRPOTrainer drives it."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest


def test_a_rollout_in_a_served_room_scores_what_the_room_scores(server):
    from liveroom_sim.integrations.trl import make_dataset
    from liveroom_sim.serve.trl import served_room_factory, served_room_reward

    url, _ = server
    row = make_dataset("LiveRoom-v0", n=1, seed=11)[0]
    env = served_room_factory(url)()  # what TRL does: one per rollout, then reset(**row)
    opening = env.reset(**row)
    twin = gym.make("LiveRoom-v0")
    obs, info = twin.reset(seed=11)
    assert opening.startswith(obs)
    arguments = json.dumps({"product_id": "sk-serum-01"})
    answer = env.use_tool("get_price_stock", arguments)
    call = {"id": "call_1", "type": "function", "function": {"name": "get_price_stock", "arguments": arguments}}
    _, r1, _, _, twin_info = twin.step(json.dumps({"content": "", "tool_calls": [call]}))
    assert answer == twin_info["messages"][-1]["content"] and json.loads(answer)["product_id"] == "sk-serum-01"
    update = env.reply("@everyone the serum is 28.99 right now!")
    _, r2, *_ = twin.step("@everyone the serum is 28.99 right now!")
    assert update and served_room_reward([env]) == [pytest.approx(r1 + r2)]
    assert "did you mean" in env.use_tool("get_price", '{"product_id": "sk-serum-01"}')  # the room's own error
    with pytest.raises(ValueError, match="JSON object"):
        env.use_tool("get_price_stock", "{not json")
    env.close()
