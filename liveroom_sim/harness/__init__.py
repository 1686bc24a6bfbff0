"""The harness layer: what the policy is given and must follow as it is *now*.

Harness files (system prompt, skills, hooks, constraints), tool schemas and their
execution, Harness-State Augmentation, prompt rendering and action parsing. Imports the
world layer and :mod:`liveroom_sim.errors` only.
"""

from liveroom_sim.harness.core import Constraints, Harness, Skill, load_harness

__all__ = ["Constraints", "Harness", "Skill", "load_harness"]
