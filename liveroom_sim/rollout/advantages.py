"""Credit assignment for GRPO groups: on the total, per component, per segment, per turn.

A group is the ``G`` samples of one seed (records with ``returns`` and ``turn_rewards``:
each step's ``segment`` and reward by component). Writing ``R_i`` for sample ``i``'s
return, ``mean``/``std`` over the group and ``eps`` a small constant, the modes of
:func:`with_credit` set ``advantage`` (one number per record) and ``step_advantages``
(one per step, what :func:`liveroom_sim.rollout.tokens.training_batch` spreads over the
step's tokens):

- ``total`` (GRPO): ``A_i = (R_i - mean R) / (std R + eps)`` for every step.
- ``components`` (GDPO-style): each component ``c`` is normalised on its own,
  ``S_i = sum_c w_c (R_ic - mean R_c) / std R_c`` (0 for a component with
  ``std R_c <= eps``), then the sum is normalised again over the group. A component that is constant within the group contributes 0
  instead of being drowned by, or drowning, the others.
- ``segments`` (the TaoLive recipe): the tool-call steps and the reply steps form
  separate advantage groups. ``R_i^s`` is the sum of sample ``i``'s step totals in
  segment ``s`` (``tool``, or ``reply`` with ``hook_retry``); a step of segment ``s``
  gets ``A_i^s = (R_i^s - mean R^s) / (std R^s + eps)``.
- ``discounted`` (per-turn returns): ``G_it = r_it + gamma * G_i,t+1``; step ``t`` of
  sample ``i`` gets ``(G_it - mean G) / (std G + eps)``, the mean and std over every
  step of every sample in the group.

``normalize="mean"`` drops the division by the std, ``"none"`` also the centring.

Example:
    >>> group = [{"returns": {"total": 1.0}, "turn_rewards": [{"segment": "reply", "total": 1.0}]},
    ...          {"returns": {"total": 3.0}, "turn_rewards": [{"segment": "reply", "total": 3.0}]}]
    >>> [round(r["advantage"], 3) for r in with_credit(group)]
    [-1.0, 1.0]
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["CREDIT_MODES", "NoSignalWarning", "component_advantages", "discounted_returns", "group_advantages",
           "no_signal_groups", "segment_advantages", "turn_advantages", "with_credit"]

CREDIT_MODES = ("total", "components", "segments", "discounted")
_SEGMENT_GROUP = {"tool": "tool", "reply": "reply", "hook_retry": "reply"}


class NoSignalWarning(UserWarning):
    """A GRPO group whose samples all have the same return: every advantage is 0 and
    the group teaches nothing (a deterministic policy: give it a temperature)."""


NO_SIGNAL = ("a GRPO group carries no signal: all its samples have the same return, so every advantage is 0 "
             "(is the policy deterministic? the built-in hosts sample with --temperature)")


def no_signal_groups(records: Sequence[Mapping], eps: float = 1e-6) -> list[int]:
    """The ids of the groups (``group_id``) of two or more scored samples whose returns
    are all equal within ``eps``: groups that carry no signal.

    >>> no_signal_groups([{"group_id": 0, "return": 5.0}, {"group_id": 0, "return": 5.0},
    ...                   {"group_id": 1, "return": 1.0}, {"group_id": 1, "return": 2.0}])
    [0]
    """
    returns: dict[int, list[float]] = {}
    for r in records:
        if r.get("error") is None and r.get("return") is not None:
            returns.setdefault(int(r["group_id"]), []).append(float(r["return"]))
    return sorted(g for g, rs in returns.items() if len(rs) > 1 and max(rs) - min(rs) <= eps)


def group_advantages(returns: list[float], normalize: str = "std", eps: float = 1e-6,
                     warn: bool = True) -> list[float]:
    """GRPO advantages of one group: ``(R - mean) / (std + eps)`` (``normalize="std"``;
    all 0 when ``std <= 10 * eps``), ``R - mean`` (``"mean"``), or the raw return (``"none"``).

    A group of two or more samples with identical returns carries no signal: with
    ``warn`` (the default) it is reported with a :class:`NoSignalWarning`.

    >>> [round(a, 3) for a in group_advantages([1.0, 3.0])]
    [-1.0, 1.0]
    """
    r = np.asarray(returns, dtype=float)
    if warn and len(r) > 1 and np.ptp(r) <= eps:
        warnings.warn(NO_SIGNAL, NoSignalWarning, stacklevel=2)
    if normalize == "none":
        return r.tolist()
    centred = r - r.mean()
    if normalize == "mean":
        return centred.tolist()
    if r.std() <= 10 * eps:
        # A group that is constant up to eps (e.g. a sum of normalised components that
        # cancel) carries no signal: dividing its residue by std + eps would invent one.
        return np.zeros_like(r).tolist()
    return (centred / (r.std() + eps)).tolist()


def component_advantages(returns: Sequence[Mapping[str, float]], weights: Mapping[str, float] | None = None,
                         normalize: str = "std", eps: float = 1e-6) -> list[float]:
    """GDPO-style advantages: each component normalised over the group, weighted, summed,
    and the sum normalised again.

    Args:
        returns: Each sample's returns by component (``total`` is ignored).
        weights: Component -> weight (default 1 for each component present).

    >>> [round(a, 3) for a in component_advantages([{"a": 0.0, "b": 100.0}, {"a": 1.0, "b": 100.0}])]
    [-1.0, 1.0]
    """
    names = sorted({k for r in returns for k in r if k != "total"})
    if not names:
        return [0.0] * len(returns)
    weights = weights or {}
    summed = np.zeros(len(returns))
    for name in names:
        column = np.asarray([float(r.get(name, 0.0)) for r in returns])
        centred = column - column.mean()
        std = column.std()
        if normalize == "std":
            # Divide by the std itself, not std + eps: eps would leave each component a
            # residue of its own scale, and components that cancel would not sum to 0.
            centred = centred / std if std > eps else np.zeros_like(centred)
        elif normalize == "none":
            centred = column
        summed += float(weights.get(name, 1.0)) * centred
    return group_advantages(summed.tolist(), normalize, eps, warn=False)


def segment_advantages(turn_rewards: Sequence[Sequence[Mapping]], normalize: str = "std",
                       eps: float = 1e-6) -> list[list[float]]:
    """Per-step advantages with the tool steps and the reply steps as separate groups.

    >>> adv = segment_advantages([[{"segment": "tool", "total": 0.0}, {"segment": "reply", "total": 2.0}],
    ...                           [{"segment": "tool", "total": 1.0}, {"segment": "reply", "total": 2.0}]])
    >>> [[round(a, 3) for a in steps] for steps in adv]
    [[-1.0, 0.0], [1.0, 0.0]]
    """
    sums = {s: [sum(float(t["total"]) for t in steps if _SEGMENT_GROUP.get(t.get("segment"), "reply") == s)
                for steps in turn_rewards] for s in ("tool", "reply")}
    adv = {s: group_advantages(v, normalize, eps, warn=False) for s, v in sums.items()}
    return [[adv[_SEGMENT_GROUP.get(t.get("segment"), "reply")][i] for t in steps]
            for i, steps in enumerate(turn_rewards)]


def discounted_returns(rewards: Sequence[float], gamma: float = 1.0) -> list[float]:
    """Per-turn returns ``G_t = r_t + gamma * G_{t+1}``.

    >>> discounted_returns([1.0, 0.0, 2.0], gamma=0.5)
    [1.5, 1.0, 2.0]
    """
    out, g = [0.0] * len(rewards), 0.0
    for t in range(len(rewards) - 1, -1, -1):
        g = float(rewards[t]) + gamma * g
        out[t] = g
    return out


def turn_advantages(turn_rewards: Sequence[Sequence[Mapping]], gamma: float = 1.0, normalize: str = "std",
                    eps: float = 1e-6) -> list[list[float]]:
    """Per-step advantages from discounted per-turn returns, normalised over every step of the group."""
    returns = [discounted_returns([float(t["total"]) for t in steps], gamma) for steps in turn_rewards]
    flat = [g for r in returns for g in r]
    if not flat:
        return [[] for _ in returns]
    normed, out, k = group_advantages(flat, normalize, eps, warn=False), [], 0
    for r in returns:
        out.append(normed[k:k + len(r)])
        k += len(r)
    return out


def with_credit(group: list[dict], mode: str = "total", *, normalize: str = "std", eps: float = 1e-6,
                gamma: float = 1.0, weights: Mapping[str, float] | None = None) -> list[dict]:
    """Set ``advantage`` and ``step_advantages`` on a group's records (in place; returned).

    Records with an ``error`` get neither. ``segments`` and ``discounted`` need each
    record's ``turn_rewards`` (rollouts with ``record_messages``); their ``advantage``
    is the mean of the step advantages.

    Raises:
        ValueError: on an unknown mode.
    """
    if mode not in CREDIT_MODES:
        raise ValueError(f"unknown credit mode {mode!r}; expected one of {', '.join(CREDIT_MODES)}")
    scored = [r for r in group if r.get("error") is None]
    if not scored:
        return group
    steps = [r.get("turn_rewards") or [] for r in scored]
    if mode in ("total", "components"):
        if mode == "total":
            advantages = group_advantages([float(r["returns"]["total"]) for r in scored], normalize, eps)
        else:
            advantages = component_advantages([r["returns"] for r in scored], weights, normalize, eps)
        per_step = [[a] * len(s) for a, s in zip(advantages, steps)]
    else:
        per_step = (segment_advantages(steps, normalize, eps) if mode == "segments"
                    else turn_advantages(steps, gamma, normalize, eps))
        advantages = [float(np.mean(s)) if s else 0.0 for s in per_step]
    for record, a, s in zip(scored, advantages, per_step):
        record["advantage"], record["step_advantages"] = float(a), [float(x) for x in s]
    return group
