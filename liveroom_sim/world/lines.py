"""Lines viewers may write, each with the conditions under which it makes sense.

Phrasebooks and personas hold lists of :class:`Template`; a plain string in a data file
is a line without conditions.
"""

from __future__ import annotations

import functools
import string
from typing import Annotated

import pydantic

from liveroom_sim.world.datafile import Frozen

_FORMATTER = string.Formatter()


class Template(Frozen):
    """One line a viewer may write, and when it makes sense.

    Attributes:
        text: The line, with placeholders (see the module docstring).
        categories: Product categories it fits (empty: any product).
        needs: Product attributes that must be set, e.g. ``battery_hours`` or
            ``specs.bluetooth`` (a key of a mapping attribute).
        intents: For openers and closers: the intents it suits (empty: any).
        min_strikes: How many times the viewer must have been ignored first (for
            complaints that count: "asked three times").
    """

    text: str
    categories: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    intents: tuple[str, ...] = ()
    min_strikes: pydantic.NonNegativeInt = 0

    @property
    def fields(self) -> frozenset[str]:
        """The placeholders the line uses."""
        return placeholders(self.text)

    def fits(self, product=None, intent: str | None = None, strikes: int = 0) -> bool:
        """Whether the line makes sense for ``product`` (None: no product), ``intent``
        and a viewer ignored ``strikes`` times."""
        if strikes < self.min_strikes or (self.intents and intent not in self.intents):
            return False
        if product is None:
            return not self.categories and not self.needs
        if self.categories and product.category not in self.categories:
            return False
        return all(_has(product, need) for need in self.needs)


@functools.lru_cache(maxsize=4096)
def placeholders(text: str) -> frozenset[str]:
    """The placeholders of a line's text (parsed once per text: viewers write lines every
    step and the data holds a few hundred)."""
    return frozenset(f for _, f, _, _ in _FORMATTER.parse(text) if f)


def _has(product, need: str) -> bool:
    attr, _, key = need.partition(".")
    value = getattr(product, attr, None)
    if key:
        return isinstance(value, dict) and key in value
    return value not in (None, (), {}, "")


def _lines(value):
    """Accept plain strings for lines without conditions."""
    if isinstance(value, (list, tuple)):
        return [{"text": v} if isinstance(v, str) else v for v in value]
    return value


Lines = Annotated[tuple[Template, ...], pydantic.BeforeValidator(_lines)]
