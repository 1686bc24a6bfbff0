"""LiveRoom for verifiers (v1, ``verifiers>=0.4``): a v1 environment over LiveRoom's rooms.

:func:`load_environment` returns a ``vf.Env`` whose taskset is LiveRoom's seeds, whose
user is the room itself (its viewers' messages, the campaign's updates, the tool results),
whose tools are the harness's as named now (HSA renames included) and whose rewards are
LiveRoom's reward components. The verifiers classes live in
:mod:`liveroom_sim.integrations.verifiers_env`. verifiers resolves a plugin by the id of a
top-level module, so the installable package ``examples/verifiers_env/liveroom_env``
(module ``liveroom_env``, for the Environments Hub) gives them the id ``liveroom-env``:
with it installed, ``vf-eval liveroom-env`` runs them, in verifiers' env-server workers
too. Without it, :func:`load_environment` still works in this process (it lends the id
to :mod:`~liveroom_sim.integrations.verifiers_env`).

This module imports neither verifiers nor gymnasium until a function needs them. The
episode bookkeeping here (:func:`open_room`, :class:`EpisodeTally`, :func:`in_room_thread`)
is plain Python, shared with the NeMo-Gym server (:mod:`liveroom_sim.integrations.nemo_gym_server`).

Example (the Python equivalent of ``vf-eval``, against any OpenAI-compatible server)::

    import asyncio
    import verifiers.v1 as vf
    from liveroom_sim.integrations.verifiers import load_environment

    env = load_environment("LiveRoom-v0", num_tasks=2, segment_turns=8)
    ctx = vf.ModelContext(model="my-model", client=vf.EvalClientConfig(
        base_url="http://127.0.0.1:8000/v1", api_key_var="OPENAI_API_KEY"))

    async def main():
        async with env.serving():
            return [await env.run_episode(task, ctx) for task in env.taskset]

    episodes = asyncio.run(main())
    print(episodes[0].traces[0].reward, episodes[0].traces[0].info["liveroom"]["returns"])
"""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["DEFAULT_ENV_ID", "TASKSET_ID", "EpisodeTally", "check_env", "component_rewards", "in_room_thread",
           "load_environment", "open_room", "recorded_episode", "room_answer"]

DEFAULT_ENV_ID = "LiveRoom-v0"
#: The v1 plugin id of LiveRoom's taskset, env and harness: the top-level module ``liveroom_env``.
TASKSET_ID = "liveroom-env"
_PLUGIN_MODULE = "liveroom_env"


def load_environment(env_id: str = DEFAULT_ENV_ID, *, spec: str | None = None, seed: int = 0, num_tasks: int = 64,
                     segment_turns: int | None = None, env_kwargs: dict | None = None,
                     max_turns: int | None = None):
    """A verifiers v1 environment (``vf.Env``) playing LiveRoom streams.

    Args:
        env_id: A registered LiveRoom env id (or the id to register ``spec`` under).
        spec: A spec file of your own.
        seed: The first task's seed; task i plays seed ``seed + i``.
        num_tasks: How many tasks (streams) the taskset holds.
        segment_turns: Play segments of this many room steps from a seeded start
            (:mod:`liveroom_sim.trajectory.segments`) instead of whole streams.
        env_kwargs: Passed to ``gym.make`` (``harness_augmentation``...).
        max_turns: Caps the streamer's model calls per episode (verifiers' ``max_turns``).

    Raises:
        ValueError: an unknown env id or a bad spec, with what is known.
        ModuleNotFoundError: verifiers is not installed (``pip install 'liveroom_sim[verifiers]'``).
    """
    vf_env = _verifiers_env()
    taskset = vf_env.LiveRoomTasksetConfig(id=TASKSET_ID, env_id=env_id, spec=spec, seed=seed, num_tasks=num_tasks,
                                           segment_turns=segment_turns, env_kwargs=dict(env_kwargs or {}))
    streamer = vf_env.LiveRoomEnvConfig.model_fields["streamer"].default.model_copy(update={"max_turns": max_turns})
    return vf_env.LiveRoomEnv(vf_env.LiveRoomEnvConfig(taskset=taskset, streamer=streamer))


def _verifiers_env():
    """The plugin module; lends it the id ``liveroom-env`` when the Hub package is not installed."""
    import importlib
    import sys

    try:
        # By name: verifiers_env imports this module, and import-linter forbids the cycle.
        verifiers_env = importlib.import_module("liveroom_sim.integrations.verifiers_env")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "verifiers":
            raise ModuleNotFoundError("verifiers is not installed: pip install 'liveroom_sim[verifiers]'",
                                      name="verifiers") from exc
        raise
    try:
        importlib.import_module(_PLUGIN_MODULE)
    except ModuleNotFoundError:
        # Only this process sees the alias: env-server workers (vf-eval's default) import
        # the id themselves and need the package (pip install examples/verifiers_env/liveroom_env).
        sys.modules[_PLUGIN_MODULE] = verifiers_env
    return verifiers_env


