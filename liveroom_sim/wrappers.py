"""Gymnasium wrappers for LiveRoom environments."""

from __future__ import annotations

import gymnasium as gym

from liveroom_sim.harness.augment import OPERATORS, AugmentConfig


class HarnessAugmentation(gym.Wrapper):
    """Turn on Harness-State Augmentation for any LiveRoom env.

    Args:
        env: A LiveRoom env (wrapped or not).
        probability: Chance that an episode's harness is augmented (drawn at reset).
        operators: Which operators (see :data:`liveroom_sim.harness.augment.OPERATORS`).
        at_harness_change: Augment again after each mid-stream harness change.

    Example:
        >>> import gymnasium as gym, liveroom_sim
        >>> env = HarnessAugmentation(gym.make("LiveRoom-v0"), operators=("rename_tools",))
        >>> obs, info = env.reset(seed=0)
        >>> info["room"]["harness_augmented"]
        True
    """

    def __init__(self, env: gym.Env, probability: float = 1.0, operators: tuple[str, ...] = OPERATORS,
                 at_harness_change: bool = False):
        super().__init__(env)
        self.env.unwrapped.harness_augmentation = AugmentConfig(
            probability=probability, operators=tuple(operators), at_harness_change=at_harness_change)
