"""LiveRoom as a verifiers v1 plugin: its taskset, its env (the room plays the user) and its harness.

verifiers 0.4 (``import verifiers.v1 as vf``) resolves a plugin by id: an installed module
whose ``__all__`` exports one ``vf.Taskset`` subclass, and optionally one ``vf.Env`` (how a
task becomes an episode) and one ``vf.Harness`` (the taskset's default harness). This
module holds such a plugin's classes; the environment package
``examples/verifiers_env/liveroom_env`` (top-level module ``liveroom_env``, id
``liveroom-env``, for the Environments Hub) re-exports them.

- **Taskset**: one task per seed (``seed .. seed+num_tasks-1``) of a registered env or
  spec; optionally a segment of ``segment_turns`` steps from a seeded start
  (:mod:`liveroom_sim.trajectory.segments`).
- **Env**: the room plays the user, as verifiers' own ``openenv`` and ``textarena``
  tasksets do with their engines. ``run()`` opens the stream, hands its opening (system
  prompt and first room update) to the ``streamer`` seat as the first turn, turns each
  reply into the room's action, steps the room and sends what the room answered (tool
  results, the viewers' next messages) as the next turn, until the stream or segment ends
  or verifiers ends the exchange (``max_turns``, a stop). A stream stopped early gets the
  room's early-end settlement.
- **Harness**: an in-process chat loop, one model call per segment through verifiers'
  interception endpoint (so every call lands on the trace and, with the train client,
  carries tokens), offering the room's tools as the harness names them *now* (HSA
  renames included), read from the trace's state each turn. The room runs the tools:
  the harness never does.
- **Rewards**: the task's ``@vf.reward`` functions read the episode the env recorded on
  ``trace.info["liveroom"]``: ``liveroom_return`` (weight 1, the LiveRoom return) and one
  keyed reward per component (weight 0, logged beside it). ``trace.info["liveroom"]`` also
  holds the metrics and the provenance (LiveRoom version, spec and reward digests).

This module imports verifiers: import it only where verifiers runs. Everything that needs
no verifiers lives in :mod:`liveroom_sim.integrations.verifiers`.
"""

from __future__ import annotations

from typing import Any

import verifiers.v1 as vf
from pydantic import Field, model_validator

from liveroom_sim.integrations.verifiers import (
    DEFAULT_ENV_ID,
    EpisodeTally,
    check_env,
    component_rewards,
    in_room_thread,
    open_room,
    recorded_episode,
    room_answer,
)
from liveroom_sim.integrations.verl import action_from_message

__all__ = ["LiveRoomEnv", "LiveRoomHarness", "LiveRoomTaskset"]


# ------------------------------------------------------------------ taskset
class LiveRoomData(vf.TaskData):
    """One stream (or segment of one) to play: the env, its seed and how much of it."""

    env_id: str = DEFAULT_ENV_ID
    spec: str | None = None
    seed: int = 0
    segment_turns: int | None = None
    env_kwargs: dict[str, Any] = Field(default_factory=dict)


class LiveRoomState(vf.State):
    """What the env tells the harness between turns: the room's tools as of now."""

    tools: list[dict] = Field(default_factory=list)


class LiveRoomTask(vf.Task[LiveRoomData, LiveRoomState]):
    """A LiveRoom stream, scored by the room's own reward model."""

    @property
    def key(self) -> str:
        segment = f"/turns={self.data.segment_turns}" if self.data.segment_turns else ""
        return f"{self.data.spec or self.data.env_id}/seed={self.data.seed}{segment}"

    @vf.reward(weight=1.0)
    async def liveroom_return(self, trace: vf.Trace) -> float:
        """The episode's LiveRoom return: the sum of its steps' totals (and the settlement)."""
        return float(recorded_episode(trace.info)["returns"]["total"])

    @vf.reward(weight=0.0)
    async def liveroom_components(self, trace: vf.Trace) -> dict[str, float]:
        """The return by reward component (``liveroom_factuality``...), logged at weight 0."""
        return component_rewards(recorded_episode(trace.info)["returns"])


