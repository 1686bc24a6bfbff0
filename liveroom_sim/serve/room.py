"""One served session's room, as an OpenEnv ``Environment``.

OpenEnv's server builds one :class:`RoomEnvironment` per session (per WebSocket) and calls
its ``reset``/``step`` in that session's worker thread. The room itself is a
:class:`LocalRoom` (a Gymnasium env in this process) or, with ``--ray-address``, a room
held by a Ray actor (:mod:`liveroom_sim.serve.ray_rooms`); both answer plain JSON values.

What the session adds to the room:

- **Errors a client can act on.** Stepping before reset, after the episode's end, or a
  malformed reset is a :class:`RequestError` with a reason; a room that raises is marked
  crashed (:class:`RoomCrashed`) until the next reset, and no other session notices.
- **Provenance.** Reset's ``info["session"]`` names the session, where its MCP tools are,
  and :func:`liveroom_sim.provenance.provenance` of the spec.
- **MCP tool turns.** :meth:`call_tool` runs a tool call the agent made over MCP as a tool
  turn of this room (the harness's current names, the episode's faults); the trainer's
  next step reports those turns in ``info["mcp_tool_turns"]`` and adds their rewards to
  its reward, so the episode's return is the same as if the trainer had stepped them
  (when such a turn ends the stream, that step reports the end and does not play its action).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from liveroom_sim.errors import LiveRoomError
from liveroom_sim.integrations.trl import _after_last_assistant  # what the room answered a turn
from liveroom_sim.serve.models import RoomAction, RoomObservation, RoomState
from liveroom_sim.serve.sessions import Sessions

_RESET_OPTIONS = ("harness_variant", "tool_faults")


class RequestError(LiveRoomError, ValueError):
    """A request the session cannot serve as asked; ``status`` is the HTTP status to answer."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


class RoomCrashed(RequestError):
    """The session's room raised; the session answers this until it is reset."""

    def __init__(self, message: str):
        super().__init__(message, status=409)


class LocalRoom:
    """A Gymnasium env of ``env_id`` in this process, answering plain JSON values."""

    def __init__(self, env_id: str):
        import gymnasium as gym

        import liveroom_sim  # noqa: F401  (registers the built-in specs)

        self.env = gym.make(env_id)

    def reset(self, seed: int | None, options: dict | None) -> dict:
        prompt, info = self.env.reset(seed=seed, options=options)
        return {"prompt": prompt, "info": plain(info)}

    def step(self, action: str) -> dict:
        prompt, reward, terminated, truncated, info = self.env.step(action)
        return {"prompt": prompt, "reward": reward, "terminated": terminated, "truncated": truncated,
                "info": plain(info)}

    def tools(self) -> list[dict]:
        """The current harness's tool schemas (OpenAI format), as the policy is shown them."""
        return self.env.unwrapped.room.tools()

    def close(self) -> None:
        self.env.close()


def plain(info: dict) -> dict:
    """``info`` with every lazily built entry built (a plain ``dict`` for the wire)."""
    return {key: info[key] for key in info}


