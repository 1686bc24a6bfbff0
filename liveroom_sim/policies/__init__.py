"""The policy layer: built-in avatars, callables ``policy(observation, info) -> action``.

They read only what an LLM would be sent, so they work under any harness. Imports the
harness, llm and world layers; never the room.
"""

from liveroom_sim.policies.factory import make_policy
from liveroom_sim.policies.naive import NaiveAvatar
from liveroom_sim.policies.scripted import ScriptedAvatar

__all__ = ["NaiveAvatar", "ScriptedAvatar", "make_policy"]
