"""Eval-only baseline policies: what the HVQA-LSQA gap is measured against.

``memorising``: the scripted host with its harness memorised. It reads the room like the
reference host does, but calls the tools by the names and fields of the harness it was
built for (the env's original), whatever harness it is given now, as a policy trained on
one harness version would. The reference host (``scripted``) reads the tools it is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from liveroom_sim.harness import prompt
from liveroom_sim.policies.scripted import ScriptedAvatar

BASELINES = ("memorising",)


class MemorisingAvatar:
    """:class:`ScriptedAvatar` shown the original harness's tool schemas instead of the
    current ones (see the module docstring)."""

    def __init__(self):
        from liveroom_sim.evals.picking import LANGUAGES
        from liveroom_sim.evals.replay import world_for

        self.inner = ScriptedAvatar()
        self.tools = {lang: prompt.tool_schemas(world_for(env).harness) for lang, env in LANGUAGES.items()}

    def __call__(self, observation: str, info: dict) -> str:
        language = info.get("room", {}).get("language", "en")
        return self.inner(observation, {**info, "tools": self.tools.get(language, info["tools"])})


@dataclass(frozen=True)
class BaselineSpec:
    """A :class:`~liveroom_sim.rollout.policy_spec.PolicySpec`-like name for a baseline."""

    kind: str = "memorising"

    def build(self, sample_seed: int = 0):
        return MemorisingAvatar()

    def describe(self) -> dict:
        return {"kind": self.kind}
