"""veRL rows for both APIs, and the legacy interaction's guard against veRL 0.7.1's leak."""

from __future__ import annotations

import asyncio

import pytest

from liveroom_sim.integrations.verl import LiveRoomInteraction, make_rows
from liveroom_sim.trajectory.segments import segment_start


def test_agent_loop_rows_pick_the_loop_and_carry_the_segment():
    rows = make_rows("LiveRoom-v0", n=2, seed=4, agent_name="liveroom", segment_turns=24)
    for i, row in enumerate(rows):
        assert row["agent_name"] == "liveroom" and "interaction_kwargs" not in row["extra_info"]
        room = row["extra_info"]["liveroom"]
        assert room == {"seed": 4 + i, "env_id": "LiveRoom-v0", "turns": 24, "start_s": segment_start(4 + i, 900.0)}
        assert [m["role"] for m in row["prompt"]] == ["system", "user"]
        assert "Earlier in this stream" in row["prompt"][1]["content"] or room["start_s"] < 5


def test_legacy_rows_run_veRLs_tool_agent_loop_not_the_single_turn_one():
    row = make_rows("LiveRoom-v0", n=1)[0]
    assert row["agent_name"] == "tool_agent" and row["extra_info"]["interaction_kwargs"]["seed"] == 0
    with pytest.raises(ValueError, match="agent_name"):
        make_rows("LiveRoom-v0", n=1, segment_turns=4)


def test_legacy_interaction_closes_rooms_veRL_never_finalizes():
    room = LiveRoomInteraction({"name": "liveroom", "env_id": "LiveRoom-v0", "max_open": 2})

    async def open_three():
        return [await room.start_interaction(f"r{i}", seed=i) for i in range(3)]

    ids = asyncio.run(open_three())
    with pytest.raises(KeyError):  # the oldest was closed
        asyncio.run(room.calculate_score(ids[0]))
    assert all(isinstance(asyncio.run(room.calculate_score(i)), float) for i in ids[1:])  # the two newest are open
