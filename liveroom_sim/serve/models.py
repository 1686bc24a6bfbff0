"""What travels over the wire: LiveRoom's action, observation and state as OpenEnv types.

OpenEnv's server library (``openenv-core``) validates every message against these
pydantic models, and its clients parse them back: ``/schema`` publishes them. The action
is exactly what :meth:`liveroom_sim.env.LiveRoomEnv.step` takes; the observation carries
the Gymnasium step's five values (``prompt`` is the observation text, ``reward``,
``terminated``, ``truncated`` and ``info``), so a served episode reads the same numbers
as one played in process.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field


class RoomAction(Action):
    """One policy action: a reply to the room, or a JSON assistant message with ``tool_calls``."""

    message: str = Field(description="Plain text is a reply to the room (address a viewer as @name); a JSON "
                                     "OpenAI assistant message with tool_calls is a tool turn.")


class RoomObservation(Observation):
    """The room after a reset or a step (``done`` is ``terminated or truncated``)."""

    prompt: str = Field(description="The next-turn prompt as text (Gymnasium's observation).")
    info: dict[str, Any] = Field(default_factory=dict, description="Gymnasium's info: messages, tools, "
                                 "reward_breakdown, events, metrics, ...; reset's also holds the session "
                                 "and its provenance.")
    terminated: bool = Field(default=False, description="The stream's scheduled time is over.")
    truncated: bool = Field(default=False, description="The step limit was reached.")


class RoomState(State):
    """A session's room as the operator sees it (no ground truth)."""

    session_id: str = Field(description="This session's id (its MCP tools live at /sessions/<id>/mcp).")
    env_id: str = Field(description="The registered env the session plays.")
    seed: int | None = Field(default=None, description="The seed of the current episode.")
    terminated: bool = False
    truncated: bool = False
    episode_return: float = Field(default=0.0, description="The sum of the episode's rewards so far.")
    crashed: str | None = Field(default=None, description="Why the room crashed, until the next reset.")
    provenance: dict[str, str] = Field(default_factory=dict, description="LiveRoom version, spec id and "
                                       "digests of the spec's files and reward configuration.")
