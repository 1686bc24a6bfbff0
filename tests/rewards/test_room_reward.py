"""The room's side of the reward: answers credited to the right viewer, losses charged when
they happen, the room an early end leaves behind, and a reference host that serves it."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401
from liveroom_sim.integrations.trl import LiveRoomToolEnv, liveroom_reward_total
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.rewards.analysis import addresses
from liveroom_sim.world.text import cn_to_number, quantities


@pytest.fixture(scope="module")
def env():
    return gym.make("LiveRoom-v0")


def test_a_name_with_dots_is_addressed_whole():
    assert addresses("@fine.print.phil it is $16.50.", "fine.print.phil")
    assert not addresses("@fine.print.phil2 it is $16.50.", "fine.print.phil")
    assert addresses("【lily】修护面霜159元。", "lily", "【{name}】")


def test_a_numeral_of_78_wan_is_no_quantity_and_no_crash():
    text = "一" + "万" * 78 + "元"
    assert cn_to_number(text[:-1]) is None and quantities(text) == []


def test_the_scripted_host_does_not_repeat_an_answer_to_one_viewer(env):
    # It said one correct answer to one viewer 15-18 times in a row when the room did not
    # credit it; now an answer is credited and not said again while the viewer waits. (A
    # viewer who asks the same thing again later is answered again: a new need.)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        policy, recent, done = ScriptedAvatar(), [], False
        while not done:
            action = policy(obs, info)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if not action.startswith("{"):
                assert not (action.startswith("@") and action in recent[-3:]), (seed, action)
                recent.append(action)


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0"])
def test_the_scripted_host_never_says_a_missing_fact_as_none(env_id):
    # It told a viewer asking a hoodie's shelf life that it "keeps for None months".
    env = gym.make(env_id)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        policy, done = ScriptedAvatar(), False
        while not done:
            action = policy(obs, info)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if not action.startswith("{"):
                said = action.split(" ", 1)[-1] if action.startswith("@") else action  # not a handle ("@null_byte")
                assert "None" not in said and "null" not in said, (seed, action)


def test_losses_are_charged_at_the_step_they_happen(env):
    obs, info = env.reset(seed=0)
    lost = []
    for _ in range(200):  # a host who says nothing: questions expire, viewers leave
        obs, reward, terminated, truncated, info = env.step("")
        lost.append(info["reward_breakdown"]["outcome"])
        assert reward == pytest.approx(info["reward_breakdown"]["total"])
    assert sum(lost) < -10 and sum(v < 0 for v in lost) > 5


def test_settling_charges_the_room_left_once_and_leaves_the_room_as_it_was(env):
    obs, info = env.reset(seed=1)
    env.step(ScriptedAvatar()(obs, info))
    room = env.unwrapped.room
    clock, present, before = room.clock, len(room.crowd.present), room.returns["total"]
    settlement = room.settle()
    assert settlement.scores["outcome"].value < -20
    assert room.returns["total"] == pytest.approx(before + settlement.total)
    assert (room.clock, len(room.crowd.present)) == (clock, present)
    assert room.settle().total == 0  # idempotent


def test_a_truncated_episode_is_charged_for_the_stream_it_leaves():
    from liveroom_sim.env import LiveRoomEnv

    tiny = LiveRoomEnv("tests/fixtures/tiny/tiny-v0.yaml")
    call = json.dumps({"tool_calls": [{"id": "c0", "type": "function",
                                       "function": {"name": "get_promotions", "arguments": "{}"}}]})
    obs, info = tiny.reset(seed=0)
    truncated = False
    while not truncated:
        obs, reward, terminated, truncated, info = tiny.step(call)
    assert tiny.room.settled and info["reward_breakdown"]["outcome"] < 0


def test_under_trl_quitting_after_one_reply_is_charged_the_room_it_leaves():
    quitter = LiveRoomToolEnv("LiveRoom-v0", seed=3)
    quitter.reset()
    quitter.reply("Hello everyone!")
    first = liveroom_reward_total(environments=[quitter])[0]
    assert first < -20 and quitter.done
    assert liveroom_reward_total(environments=[quitter])[0] == first  # settled once


def _info_with_waiting(env, line: str) -> dict:
    """Seed 0's first turn with ``line`` as the only waiting question (the chat typed
    before the stream opened has others waiting on most seeds)."""
    obs, info = env.reset(seed=0)
    update = info["messages"][-1]["content"].split("\nwaiting for an answer:")[0]
    messages = [*info["messages"][:-1], {"role": "user", "content": update + f"\nwaiting for an answer:\n- {line}"}]
    return {**info, "messages": messages}


@pytest.mark.parametrize("line, role", [
    ("@refund_rita (12s): my refund on LR-10302 where is it", "get_order_status"),
    ("@back_again_bea (12s): Dewveil Niacinamide Glow Serum came damaged, how do i return it", "get_policy"),
])
def test_after_sales_questions_get_the_right_tool(env, line, role):
    info = _info_with_waiting(env, line)
    action = json.loads(ScriptedAvatar()("", info))
    assert role in [c["function"]["name"] for c in action["tool_calls"]]


def test_a_damaged_item_is_answered_with_the_return_policy_not_its_unopened_condition(env):
    from liveroom_sim.harness.tools import TOOLS

    info = _info_with_waiting(env, "@back_again_bea (12s): Dewveil Niacinamide Glow Serum came damaged, how do i return it")
    policy = ScriptedAvatar()
    call = json.loads(policy("", info))
    market = env.unwrapped.room.market
    results = [{"role": "tool", "tool_call_id": c["id"],
                "content": json.dumps(TOOLS[c["function"]["name"]].run(market, json.loads(c["function"]["arguments"])))}
               for c in call["tool_calls"]]
    reply = policy("", {**info, "messages": [*info["messages"], {"role": "assistant", **call}, *results]})
    assert reply.startswith("@back_again_bea") and "damaged" in reply and "15 days" in reply
    assert "unopened" not in reply
