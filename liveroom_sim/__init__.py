"""LiveRoom: a live-commerce room simulator served as a Gymnasium environment.

Importing the package registers every spec in ``envs/``::

    >>> import gymnasium as gym
    >>> import liveroom_sim
    >>> env = gym.make("LiveRoom-v0")
    >>> obs, info = env.reset(seed=0)
    >>> sorted(info)[:3]
    ['events', 'messages', 'metrics']
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym

from liveroom_sim.errors import LiveRoomError, SpecError, UnknownNameError
from liveroom_sim.world.paths import ENVS_DIR

__all__ = ["register_envs", "register_spec", "resolve_env_id", "LiveRoomError", "SpecError", "UnknownNameError", "__version__"]
__version__ = "0.1.0"

_ENTRY_POINT = "liveroom_sim.env:LiveRoomEnv"


def register_spec(path: str | Path, env_id: str | None = None) -> str:
    """Register a spec file of your own with Gymnasium; returns its id.

    The file is validated now, so a bad spec fails here with its path and field.

    Args:
        path: The spec YAML (its catalog, campaign, harness... paths are relative to it).
        env_id: The id to register; defaults to the spec's ``id``.

    Raises:
        SpecError: The spec is invalid, or ``env_id`` is a built-in env's id (or one
            registered without a spec file): a file never replaces it.
    """
    from liveroom_sim.spec import load_spec
    from liveroom_sim.world.paths import resolved

    world = load_spec(path)
    env_id = env_id or world.spec.id
    kwargs = {"spec": str(resolved(path))}
    known = gym.registry.get(env_id)
    if known is None or known.kwargs != kwargs or known.entry_point != _ENTRY_POINT:
        _check_not_shadowing(env_id, known, world)
        gym.register(id=env_id, entry_point=_ENTRY_POINT, kwargs=kwargs)
    return env_id


def _check_not_shadowing(env_id: str, known, world) -> None:
    """Refuse to point a built-in id (or one registered other than from a spec file) at
    this file's world: ``gym.make`` of that id anywhere in the process would return it.
    Another spec file's id may be taken over (an edited copy, re-registered); runs keep
    them apart by the spec's content digest (:mod:`liveroom_sim.provenance`)."""
    theirs = known.kwargs.get("spec") if known is not None and known.entry_point == _ENTRY_POINT else None
    if known is None or (theirs is not None and (Path(theirs).parent != ENVS_DIR
                                                 or Path(theirs).resolve() == Path(world.path))):
        return
    owner = "the built-in env" if theirs is not None else f"another env ({known.entry_point})"
    raise SpecError(world.path, [f"field 'id': {env_id!r} is registered already for {owner}; give this spec its "
                                 f"own id (e.g. 'My{env_id}'), or register it under another one"])


def register_envs() -> list[str]:
    """Register every built-in spec (``envs/<id>.yaml``); specs are read at ``make`` time."""
    ids = []
    for path in sorted(ENVS_DIR.glob("*.yaml")):
        if path.stem not in gym.registry:
            gym.register(id=path.stem, entry_point=_ENTRY_POINT, kwargs={"spec": str(path)})
        ids.append(path.stem)
    return ids


def resolve_env_id(env: str) -> str:
    """A registered env id for ``env``: an id, or a spec file (which gets registered).

    Raises:
        UnknownNameError: ``env`` is neither, with the closest registered ids.
    """
    if env.endswith((".yaml", ".yml")):
        env = register_spec(env)
    if env not in gym.registry:
        raise UnknownNameError("env", env, [k for k in gym.registry if k.startswith("LiveRoom") or "liveroom" in k.lower()])
    return env


register_envs()
