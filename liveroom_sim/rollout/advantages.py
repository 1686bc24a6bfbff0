"""Group-relative advantages (GRPO): how a group's returns become training signal."""

from __future__ import annotations

import numpy as np


def group_advantages(returns: list[float], normalize: str = "std", eps: float = 1e-6) -> list[float]:
    """GRPO advantages of one group: ``(R - mean) / (std + eps)`` (``normalize="std"``),
    ``R - mean`` (``"mean"``), or the raw return (``"none"``).

    >>> [round(a, 3) for a in group_advantages([1.0, 3.0])]
    [-1.0, 1.0]
    """
    r = np.asarray(returns, dtype=float)
    if normalize == "none":
        return r.tolist()
    centred = r - r.mean()
    if normalize == "mean":
        return centred.tolist()
    return (centred / (r.std() + eps)).tolist()
