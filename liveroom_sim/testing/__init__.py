"""Test helpers users need too: a real OpenAI-compatible server and reward-suite checks.

Names are imported lazily so that ``python -m liveroom_sim.testing.openai_server`` runs
cleanly and importing this package costs nothing until a helper is used.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "OpenAICompatServer": "liveroom_sim.testing.openai_server",
    "echo_responder": "liveroom_sim.testing.openai_server",
    "scripted_responder": "liveroom_sim.testing.openai_server",
    "policy_responder": "liveroom_sim.testing.openai_server",
    "RESPONDERS": "liveroom_sim.testing.openai_server",
    "judge_responder": "liveroom_sim.testing.judge",
    "FaultPlan": "liveroom_sim.testing.faults",
    "FAULT_KINDS": "liveroom_sim.testing.faults",
    "assert_reward_cases": "liveroom_sim.rewards.golden",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'liveroom_sim.testing' has no attribute {name!r}")
