"""Prices as shops write them: whole steps with the ending a shop uses (24.99, 129, 89.9).

The per-episode draw (:mod:`liveroom_sim.world.draw`) and the campaign grammar
(:mod:`liveroom_sim.world.grammar`) round every price they make here, so a drawn $27.31
reads $26.99 like the catalog's other prices.
"""

from __future__ import annotations

import math


def retail(value: float, like: float, unit: float = 1.0) -> float:
    """``value`` in whole ``unit`` steps with the ending of ``like`` (24.99 -> x.99).

    Example:
        >>> retail(27.3, 24.99), retail(131.2, 129.0), retail(80.0, 89.9)
        (26.99, 131.0, 79.9)
    """
    return rounded(value, ending(like, unit), unit)


def ending(like: float, unit: float = 1.0) -> float:
    """The part of ``like`` below its whole ``unit`` (24.99 -> 0.99)."""
    return round(like - math.floor(like / unit) * unit, 2)


def rounded(value: float, end: float, unit: float = 1.0) -> float:
    """:func:`retail` with the ending read already."""
    whole = round((value - end) / unit)
    out = round(whole * unit + end, 2)
    return out if out > 0 else round(max(value, 0.01), 2)


def cheaper(price: float, before: float) -> float:
    """``price`` rounded as ``before`` is, and below it (a cut never rounds away).

    Example:
        >>> cheaper(24.5, 24.99), cheaper(0.5, 0.99)
        (23.99, 0.5)
    """
    out = retail(price, before)
    while out >= before and out > 1.0:
        out = round(out - 1.0, 2)
    return out if out < before else max(round(min(price, before * 0.9), 2), 0.01)


def dearer(price: float, before: float) -> float:
    """``price`` rounded as ``before`` is, and above it.

    Example:
        >>> dearer(25.2, 24.99)
        25.99
    """
    out = retail(price, before)
    while out <= before:
        out = round(out + 1.0, 2)
    return out
