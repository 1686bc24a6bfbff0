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


class Memo(dict):
    """A cache whose keys come from outside the owner (a policy's tool arguments, the
    prompt's inputs), held by the owner as a :class:`derived` value and emptied when it
    reaches ``limit`` entries, so a hostile policy cannot grow it without bound.

    Every memo is an optimisation, kept because a profile shows it pays: replaying the
    scripted host's actions on LiveRoom-v0 seeds 0-2 under cProfile with every memo off,
    the work they save is 7% of the env's step time (the rendered prompts 2%, the facts
    of questions 3%, tool calls read 1%, catalog tool results 1%).

    Example:
        >>> memo = Memo(limit=2)
        >>> memo.keep("a", 1), memo.keep("b", 2), memo.keep("c", 3), sorted(memo)
        (1, 2, 3, ['c'])
    """

    __slots__ = ("limit",)

    def __init__(self, limit: int):
        super().__init__()
        self.limit = limit

    def keep(self, key: Any, value: Any) -> Any:
        """Store ``value`` under ``key`` (emptying the memo first when it is full); return it."""
        if len(self) >= self.limit:
            self.clear()
        self[key] = value
        return value


class Same:
    """An object as a key by identity, not by value: for a frozen model (whose value hash
    walks every field) or a dict (unhashable) that a memo's entry is for besides its
    owner. The key holds the object, so an identity is never another object's.

    Example:
        >>> words = {"sold out": ("sold out",)}
        >>> Same(words) == Same(words), Same(words) == Same(dict(words))
        (True, False)
    """

    __slots__ = ("obj",)

    def __init__(self, obj: Any):
        self.obj = obj

    def __hash__(self) -> int:
        return object.__hash__(self.obj)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj
