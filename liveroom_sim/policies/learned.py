"""A small stochastic avatar with learnable decision tables, in numpy.

The :class:`LearnedAvatar` makes the scripted host's decisions
(:attr:`~liveroom_sim.policies.scripted.ScriptedAvatar.DECISIONS`: serve properly or say
something generic, address the asker, announce promotions, disclose, present the
featured product, add hype) by sampling from a softmax table per decision and
situation, and renders them to text through the current harness like the scripted host.
:class:`liveroom_sim.train.learner.GRPOLearner` updates the tables.

It also decides, for each kind of tool, which **name and field** to call it by: the
ones the current harness gives (``read``, what the reference host does) or the
``name|field`` pair it saw most often in training (``memorised``; the counts are
``parameters["tool_seen"]``). On one fixed harness reading and memorising pay the same,
so nothing teaches the avatar to read; under Harness-State Augmentation the memorised
name fails whenever the harness renamed the tool (``docs/hsa.md``).

Each decision is recorded with its **exchange reward**: the rewards of the steps from
the one it was made on through the next reply (a decision to serve pays off in the
reply after the lookup; whether to address the asker, in that reply). The avatar reads
each step's reward where an LLM policy's trainer would, in the next ``info``; the last
step's reward reaches it with no next call, so the last exchange counts what came before.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from liveroom_sim.policies.scripted import ScriptedAvatar

SITUATIONS = ("fact", "refuse", "social", "idle")
INTENTS = ("price", "stock", "promotion", "pitch", "other")


#: The kinds of tool whose name and field the avatar decides (see the module docstring).
TOOL_ROLES = ("details", "price", "promotions", "policy", "order")
TOOL_CHOICES = ("read", "memorised")


def _contexts(decision: str) -> tuple[str, ...]:
    return SITUATIONS if decision == "respond" else INTENTS


def initial_parameters(bias: float = 0.0) -> dict[str, dict[str, list[float]]]:
    """Logits where each rule-following option has probability ``1 / (1 + exp(2 bias))``
    (0: a coin flip; a host that mostly breaks the rules, near the naive host's return;
    1.5: about 5 %), and the tool tables, which start with ``read`` alone."""
    tables = {d: {c: [-bias] + [bias] * (len(opts) - 1) for c in _contexts(d)}
              for d, opts in ScriptedAvatar.DECISIONS.items()}
    return {**tables, "tool": {r: [0.0, 0.0] for r in TOOL_ROLES}, "tool_seen": {r: {} for r in TOOL_ROLES}}


def memorised(seen: dict[str, int]) -> str | None:
    """The ``name|field`` seen most often (the first seen of a tie), or ``None``."""
    return max(seen, key=seen.get) if seen else None


class LearnedAvatar(ScriptedAvatar):
    """The scripted host with its decisions sampled from learned probabilities.

    Args:
        parameters: ``{decision: {situation: logits}}`` (see :func:`initial_parameters`).
        seed: Seeds the avatar's own generator (samples of one group use different seeds).
        temperature: Divides the logits (1: as trained; towards 0: the likeliest choice).

    Attributes:
        decisions: ``(decision, situation, choice index, exchange reward, choice)`` of
            the current episode, for the learner (see the module docstring); a tool
            choice also names the pair the harness showed (``"read:get_product|product_id"``).
    """

    def __init__(self, parameters: dict | None = None, seed: int = 0, temperature: float = 1.0):
        super().__init__(0.0, seed)  # its wording stays the reference's: the decisions are what it learns
        if not temperature > 0:
            raise ValueError(f"a learned host's temperature must be above 0, got {temperature!r}")
        self.parameters = parameters or initial_parameters()
        self.decision_temperature = float(temperature)
        self.begin_episode(seed)

    def begin_episode(self, seed: int) -> None:
        self._made: list[tuple[str, str, int, int, str]] = []  # (decision, context, k, step, option)
        self._rewards: list[float] = []
        self._replies: set[int] = set()
        self._step = -1
        self._seen = ""

    def __call__(self, observation: str, info: dict) -> str:
        if "turn" not in info:  # a reset's info: a new episode
            self.begin_episode(0)
        elif self._step >= 0:  # the reward of the step before, as this info reports it
            self._rewards.append(float(info.get("reward_breakdown", {}).get("total", 0.0)))
        self._step += 1
        action = super().__call__(observation, info)
        if not action.lstrip().startswith("{"):
            self._replies.add(self._step)
        return action

    def choose(self, decision: str, situation: str, options: tuple[str, ...]) -> str:
        context = situation if decision in ("respond", "tool") else (situation if situation in INTENTS else "other")
        p = softmax(np.asarray(self.parameters[decision][context], dtype=float) / self.decision_temperature)
        k = int(self.rng.choice(len(options), p=p))
        label = f"{options[k]}:{self._seen}" if decision == "tool" else options[k]
        self._made.append((decision, context, k, self._step, label))
        return options[k]

    def tool_for(self, role: str, fn: dict) -> tuple[str, str | None]:
        """Read the tool's name and field from the harness, or call it by the pair seen
        most in training (see the module docstring)."""
        name, field = super().tool_for(role, fn)
        if len(self.parameters.get("tool", {}).get(role, ())) != len(TOOL_CHOICES):
            return name, field  # a checkpoint without this table (or of another layout) reads
        now = f"{name}|{field or ''}"
        self._seen = now  # recorded with the choice: the learner counts what the harness showed
        picked = self.choose("tool", role, TOOL_CHOICES)
        memory = memorised(self.parameters.get("tool_seen", {}).get(role, {})) or now
        if picked == "read":
            return name, field
        memorised_name, _, memorised_field = memory.partition("|")
        return memorised_name, memorised_field or None

    @property
    def decisions(self) -> list[tuple[str, str, int, float, str]]:
        """Each decision of the episode so far: ``(decision, situation, choice index,
        exchange reward, choice)``."""
        rewards = self._rewards
        replies = sorted(self._replies)
        out = []
        for decision, context, k, step, option in self._made:
            end = next((r for r in replies if r >= step), len(rewards) - 1)
            out.append((decision, context, k, round(float(sum(rewards[step:end + 1])), 6), option))
        return out

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"kind": "liveroom-learned-avatar", "parameters": self.parameters}, indent=1))

    @classmethod
    def load(cls, path: str | Path, seed: int = 0, temperature: float = 1.0) -> "LearnedAvatar":
        """A checkpoint written by :meth:`save` (``liveroom rollout --policy PATH``)."""
        data = json.loads(Path(path).read_text())
        if data.get("kind") != "liveroom-learned-avatar":
            raise ValueError(f"{path} is not a LiveRoom learned-avatar checkpoint")
        return cls(data["parameters"], seed, temperature)


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()
