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
from liveroom_sim.paths import ENVS_DIR

__all__ = ["register_envs", "register_spec", "LiveRoomError", "SpecError", "UnknownNameError", "__version__"]
__version__ = "0.1.0"

_ENTRY_POINT = "liveroom_sim.env:LiveRoomEnv"


def register_spec(path: str | Path, env_id: str | None = None) -> str:
    """Register a spec file of your own with Gymnasium; returns its id.

    The file is validated now, so a bad spec fails here with its path and field.

    Args:
        path: The spec YAML (its catalog, campaign, harness... paths are relative to it).
        env_id: The id to register; defaults to the spec's ``id``.
    """
    from liveroom_sim.spec import load_spec

    world = load_spec(path)
    env_id = env_id or world.spec.id
    kwargs = {"spec": str(Path(path).resolve())}
    known = gym.registry.get(env_id)
    if known is None or known.kwargs != kwargs or known.entry_point != _ENTRY_POINT:
        gym.register(id=env_id, entry_point=_ENTRY_POINT, kwargs=kwargs)
    return env_id


def register_envs() -> list[str]:
    """Register every built-in spec (``envs/<id>.yaml``); specs are read at ``make`` time."""
    ids = []
    for path in sorted(ENVS_DIR.glob("*.yaml")):
        if path.stem not in gym.registry:
            gym.register(id=path.stem, entry_point=_ENTRY_POINT, kwargs={"spec": str(path)})
        ids.append(path.stem)
    return ids


register_envs()
