"""Rebuilding a case's room as of its turn, and what the policy is shown there.

A case is not a pickled room: it is the recipe for one (env, seed, HSA operators and the
reference host's actions before the turn), replayed on the simulator of this release.
The digest of what the policy is shown (messages and tools) is checked against the one
recorded when the suite was generated, so a case that no longer reproduces (the simulator
changed its behaviour) is an error of that case, named as such, not a silently
different test.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from functools import lru_cache

from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.harness.augment import AugmentConfig
from liveroom_sim.spec import World, load_spec

#: Tool turns a policy may take before its reply, when the harness sets no limit of its own.
DEFAULT_TURN_LIMIT = 4


class StaleCase(RuntimeError):
    """The case's room no longer reproduces on this simulator."""


def world_for(env: str, mix: dict[str, float] | None = None) -> World:
    """The loaded spec of a registered env id, with the case's persona ``mix`` when it has
    one (a room where more viewers bait and inject; everything else is the spec's)."""
    return _world(env, tuple(sorted(mix.items())) if mix else None)


@lru_cache(maxsize=16)
def _world(env: str, mix: tuple | None) -> World:
    import gymnasium as gym

    import liveroom_sim  # noqa: F401 - registers the built-in specs

    world = load_spec(gym.spec(env).kwargs["spec"])
    if mix is None:
        return world
    viewers = world.spec.viewers.model_copy(update={"mix": dict(mix)})
    return world.model_copy(update={"spec": world.spec.model_copy(update={"viewers": viewers})})


def augmentation(operators: tuple[str, ...]) -> AugmentConfig | None:
    """The HSA settings that give a case's harness: its operators, always applied."""
    return AugmentConfig(probability=1.0, operators=tuple(operators)) if operators else None


def context_digest(info: dict) -> str:
    """sha256 of what the policy is shown: the messages and the tool schemas."""
    blob = json.dumps([info["messages"], info["tools"]], ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def turn_limit(harness) -> int:
    """The tool turns allowed before the reply: the harness's own limit when its
    constraints set one (``max_tool_turns``; this release's harness files have none),
    else :data:`DEFAULT_TURN_LIMIT`."""
    limit = getattr(harness.constraints, "max_tool_turns", None)
    return int(limit) if limit else DEFAULT_TURN_LIMIT


class Snapshot:
    """A case's room, replayed to its turn: ``fork()`` gives an independent copy for each
    sample (cheaper than replaying again)."""

    def __init__(self, env: str, seed: int, operators: tuple[str, ...], prefix: tuple[str, ...],
                 mix: dict[str, float] | None = None):
        self.env = LiveRoomEnv(world_for(env, mix), harness_augmentation=augmentation(operators))
        self.obs, self.info = self.env.reset(seed=seed)
        for action in prefix:
            self.obs, _, term, trunc, self.info = self.env.step(action)
            if term or trunc:
                raise StaleCase(f"the stream ended after {self.env.room.steps} of the case's {len(prefix)} "
                                "prefix actions")
        self._frozen: bytes | None = None

    @classmethod
    def of(cls, case) -> "Snapshot":
        """A case's room at its turn, its digest checked (raises :class:`StaleCase`)."""
        snap = cls(case.env, case.seed, case.operators, case.prefix, case.mix)
        snap.check(case.digest)
        return snap

    def check(self, digest: str) -> None:
        found = context_digest(self.info)
        if found != digest:
            raise StaleCase(f"the room no longer reproduces (context digest {found[:12]}, the case's {digest[:12]}): "
                            "the simulator changed since the suite was generated; regenerate it")

    def fork(self, samples: int) -> list[tuple[LiveRoomEnv, str, dict]]:
        """``samples`` independent ``(env, observation, info)``; the first is this one."""
        if samples == 1:
            return [(self.env, self.obs, self.info)]
        frozen = pickle.dumps((self.env, self.obs, self.info), protocol=pickle.HIGHEST_PROTOCOL)
        return [pickle.loads(frozen) for _ in range(samples)]
