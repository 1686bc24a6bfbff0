"""LiveRoom's NeMo-Gym resources server: a ``GymnasiumServer`` whose episodes are LiveRoom streams.

Played by NeMo-Gym's ``gymnasium_agent`` (see :mod:`liveroom_sim.integrations.nemo_gym`
for the protocol, the rows and the server folder). One room per NeMo-Gym session (the
session cookie the agent carries from ``/reset`` to each ``/step``); rooms never share a
generator. This module imports NeMo-Gym (``resources_servers.gymnasium``, shipped in the
``nemo-gym`` wheel): import it only in a NeMo-Gym server process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field
from resources_servers.gymnasium import GymnasiumServer

from liveroom_sim.integrations.nemo_gym import action_from_response, room_reply
from liveroom_sim.integrations.verifiers import DEFAULT_ENV_ID, EpisodeTally, in_room_thread, open_room

__all__ = ["LiveRoomResourcesServer"]

#: Open rooms kept at most; beyond, the oldest is closed (an agent that never finishes must not leak rooms).
MAX_OPEN = 4096


@dataclass
class _Episode:
    env: Any
    tally: EpisodeTally
    max_steps: int


class LiveRoomResourcesServer(GymnasiumServer):
    """LiveRoom streams over NeMo-Gym's Gymnasium-style ``/reset`` and ``/step``."""

    episodes: dict[str, Any] = Field(default_factory=dict)

    async def reset(self, metadata: dict, session_id: str | None = None) -> tuple[str | None, dict]:
        """Open the row's stream; the row's prompt already holds its opening, so no observation."""
        room = _room_row(metadata)
        await self.close_session(session_id)
        env, info = await in_room_thread(open_room, room.get("env_id") or DEFAULT_ENV_ID, room.get("spec"),
                                            int(room.get("seed") or 0), room.get("segment_turns"),
                                            room.get("env_kwargs"))
        self.episodes[session_id] = _Episode(env, EpisodeTally(env, int(room.get("seed") or 0)),
                                             int(room.get("max_steps") or 0))
        while len(self.episodes) > MAX_OPEN:
            await self.close_session(next(iter(self.episodes)))
        return None, {"tools": [t["function"]["name"] for t in info["tools"]]}

    async def step(self, action, metadata: dict, session_id: str | None = None):
        """Step the room with the model's response; the viewers answer (or the tools do)."""
        episode = self.episodes.get(session_id)
        if episode is None:  # a bad request is an answer, not a crash of the server
            return None, 0.0, False, True, {"error": "no LiveRoom episode for this session: call /reset first"}
        env, tally = episode.env, episode.tally
        act = action_from_response(action.model_dump())
        _, reward, terminated, truncated, info = await in_room_thread(env.step, act)
        tally.add(info)
        capped = bool(episode.max_steps) and tally.steps >= episode.max_steps
        if not (terminated or truncated or capped):
            observation, tool_outputs = room_reply(info["messages"])
            return observation, float(reward), False, False, {"tool_outputs": tool_outputs} if tool_outputs else {}
        tally.ended(terminated, truncated)
        result = await in_room_thread(tally.result)  # settles a stream stopped by the cap, into the returns
        if not (terminated or truncated):
            reward += result["early_end"].get("total", 0.0)
            truncated = True
        return None, float(reward), bool(terminated), bool(truncated), {"liveroom": result}

    async def close_session(self, session_id: str | None) -> None:
        episode = self.episodes.pop(session_id, None)
        if episode is not None:
            await in_room_thread(episode.env.close)
        await super().close_session(session_id)


def _room_row(metadata: dict) -> dict:
    from fastapi import HTTPException

    room = metadata.get("liveroom")
    if not isinstance(room, dict):
        raise HTTPException(422, "the row carries no 'liveroom' settings: build rows with "
                                 "liveroom_sim.integrations.nemo_gym.make_rows")
    return room


if __name__ == "__main__":
    LiveRoomResourcesServer.run_webserver()
