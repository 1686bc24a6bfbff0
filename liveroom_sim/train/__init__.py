"""The training layer: GRPO training of the built-in learner and HSA-SFT data export.

Imports rollout and everything below it; only the command line imports this.
"""

from liveroom_sim.train.grpo import train

__all__ = ["train"]
