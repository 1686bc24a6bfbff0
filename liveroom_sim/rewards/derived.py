"""Values derived once from a frozen world object that cannot carry a cached property of
its own here: :class:`PerObject`.

The reward's one way to cache is the owner's: a ``functools.cached_property`` on the frozen
object that owns the data (:class:`~liveroom_sim.rewards.catalog_index.CatalogIndex`, the
:class:`~liveroom_sim.rewards.rulebook.Rulebook`; on the turn's
:class:`~liveroom_sim.rewards.context.TurnContext`, its lock-free twin), or ``functools.lru_cache`` on a
function of hashable values. A catalog or a rule set is frozen world data but unhashable
(or costly to hash: a rule set takes ~0.1 ms), and its class belongs to ``world``; so
each reaches its owner here (a catalog its index, a rule set its rulebook) through one
:class:`PerObject`, and everything else derives from that owner.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from liveroom_sim.world.derived import _Kept

K = TypeVar("K")
V = TypeVar("V")


class PerObject(Generic[K, V]):
    """``derive(obj)`` computed once per object and kept with it.

    An object that carries a ``__dict__`` (a frozen world model: a catalog, a rule set)
    keeps the value itself, as :class:`~liveroom_sim.world.derived.derived` keeps it: in
    its ``__dict__``, with the object it was worked out for, so a copy works its own out
    again and the value lives exactly as long as the object. Others (a phrasebook's word
    dict) are kept here by identity: an entry holds its object, so the object's id is
    never reused while the entry lives; at most ``size`` are kept (the oldest dropped).

    >>> lengths = PerObject(len, size=2)
    >>> words = ["a", "b"]
    >>> lengths(words), lengths(words) is lengths(words)
    (2, True)
    """

    def __init__(self, derive: Callable[[K], V], size: int = 64):
        self._derive, self._size = derive, size
        self._entries: dict[int, tuple[K, V]] = {}
        # (the key it is kept under on an owner: one per PerObject, never a field name)
        self._key = f"_per_object_{getattr(derive, '__qualname__', 'value')}_{id(self)}"

    def __call__(self, obj: K) -> V:
        own = getattr(obj, "__dict__", None)
        if own is not None:
            kept = own.get(self._key)
            if kept is not None and kept.owner is obj:
                return kept.value
            value = self._derive(obj)
            own[self._key] = _Kept(obj, value)
            return value
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        if len(self._entries) >= self._size:
            self._entries.pop(next(iter(self._entries)))
        value = self._derive(obj)
        self._entries[id(obj)] = (obj, value)
        return value