def check_env(env_id: str, spec: str | None = None) -> None:
    """Fail early, with a message, on an env id or spec file LiveRoom cannot open.

    Raises:
        ValueError: naming the closest registered ids, or the spec's file and field.
    """
    import liveroom_sim
    from liveroom_sim.errors import LiveRoomError

    try:
        liveroom_sim.register_spec(spec, env_id) if spec is not None else liveroom_sim.resolve_env_id(env_id)
    except (LiveRoomError, OSError) as exc:
        raise ValueError(str(exc).strip("'\"")) from None


def open_room(env_id: str, spec: str | None, seed: int, segment_turns: int | None = None,
              env_kwargs: dict | None = None):
    """Make and reset the env for one task: ``(env, info)``; a segment starts at its seeded point."""
    import gymnasium as gym

    import liveroom_sim

    if spec is not None:
        env_id = liveroom_sim.register_spec(spec, env_id)
    env = gym.make(env_id, **dict(env_kwargs or {}))
    if segment_turns is not None:
        from liveroom_sim.trajectory.segments import SegmentEnv

        env = SegmentEnv(env, turns=int(segment_turns))
    _, info = env.reset(seed=int(seed))
    return env, info


@functools.cache
def _room_thread() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="liveroom-rooms")


async def in_room_thread(fn, *args):
    """``fn(*args)`` off the event loop, on the one thread of this process that runs rooms.

    Many episodes share a server's event loop; a room's step (the reward model) takes
    milliseconds, so it must not block the loop, but the simulator's shared caches (the
    reward's stemmer among them) are not thread-safe: two rooms stepped on two threads at
    once crash. One thread runs them all, in turn.
    """
    return await asyncio.get_running_loop().run_in_executor(_room_thread(), functools.partial(fn, *args))


def room_answer(messages: list[dict]) -> list[dict]:
    """What the room added after the latest action (tool results, hook notes, the next
    update), as chat messages for the next turn.

    >>> room_answer([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"},
    ...              {"role": "user", "content": "[00:05] mia: price?", "name": "room"}])
    [{'role': 'user', 'content': '[00:05] mia: price?'}]
    """
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return [{k: v for k, v in m.items() if k in ("role", "content", "tool_call_id")} for m in messages[last + 1:]]


def component_rewards(returns: dict[str, float]) -> dict[str, float]:
    """The return by component, keyed as the trace's rewards are (``liveroom_<component>``).

    >>> component_rewards({"factuality": 0.5, "outcome": -1.0, "total": -0.5})
    {'liveroom_factuality': 0.5, 'liveroom_outcome': -1.0}
    """
    return {f"liveroom_{k}": float(v) for k, v in returns.items() if k != "total"}


def recorded_episode(info: dict) -> dict:
    """The LiveRoom episode an env run left on a trace's ``info``.

    Raises:
        ValueError: the trace was not played by LiveRoom's env (nothing to score).
    """
    episode = info.get("liveroom")
    if not isinstance(episode, dict) or "returns" not in episode:
        raise ValueError("no LiveRoom episode on this trace: play the taskset with its own env "
                         f"(leave --env.id unset, or --env.id {TASKSET_ID}), not another one")
    return episode


class EpisodeTally:
    """The bookkeeping of one episode played through an adapter (verifiers, NeMo-Gym):
    returns, steps, the end.

    The return counts the policy's steps only (a segment's fast-forward is the reference
    host's), plus the room's early-end settlement when the exchange stops before the
    stream does: quitting is never free (:func:`liveroom_sim.trajectory.segments.settle_early_end`).
    """

    def __init__(self, env, seed: int):
        self.env, self.seed = env, int(seed)
        self.returns: dict[str, float] = {"total": 0.0}
        self.steps, self.terminated, self.truncated = 0, False, False
        self.early_end: dict[str, float] = {}

    @staticmethod
    def opening(info: dict) -> list[dict]:
        """The first turn: the system prompt and the room update (a segment's history told as text)."""
        from liveroom_sim.trajectory.segments import segment_prompt

        return segment_prompt(info["messages"])

    def add(self, info: dict) -> None:
        self.steps += 1
        for key, value in info["reward_breakdown"].items():
            self.returns[key] = self.returns.get(key, 0.0) + float(value)
        self.early_end = dict(info.get("early_end") or {})  # a segment settles its own last step

    def ended(self, terminated: bool, truncated: bool) -> None:
        self.terminated, self.truncated = bool(terminated), bool(truncated)

    def result(self) -> dict[str, Any]:
        """The episode as the trace keeps it (``trace.info["liveroom"]``), JSON-ready."""
        from liveroom_sim.provenance import provenance
        from liveroom_sim.trajectory.segments import settle_early_end

        room_env = self.env.unwrapped
        if not (self.terminated or self.truncated):
            self.early_end = settle_early_end(room_env.room)
            for key, value in self.early_end.items():
                self.returns[key] = self.returns.get(key, 0.0) + value
        return {"env_id": room_env.spec.id if room_env.spec else None, "seed": self.seed, "steps": self.steps,
                "terminated": self.terminated, "truncated": self.truncated, "returns": dict(self.returns),
                "early_end": self.early_end, "metrics": room_env.room.metrics(),
                "provenance": provenance(room_env.world)}