class RoomEnvironment(Environment[RoomAction, RoomObservation, RoomState]):
    """A session's room (OpenEnv builds one per session: ``SUPPORTS_CONCURRENT_SESSIONS``).

    Args:
        env_id: The registered env to play.
        sessions: The server's session registry and counters.
        provenance: The spec's provenance, stated at every reset.
        make_room: Builds the room (``env_id -> LocalRoom``-like); the Ray backend passes its own.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, env_id: str, sessions: Sessions, provenance: dict[str, str], make_room=LocalRoom):
        super().__init__()
        self.env_id, self.sessions, self.provenance, self._make_room = env_id, sessions, provenance, make_room
        # Registered at the first reset: OpenEnv also builds throwaway instances (for /metadata).
        self.session_id = sessions.new_id()
        self._room = None
        self._lock = threading.Lock()  # the trainer's steps and the agent's MCP calls take turns
        self.last_active = time.monotonic()
        self._closed: str | None = None
        self._crashed: str | None = None
        self._seed: int | None = None
        self._steps, self._return = 0, 0.0
        self._terminated = self._truncated = False
        self._pending: list[dict] = []
        self._last: dict | None = None  # the latest MCP tool turn's answer

    # ------------------------------------------------------------------ control loop
    def reset(self, seed: int | None = None, episode_id: str | None = None, options: dict | None = None,
              **unknown: Any) -> RoomObservation:
        if unknown:
            raise RequestError(f"reset takes seed, episode_id and options; unknown: {', '.join(sorted(unknown))}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise RequestError(f"seed must be a non-negative integer or null, got {seed!r}")
        if options is not None and (not isinstance(options, dict) or set(options) - set(_RESET_OPTIONS)):
            raise RequestError(f"options must be an object with keys among {', '.join(_RESET_OPTIONS)}, "
                               f"got {options!r}")
        with self._lock:
            self._check_open()
            if self._room is None:
                self._room = self._make_room(self.env_id)
                self.sessions.open(self.session_id, self)
            try:
                out = self._room.reset(seed, options)
            except (LiveRoomError, ValueError) as e:  # e.g. a bad pinned tool fault: the client's error
                raise RequestError(f"reset failed: {e}") from e
            except Exception as e:
                raise self._crash("reset", e) from e
            self._seed, self._steps, self._return = seed, 0, 0.0
            self._terminated = self._truncated = False
            self._crashed, self._pending = None, []
            self.sessions.count("episodes")
            out["info"]["session"] = {"id": self.session_id, "mcp_path": f"/sessions/{self.session_id}/mcp",
                                      "episode_id": episode_id, "provenance": dict(self.provenance)}
            return RoomObservation.model_construct(prompt=out["prompt"], info=out["info"], reward=None, done=False,
                                                   terminated=False, truncated=False, metadata={})

    def step(self, action: RoomAction, timeout_s: float | None = None, **unknown: Any) -> RoomObservation:
        with self._lock:
            if self._pending and (self._terminated or self._truncated):
                # The stream ended on a tool turn the agent took over MCP: this step reports
                # that end and those turns (the action comes too late to be played).
                out = {**self._last, "reward": 0.0}
            else:
                self._check_playing()
                out = self._advance(action.message)
            pending, self._pending = self._pending, []
            if pending:  # tool turns the agent took over MCP since the last step
                out["info"]["mcp_tool_turns"] = pending
                out["reward"] += sum(t["reward"] for t in pending)
            return self._observation(out)

    @property
    def state(self) -> RoomState:
        return RoomState(session_id=self.session_id, env_id=self.env_id, seed=self._seed, step_count=self._steps,
                         terminated=self._terminated, truncated=self._truncated, episode_return=self._return,
                         crashed=self._crashed, provenance=dict(self.provenance))

    def get_metadata(self) -> EnvironmentMetadata:
        from liveroom_sim import __version__

        return EnvironmentMetadata(name=self.env_id, version=__version__,
                                   description="LiveRoom: a live-commerce stream where simulated viewers ask, "
                                               "bait, buy and leave; the policy hosts it. One room per session.",
                                   documentation_url="docs/serving.md")

    def close(self) -> None:
        with self._lock:
            if self._closed is not None:
                return
            timeout = self.sessions.idle_timeout_s
            expired = timeout is not None and time.monotonic() - self.last_active >= timeout
            self._closed = "expired after being idle" if expired else "closed"
            self.sessions.close(self.session_id, expired=expired)
            if self._room is not None:
                self._room.close()
                self._room = None

    # ------------------------------------------------------------------ MCP tools
    def tools(self) -> list[dict]:
        """The harness's tools as the policy is shown them now (OpenAI format)."""
        with self._lock:
            self._check_open()
            if self._room is None:
                raise RequestError("this session's room has not been reset yet: the trainer resets it", 409)
            return self._room.tools()

    def call_tool(self, name: str, arguments: dict) -> tuple[str, bool]:
        """Run one tool call as a tool turn of this room; returns the tool's answer and whether it failed.

        The room parses the call against its current harness, so an old or unknown tool
        name, bad arguments and the episode's injected faults fail here as they would in
        a step (with the harness penalty), and the answer says why.
        """
        call = {"id": f"mcp_{self._steps + 1}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}
        with self._lock:
            self._check_playing()
            out = self._last = self._advance(json.dumps({"content": "", "tool_calls": [call]}, ensure_ascii=False))
            turn = out["info"].get("turn", {})
            self._pending.append({"tool": name, "reward": out["reward"],
                                  "reward_breakdown": out["info"]["reward_breakdown"],
                                  "tool_errors": turn.get("tool_errors", []),
                                  "tool_faults": turn.get("tool_faults", [])})
            self.sessions.count("tool_calls")
            answer = "\n".join(m.get("content") or "" for m in _after_last_assistant(out["info"]["messages"]))
            return answer, bool(turn.get("tool_errors") or turn.get("tool_faults"))

    # ------------------------------------------------------------------ internals
    def _advance(self, action: str) -> dict:
        try:
            out = self._room.step(action)
        except Exception as e:
            raise self._crash(f"step {self._steps + 1}", e) from e
        self._steps += 1
        self._return += out["reward"]
        self._terminated, self._truncated = bool(out["terminated"]), bool(out["truncated"])
        self.last_active = time.monotonic()
        self.sessions.count("steps")
        return out

    def _observation(self, out: dict) -> RoomObservation:
        # Built from the env's own values, so not validated again (a step's info is tens of kB).
        return RoomObservation.model_construct(
            prompt=out["prompt"], info=out["info"], reward=float(out["reward"]), metadata={},
            done=bool(out["terminated"] or out["truncated"]), terminated=bool(out["terminated"]),
            truncated=bool(out["truncated"]))

    def _crash(self, where: str, error: Exception) -> RoomCrashed:
        self._crashed = f"{type(error).__name__}: {error}"
        self.sessions.count("crashes")
        return RoomCrashed(f"the room crashed at {where} ({self._crashed}); this session needs a reset")

    def _check_open(self) -> None:
        self.last_active = time.monotonic()
        if self._closed is not None:
            raise RequestError(f"session {self.session_id} is {self._closed}: open a new session", 410)

    def _check_playing(self) -> None:
        self._check_open()
        if self._crashed is not None:
            raise RoomCrashed(f"the room crashed ({self._crashed}); this session needs a reset")
        if self._room is None:
            raise RequestError("reset the session before stepping it (over HTTP each request gets a fresh room: "
                               "sessions live on the WebSocket /ws)", 409)
        if self._terminated or self._truncated:
            raise RequestError("the episode is over: reset to start a new one", 409)


class InlineRoomEnvironment(RoomEnvironment):
    """A session whose room is in this process: steps run on the server's event loop, resets in a thread.

    OpenEnv runs a plain ``Environment``'s calls in a worker thread per session, and awaits
    ``step_async`` directly when an environment defines it, as this one does. A LiveRoom
    step is about a millisecond of pure Python, which the GIL serialises anyway, so the hop
    to the thread and back would add latency and no throughput (and on a busy machine each
    wake-up can wait for a time slice). A reset is tens of milliseconds (a new room's
    crowd, catalog and plan): it stays in OpenEnv's worker thread, where the interpreter
    switches to the event loop every few milliseconds, so other sessions' steps are not
    held up for the whole reset.
    """

    async def step_async(self, action: RoomAction, timeout_s: float | None = None, **unknown: Any) -> RoomObservation:
        return self.step(action, timeout_s=timeout_s, **unknown)
