"""The GRPO learner of the built-in numpy avatar.

:class:`GRPOLearner` updates a :class:`~liveroom_sim.policies.learned.LearnedAvatar`'s
tables from groups of episodes with group-relative advantages (REINFORCE with the group
mean as baseline).
"""

from __future__ import annotations

import numpy as np

from liveroom_sim.policies.learned import LearnedAvatar, initial_parameters, softmax


class GRPOLearner:
    """Updates a :class:`LearnedAvatar`'s tables from scored episodes.

    ``update(episodes)`` takes ``(advantage, decisions)`` pairs and takes one gradient
    step on the mean over episodes of ``advantage * sum grad log p(decision)``, each
    logit's step clipped to ``max_step``.
    """

    def __init__(self, parameters: dict | None = None, learning_rate: float = 0.05, max_step: float = 1.0):
        self.parameters = parameters or initial_parameters()
        self.learning_rate = learning_rate
        self.max_step = max_step

    def policy(self, seed: int) -> LearnedAvatar:
        return LearnedAvatar(self.parameters, seed)

    def update(self, episodes: list[tuple[float, list]]) -> dict:
        grads = {d: {c: np.zeros(len(v)) for c, v in ctxs.items()} for d, ctxs in self.parameters.items()}
        for advantage, decisions in episodes:
            if not decisions or advantage == 0:
                continue
            for decision, context, k in decisions:
                logits = np.asarray(self.parameters[decision][context], dtype=float)
                g = -softmax(logits)
                g[k] += 1.0
                grads[decision][context] += advantage * g
        n = max(1, len(episodes))
        norm = 0.0
        for d, ctxs in grads.items():
            for c, g in ctxs.items():
                step = np.clip(self.learning_rate * g / n, -self.max_step, self.max_step)
                norm += float((step ** 2).sum())
                self.parameters[d][c] = (np.asarray(self.parameters[d][c]) + step).round(6).tolist()
        return {"step_norm": norm ** 0.5}