class LiveRoomTasksetConfig(vf.TasksetConfig):
    """Which streams: ``--env.taskset.env-id``, ``--env.taskset.seed``, ``--env.taskset.num-tasks``..."""

    env_id: str = DEFAULT_ENV_ID
    """A registered LiveRoom env id (``LiveRoom-v0``...), or the id to register ``spec`` under."""
    spec: str | None = None
    """A spec file of your own (YAML); registered in every process that plays it."""
    seed: int = 0
    """The first task's seed; task i plays seed ``seed + i``."""
    num_tasks: int = Field(64, ge=1)
    segment_turns: int | None = Field(None, ge=1)
    """Play segments of this many room steps from a seeded start instead of whole streams."""
    env_kwargs: dict[str, Any] = Field(default_factory=dict)
    """Passed to ``gym.make`` (e.g. ``{"harness_augmentation": {"probability": 1.0}}``)."""

    @model_validator(mode="after")
    def _known_env(self):
        check_env(self.env_id, self.spec)  # a clear error at config time, not in every rollout
        return self


class LiveRoomTaskset(vf.Taskset[LiveRoomTask, LiveRoomTasksetConfig]):
    """One task per seed; the prompt is the room's (``None`` here: the env opens the stream)."""

    def load(self) -> list[LiveRoomTask]:
        c = self.config
        return [LiveRoomTask(LiveRoomData(name=f"{c.spec or c.env_id}#{s}", env_id=c.env_id, spec=c.spec, seed=s,
                                          segment_turns=c.segment_turns, env_kwargs=c.env_kwargs), c.task)
                for s in range(c.seed, c.seed + c.num_tasks)]


# ------------------------------------------------------------------ harness
class LiveRoomHarnessConfig(vf.HarnessConfig):
    """The LiveRoom chat loop has no knobs of its own; sampling comes from the run."""


class LiveRoomHarness(vf.Harness[LiveRoomHarnessConfig]):
    """One model call per segment, in process, with the room's current tools offered."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True  # each segment relaunches on the conversation so far
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(self, ctx, trace, runtime, endpoint, secret, mcp_urls, data, **kwargs):
        from openai import AsyncOpenAI
        from verifiers.v1.dialects.chat import message_to_wire

        system, prompt = self.resolve_prompt(data)
        messages = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [message_to_wire(m) for m in prompt or ()]
        tools = getattr(trace.state, "tools", None) or []
        request: dict[str, Any] = {"model": ctx.model, "messages": messages}
        if tools:
            request["tools"] = tools
        # The interception server records the call on the trace and applies the run's
        # sampling; retries are its client's business, not this loop's.
        async with AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0) as client:
            await client.chat.completions.create(**request)
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


# ------------------------------------------------------------------ env
class LiveRoomEnvConfig(vf.EnvConfig):
    streamer: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The policy: the stream's host. Its harness defaults to the taskset's (LiveRoomHarness);
    ``--env.streamer.max-turns`` caps its model calls (tool turns included)."""


class LiveRoomEnv(vf.Env[LiveRoomEnvConfig]):
    """The room plays the user: each reply steps it, and its answer is the next turn."""

    async def run(self, task: LiveRoomTask, agents) -> None:
        data = task.data
        env, info = await in_room_thread(open_room, data.env_id, data.spec, data.seed, data.segment_turns,
                                            data.env_kwargs)
        try:
            async with agents.streamer.interaction(task) as interaction:
                episode = await self._play(env, info, interaction)
                interaction.trace.info["liveroom"] = episode
        finally:
            await in_room_thread(env.close)

    async def _play(self, env, info, interaction) -> dict:
        tally = EpisodeTally(env, seed=interaction.trace.task.data.seed)
        turn: list[dict] = tally.opening(info)
        while True:
            interaction.trace.state.tools = list(info["tools"])
            segment = await interaction.turn(turn)
            if segment.terminated:
                break
            reply = _last_assistant(segment.messages)
            _, _, terminated, truncated, info = await in_room_thread(env.step, action_from_message(reply))
            tally.add(info)
            if terminated or truncated:
                tally.ended(terminated, truncated)
                break
            turn = room_answer(info["messages"])
        return await in_room_thread(tally.result)  # the settlement steps the room too


def _last_assistant(messages) -> dict:
    """The segment's last assistant message in OpenAI's shape (what the room parses)."""
    from verifiers.v1.dialects.chat import message_to_wire

    for message in reversed(messages):
        if message.role == "assistant":
            return message_to_wire(message)
    return {"role": "assistant", "content": ""}
