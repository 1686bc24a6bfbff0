"""Values derived from a frozen model, worked out once per object: the package's one way
to cache what a catalog, a harness or a rule set implies.

``functools.cached_property`` would do, but for copies: a frozen model's copy
(``model_copy(update=...)``, or :func:`~liveroom_sim.world.datafile.replaced`, which the
per-episode draw and Harness-State Augmentation make by the hundred) takes the original's
``__dict__`` and with it every value cached there, now stale. :class:`derived` keeps each
value with the object it was worked out for, so a copy works its own out again.

Example:
    >>> from liveroom_sim.world.datafile import Frozen, replaced
    >>> class Box(Frozen):
    ...     width: int
    ...     @derived
    ...     def area(self) -> int:
    ...         return self.width ** 2
    >>> box = Box(width=3)
    >>> box.area, replaced(box, {"width": 4}).area
    (9, 16)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class derived(property):  # noqa: N801  (used as a decorator, like property)
    """A read-only property whose value is worked out on first read and kept on the
    object (a ``property`` to pydantic, which then takes it for no field)."""

    def __init__(self, func: Callable[[Any], Any]):
        super().__init__(func, doc=func.__doc__)
        self.name = func.__name__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        kept = instance.__dict__.get(self.name)
        if kept is not None and kept.owner is instance:  # (not a copy's inheritance)
            return kept.value
        value = self.fget(instance)
        instance.__dict__[self.name] = _Kept(instance, value)
        return value


class _Kept:
    """A derived value with the object it was worked out for.

    Compared by identity, so two models holding one still compare by their fields
    (pydantic compares ``__dict__`` first); pickled or copied as a value kept for no
    object, so a copy works its own out again.
    """

    __slots__ = ("owner", "value")

    def __init__(self, owner: Any, value: Any):
        self.owner, self.value = owner, value

    def __reduce__(self):
        return _Kept, (None, None)
