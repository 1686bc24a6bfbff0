"""TRL through OpenEnv: a served room as TRL's ``environment_factory`` environment.

TRL's ``GRPOTrainer(environment_factory=...)`` builds one environment per rollout, calls
``reset(**row)`` with the dataset row, offers the environment's public methods as tools,
and reads rewards from the environments in a reward function (TRL's OpenEnv guide: an
OpenEnv client inside such a class). :class:`ServedRoomToolEnv` is that class for a room
served by ``liveroom serve``: each rollout opens its own session (one room) over OpenEnv's
WebSocket, and its tools are

- ``reply(message)``: speak to the room (a step); returns the next room update;
- ``use_tool(name, arguments)``: call one of the room's tools by the name the room's tool
  list gives *now* (under Harness-State Augmentation the names change, and the model must
  read them), with its arguments as a JSON object; returns the tool's answer.

:func:`served_room_reward` is the reward function (each rollout's return). The in-process
adapter, :mod:`liveroom_sim.integrations.trl`, needs no server; this one puts the rooms
on another machine or a Ray cluster (``liveroom serve --ray-address``).
"""

from __future__ import annotations

import functools
import json

from liveroom_sim.integrations.trl import TOOL_MODE_NOTE, LiveRoomToolEnv, _after_last_assistant

_ENDED = "[The stream has ended. Stop calling tools.]"


class ServedRoomToolEnv:
    """One served session per rollout, in the shape of TRL's ``environment_factory``.

    Args:
        base_url: The server (``http://host:8000``; ``http://liveroom:<token>@host:8000`` with a token).
        seed: The seed for dataset rows without a ``seed`` column.

    Attributes:
        reward: The rollout's return so far (the steps' rewards, MCP tool turns included).
        done: Whether the stream has ended (then the tools raise ``ValueError``).
    """

    def __init__(self, base_url: str, seed: int = 0):
        from liveroom_sim.serve.client import LiveRoomClient

        self.base_url, self.seed = base_url, int(seed)
        self._client = LiveRoomClient(base_url=base_url).sync()
        self.reward, self.done = 0.0, True

    def reset(self, **row) -> str | None:
        """Open the row's stream (``seed`` column, else the default seed); returns its opening as text."""
        seed = row.get("seed")
        result = self._client.reset(seed=self.seed if seed is None else int(seed))
        self.reward, self.done = 0.0, False
        return f"{result.observation.prompt}\n\n{TOOL_MODE_NOTE}"

    # The in-process adapter's tool, its description included (it calls ``self._step``).
    reply = LiveRoomToolEnv.reply

    def use_tool(self, name: str, arguments: str) -> str:
        """Call one of the room's tools, by the name its tool list gives now.

        Args:
            name: The tool's name, exactly as listed.
            arguments: The tool's arguments as a JSON object, with the field names listed.

        Returns:
            The tool's answer as JSON, or an error that says what went wrong.
        """
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError as e:
            raise ValueError(f"arguments must be a JSON object: {e}") from None
        call = {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(parsed)}}
        return self._step(json.dumps({"content": "", "tool_calls": [call]}))

    def _step(self, action: str) -> str:
        if self.done:
            raise ValueError("The stream is over. Stop calling tools.")
        result = self._client.step(action)
        self.reward += result.reward or 0.0
        self.done = bool(result.done)
        answer = "\n\n".join(m.get("content") or ""
                             for m in _after_last_assistant(result.observation.info["messages"]))
        return f"{answer}\n\n{_ENDED}" if self.done else answer

    def close(self) -> None:
        self._client.close()


def served_room_factory(base_url: str, seed: int = 0):
    """A zero-argument factory for ``GRPOTrainer(environment_factory=...)``."""
    return functools.partial(ServedRoomToolEnv, base_url, seed)


def served_room_reward(environments, **kwargs) -> list[float]:
    """TRL reward function: each rollout's return in its served room."""
    return [env.reward for env in environments]
