"""Stream segments and step labels: what trainers with a turn cap and per-segment credit need."""

from __future__ import annotations

import doctest

import gymnasium as gym
import pytest

from liveroom_sim.episode import play
from liveroom_sim.integrations.trl import make_dataset, make_environment_factory
from liveroom_sim.trajectory import segments, steps
from liveroom_sim.trajectory.segments import SegmentEnv, segment_start


def test_module_examples_run():
    assert doctest.testmod(segments).failed == 0 and doctest.testmod(steps).failed == 0


def test_segments_start_across_the_whole_stream_and_the_same_seed_starts_the_same_room():
    env = SegmentEnv(gym.make("LiveRoom-v0"), turns=3)
    starts = []
    for seed in range(12):
        _, info = env.reset(seed=seed)
        starts.append(env.unwrapped.room.clock)
        assert info["messages"][-1]["role"] == "user"  # handed over at a room update
        assert info["reward_breakdown"]["total"] == 0.0 and env.unwrapped.room.returns["total"] == 0.0
    assert max(starts) > 600 and min(starts) < 300  # a 900 s stream, sampled well past its first steps
    obs_a, _ = env.reset(seed=5)
    obs_b, _ = SegmentEnv(gym.make("LiveRoom-v0"), turns=3).reset(seed=5)
    assert obs_a == obs_b


def test_a_segment_plays_k_turns_and_counts_only_the_policys_reward():
    env = SegmentEnv(gym.make("LiveRoom-v0"), turns=4)
    result = play(env, lambda obs, info: "@all Welcome in, ask me anything!", 7, record=True)
    assert len(result.turn_rewards) == 4 and result.truncated
    assert result.returns["total"] == pytest.approx(sum(t["total"] for t in result.turn_rewards))


def test_trl_rows_of_segments_reopen_the_same_room_the_prompt_shows():
    rows = make_dataset("LiveRoom-v0", n=2, seed=3, segment_turns=2)
    assert all(r["turns"] == 2 and r["start_s"] == segment_start(r["seed"], 900.0) for r in rows)
    env = make_environment_factory("LiveRoom-v0")()
    assert env.reset(**rows[0]) is None  # the row's prompt already holds this room
    assert env.segment["played_before"] > 0
    env.reply("@all Welcome in!")
    text = env.reply("@all Ask me anything!")
    assert env.done and "part of the stream is over" in text
    with pytest.raises(ValueError):
        env.reply("again")


def test_steps_are_labelled_tool_reply_and_hook_retry():
    script = iter(['{"tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_promotions", '
                   '"arguments": "{}"}}]}', "@all this is the best in the world", "@all Welcome in!"])
    env = SegmentEnv(gym.make("LiveRoom-v0"), turns=3, start_turn=0)
    result = play(env, lambda obs, info: next(script), 0, record=True)
    assert [t["segment"] for t in result.turn_rewards] == ["tool", "reply", "hook_retry"]
    assert "banned_phrases:block_retry" in result.turn_rewards[1]["hooks"]


def test_a_segment_that_stops_early_is_charged_for_the_room_it_leaves():
    # Room.settle plays the rest of the stream with no host: what expires and who leaves
    # unanswered is charged to the segment's last step (the outcome component).
    env = SegmentEnv(gym.make("LiveRoom-v0"), turns=1)
    env.reset(seed=1)
    _, reward, _, truncated, info = env.step("@all Welcome in!")
    settled = info["early_end"]
    assert truncated and settled["total"] < 0 and settled["outcome"] < 0
    assert reward == pytest.approx(info["reward_breakdown"]["total"])
    from liveroom_sim.integrations.trl import liveroom_reward_total

    trl_env = make_environment_factory("LiveRoom-v0")()
    trl_env.reset(seed=1)
    before = trl_env.reward
    [after] = liveroom_reward_total(prompts=[None], completions=[None], environments=[trl_env])
    assert after < before
    # settling is idempotent: reading the reward again charges nothing more
    assert liveroom_reward_total(prompts=[None], completions=[None], environments=[trl_env]) == [after]
