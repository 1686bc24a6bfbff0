"""A small stochastic avatar with learnable decision tables, in numpy.

The :class:`LearnedAvatar` makes the scripted host's decisions
(:attr:`~liveroom_sim.policies.scripted.ScriptedAvatar.DECISIONS`: serve properly or say
something generic, address the asker, announce promotions, disclose, present the
featured product, add hype) by sampling from a softmax table per decision and
situation, and renders them to text through the current harness like the scripted host.
:class:`liveroom_sim.train.learner.GRPOLearner` updates the tables.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from liveroom_sim.policies.scripted import ScriptedAvatar

SITUATIONS = ("fact", "refuse", "social", "idle")
INTENTS = ("price", "stock", "promotion", "pitch", "other")


def _contexts(decision: str) -> tuple[str, ...]:
    return SITUATIONS if decision == "respond" else INTENTS


def initial_parameters(bias: float = 1.5) -> dict[str, dict[str, list[float]]]:
    """Logits that start near the naive host: the rule-following option is unlikely
    (softmax of ``[-bias, +bias]`` gives it about 5 %)."""
    return {d: {c: [-bias] + [bias] * (len(opts) - 1) for c in _contexts(d)}
            for d, opts in ScriptedAvatar.DECISIONS.items()}


class LearnedAvatar(ScriptedAvatar):
    """The scripted host with its decisions sampled from learned probabilities.

    Args:
        parameters: ``{decision: {situation: logits}}`` (see :func:`initial_parameters`).
        seed: Seeds the avatar's own generator (samples of one group use different seeds).

    Attributes:
        decisions: ``(decision, situation, choice index)`` of the current episode, for
            the learner.
    """

    def __init__(self, parameters: dict | None = None, seed: int = 0):
        self.parameters = parameters or initial_parameters()
        self.rng = np.random.default_rng(seed)
        self.decisions: list[tuple[str, str, int]] = []

    def begin_episode(self, seed: int) -> None:
        self.decisions = []

    def choose(self, decision: str, situation: str, options: tuple[str, ...]) -> str:
        context = situation if decision == "respond" else (situation if situation in INTENTS else "other")
        p = softmax(np.asarray(self.parameters[decision][context], dtype=float))
        k = int(self.rng.choice(len(options), p=p))
        self.decisions.append((decision, context, k))
        return options[k]

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"kind": "liveroom-learned-avatar", "parameters": self.parameters}, indent=1))

    @classmethod
    def load(cls, path: str | Path, seed: int = 0) -> "LearnedAvatar":
        """A checkpoint written by :meth:`save` (``liveroom rollout --policy PATH``)."""
        data = json.loads(Path(path).read_text())
        if data.get("kind") != "liveroom-learned-avatar":
            raise ValueError(f"{path} is not a LiveRoom learned-avatar checkpoint")
        return cls(data["parameters"], seed)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()
