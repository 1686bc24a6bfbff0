"""The GRPO learner of the built-in numpy avatar.

:class:`GRPOLearner` updates a :class:`~liveroom_sim.policies.learned.LearnedAvatar`'s
tables from GRPO groups (the samples of one seed), by REINFORCE with a group-relative
baseline, in one of two credit modes:

- ``exchange`` (the default): each decision is credited with its exchange reward (the
  rewards from the step it was made on through the next reply; see
  :mod:`liveroom_sim.policies.learned`), normalised within the group among the
  decisions of the same kind in the same situation: ``A = (r - mean) / (std + eps)``
  over the group's ``(decision, situation)`` instances. An episode holds hundreds of
  decisions, so a group of four gives each table row many comparisons: the avatar
  learns within a few iterations what a whole-episode return would take hundreds of
  episodes to tell apart.
- ``episode``: GRPO on the total, every decision of an episode credited with the
  episode's advantage (``(R - mean R) / (std R + eps)`` over the group).

The step is ``learning_rate`` times the mean over each row's instances of
``A * grad log p(choice)``, each logit's step clipped to ``max_step``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from liveroom_sim.policies.learned import LearnedAvatar, initial_parameters, softmax

CREDIT = ("exchange", "episode")


class GRPOLearner:
    """Updates a :class:`LearnedAvatar`'s tables from scored groups.

    Args:
        parameters: Starting logits (default :func:`initial_parameters`).
        learning_rate: Step size.
        max_step: Largest change of one logit in one update.
        credit: ``exchange`` or ``episode`` (see the module docstring).
    """

    def __init__(self, parameters: dict | None = None, learning_rate: float = 1.0, max_step: float = 1.0,
                 credit: str = "exchange"):
        if credit not in CREDIT:
            raise ValueError(f"unknown credit {credit!r}; expected one of {', '.join(CREDIT)}")
        self.parameters = parameters or initial_parameters()
        self.learning_rate = learning_rate
        self.max_step = max_step
        self.credit = credit

    def policy(self, seed: int) -> LearnedAvatar:
        return LearnedAvatar(self.parameters, seed)

    def update(self, groups: Sequence[Sequence[dict]]) -> dict:
        """One step from ``groups``: each a list of one seed's scored records (with
        ``decisions``, and ``advantage`` for ``episode`` credit). Returns the step's
        norm and how many decisions carried a non-zero advantage."""
        advantages = [self._advantages(group) for group in groups]
        self._count_seen(groups)
        grads = {d: {c: np.zeros(len(v)) for c, v in self.parameters[d].items()} for d in self._tables()}
        counts: dict[tuple[str, str], int] = defaultdict(int)
        used = 0
        for group in advantages:
            for decision, context, k, a, _ in group:
                counts[decision, context] += 1
                if a == 0.0:
                    continue
                used += 1
                g = -softmax(np.asarray(self.parameters[decision][context], dtype=float))
                g[k] += 1.0
                grads[decision][context] += a * g
        norm = 0.0
        for d, ctxs in grads.items():
            for c, g in ctxs.items():
                if not counts[d, c]:
                    continue
                step = np.clip(self.learning_rate * g / counts[d, c], -self.max_step, self.max_step)
                norm += float((step ** 2).sum())
                self.parameters[d][c] = (np.asarray(self.parameters[d][c]) + step).round(6).tolist()
        return {"step_norm": norm ** 0.5, "decisions_with_signal": used}

    def _tables(self) -> list[str]:
        return [d for d in self.parameters if d != "tool_seen"]

    def _count_seen(self, groups: Sequence[Sequence[dict]]) -> None:
        """Count the tool names and fields the harnesses showed (``tool_seen``): the
        pair seen most is what a memorising choice calls next."""
        seen = self.parameters.get("tool_seen")
        if seen is None:
            return
        for group in groups:
            for r in group:
                for d in r.get("decisions") or ():
                    if d[0] == "tool" and len(d) > 4 and ":" in str(d[4]):
                        pair = str(d[4]).split(":", 1)[1]
                        counts = seen.setdefault(d[1], {})
                        counts[pair] = counts.get(pair, 0) + 1

    def _advantages(self, group: Sequence[dict]) -> list[tuple[str, str, int, float, str | None]]:
        """``(decision, situation, choice, advantage, option)`` of every decision of the group."""
        made = [(d[0], d[1], int(d[2]), float(d[3]) if len(d) > 3 else 0.0, d[4] if len(d) > 4 else None,
                 float(r.get("advantage") or 0.0)) for r in group for d in r.get("decisions") or ()]
        if self.credit == "episode":
            return [(d, c, k, a, o) for d, c, k, _, o, a in made]
        rows: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, (d, c, *_) in enumerate(made):
            rows[d, c].append(i)
        adv = np.zeros(len(made))
        for idx in rows.values():
            rewards = np.asarray([made[i][3] for i in idx])
            std = rewards.std()
            if std > 1e-9:
                adv[idx] = (rewards - rewards.mean()) / (std + 1e-6)
        return [(d, c, k, float(a), o) for (d, c, k, _, o, _), a in zip(made, adv)]
