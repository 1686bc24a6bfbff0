"""Adapters that let LLM trainers drive LiveRoom.

- :mod:`liveroom_sim.integrations.trl`: an environment for TRL's
  ``GRPOTrainer(environment_factory=...)``, reward functions and a prompt dataset.
- :mod:`liveroom_sim.integrations.verl_agent_loop`: ``LiveRoomAgentLoop``, a veRL (0.8
  and later) agent loop that plays rooms token-in-token-out. It imports veRL: it must
  subclass veRL's ``AgentLoopBase`` (the one exception to the layer contracts).
- :mod:`liveroom_sim.integrations.verl`: dataset rows for both veRL APIs, and
  ``LiveRoomInteraction``, the interaction for veRL 0.7.1 and earlier (legacy).
- :mod:`liveroom_sim.integrations.verifiers`: ``load_environment``, a verifiers v1 env
  (its classes in ``verifiers_env``, which imports verifiers).
- :mod:`liveroom_sim.integrations.nemo_gym`: rows and the server folder for NeMo-Gym (the
  resources server in ``nemo_gym_server``, which imports NeMo-Gym).

Apart from ``verl_agent_loop``, none imports its trainer (nor torch or ray): the trainers
import them. Submodules load on first use, so ``import liveroom_sim.integrations`` costs
nothing.
"""

from __future__ import annotations

import importlib

__all__ = ["nemo_gym", "trl", "verifiers", "verl"]


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
