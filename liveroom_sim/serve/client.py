"""The typed OpenEnv client of a served room (OpenEnv's ``EnvClient``, LiveRoom's types).

Any OpenEnv client speaks to ``liveroom serve``: ``GenericEnvClient`` with plain dicts
needs nothing of LiveRoom installed. This one parses answers into
:class:`~liveroom_sim.serve.models.RoomObservation` and
:class:`~liveroom_sim.serve.models.RoomState`::

    from liveroom_sim.serve.client import LiveRoomClient, RoomAction

    with LiveRoomClient(base_url="http://127.0.0.1:8000").sync() as room:
        result = room.reset(seed=0)
        result = room.step(RoomAction(message="Welcome in, everyone!"))
        print(result.reward, result.observation.info["reward_breakdown"])

With a bearer token, put it in the URL (``http://liveroom:<token>@127.0.0.1:8000``): the
WebSocket library sends it as HTTP Basic credentials, which the server accepts.
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from liveroom_sim.serve.models import RoomAction, RoomObservation, RoomState

__all__ = ["LiveRoomClient", "RoomAction", "RoomObservation", "RoomState"]


class LiveRoomClient(EnvClient[RoomAction, RoomObservation, RoomState]):
    """OpenEnv's WebSocket client, typed for a LiveRoom session (one room per client)."""

    def _step_payload(self, action: RoomAction | str) -> dict[str, Any]:
        if isinstance(action, str):  # the action as the Gymnasium env takes it
            action = RoomAction(message=action)
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[RoomObservation]:
        # The server built these fields from its own models: taken as they are, not validated again.
        observation = RoomObservation.model_construct(**payload.get("observation", {}), reward=payload.get("reward"),
                                                      done=payload.get("done", False), metadata={})
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> RoomState:
        return RoomState(**payload)
