"""A ``dict`` some of whose values are built on first read (the env's ``info``).

Trainers rarely read every ``info`` entry a step returns (the whole OpenAI chat
``messages``, the reward's reasons), but users who do must get exactly what an eager
``dict`` holds. :class:`LazyDict` is a real ``dict`` (``isinstance(info, dict)``, JSON,
pickle, ``dict(info)``, ``{**info}`` and Gymnasium's vector envs all work); an entry
registered as lazy is built by its function the first time anything reads it, once.

The functions must capture what they read at the time the dict is made (a snapshot): the
room moves on after the step, the info must not.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

_UNBUILT = object()


class LazyDict(dict):
    """A ``dict`` whose ``lazy`` entries are built on first read.

    Args:
        items: The entries, in order; a value that is a :class:`Lazy` is built on first read.

    Example:
        >>> d = LazyDict({"a": 1, "b": Lazy(lambda: [1, 2])})
        >>> d["b"], "b" in d, len(d)
        ([1, 2], True, 2)
    """

    __slots__ = ("_builders",)

    def __init__(self, items: dict[str, Any]):
        super().__init__(items)
        self._builders: dict[str, Callable[[], Any]] = {
            key: value.build for key, value in items.items() if isinstance(value, Lazy)}
        for key in self._builders:  # (in place: the entries keep their order)
            dict.__setitem__(self, key, _UNBUILT)

    # -------------------------------------------------------------- reading one entry
    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        return self._build(key) if value is _UNBUILT else value

    def get(self, key, default=None):
        value = dict.get(self, key, default)
        return self._build(key) if value is _UNBUILT else value

    def _build(self, key):
        value = self._builders.pop(key)()
        dict.__setitem__(self, key, value)
        return value

    def _build_all(self) -> None:
        for key in list(self._builders):
            self._build(key)

    # ------------------------------------------------- reading many: build them first
    def __iter__(self) -> Iterator:
        # (defined so that ``dict(d)`` and ``{**d}`` go through keys() and __getitem__)
        return dict.__iter__(self)

    def items(self):
        self._build_all()
        return dict.items(self)

    def values(self):
        self._build_all()
        return dict.values(self)

    def copy(self) -> dict:
        self._build_all()
        return dict(dict.items(self))

    def pop(self, key, *default):
        if key in self._builders:
            self._build(key)
        return dict.pop(self, key, *default)

    def popitem(self):
        self._build_all()
        return dict.popitem(self)

    def setdefault(self, key, default=None):
        if key in self._builders:
            return self._build(key)
        return dict.setdefault(self, key, default)

    def __setitem__(self, key, value) -> None:
        self._builders.pop(key, None)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key) -> None:
        self._builders.pop(key, None)
        dict.__delitem__(self, key)

    def update(self, *args, **kwargs) -> None:
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def __eq__(self, other) -> bool:
        self._build_all()
        if isinstance(other, LazyDict):
            other._build_all()
        return dict.__eq__(self, other)

    def __ne__(self, other) -> bool:
        return not self == other

    __hash__ = None  # a dict is unhashable

    def __or__(self, other):
        return self.copy() | other

    def __ror__(self, other):
        return other | self.copy()

    def __ior__(self, other):
        self.update(other)
        return self

    def __repr__(self) -> str:
        self._build_all()
        return dict.__repr__(self)

    def __reduce__(self):
        # pickles (and copies) as the plain dict it reads as
        return dict, (self.copy(),)

    def __copy__(self) -> dict:
        return self.copy()

    def __deepcopy__(self, memo) -> dict:
        import copy

        return copy.deepcopy(self.copy(), memo)


class Lazy:
    """Marks a :class:`LazyDict` value to be built by ``build()`` on first read."""

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]):
        self.build = build
