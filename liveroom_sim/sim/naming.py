"""Viewer handles that look like a real room's: each used once, and no numbered clones.

A viewer takes a free handle of its persona; when they are taken (or now and then, so
that rooms differ more), a handle is made from the phrasebook's name pool. A handle is
refused when it differs from one already in the room only by digits or punctuation
(``prove_it_pat`` / ``prove_it_pat2``, 冷静观察员 / 冷静观察员2).
"""

from __future__ import annotations

import functools
import re

import numpy as np

from liveroom_sim.world.personas import Persona
from liveroom_sim.world.phrasebook import Phrasebook

_NOT_STEM = re.compile(r"[\d_.\-\s]+")


@functools.lru_cache(maxsize=8192)
def stem(name: str) -> str:
    """A handle without digits and punctuation, lower-cased: two handles with the same
    stem read as clones."""
    return _NOT_STEM.sub("", name.lower())


class NameBook:
    """Hands out viewer handles for one episode (see the module docstring)."""

    def __init__(self, book: Phrasebook, language: str):
        self.book, self.language = book, language
        self.stems: set[str] = set()
        self._tries: _PoolTries | None = None  # (the pool's bounds, worked out at the room's first pool handle)

    def name_for(self, persona: Persona, rng: np.random.Generator) -> str:
        """A handle for a new viewer of ``persona``, unused in this room."""
        phr = persona.phrasing.get(self.language) or next(iter(persona.phrasing.values()))
        free = [n for n, s in _stems(phr.names) if s not in self.stems]
        pool = self.book.names
        if free and (pool is None or rng.random() < 0.75):
            return self.take(free[int(rng.integers(len(free)))])
        if pool is not None and (name := self.from_pool(pool, rng)) is not None:
            return self.take(name)
        if free:
            return self.take(free[0])
        # Every handle taken: a room of hundreds. Letters, not digits, keep it unique.
        base = phr.names[int(rng.integers(len(phr.names)))]
        for suffix in ("x", "xo", "z", "yy", "q", "jj", "k", "vv"):
            if stem(base + "_" + suffix) not in self.stems:
                return self.take(base + "_" + suffix)
        return self.take(f"{base}_{len(self.stems)}")

    def from_pool(self, pool, rng: np.random.Generator) -> str | None:
        """A pool handle whose stem is free, in up to 40 random tries (None if all clash).

        Each try draws a pattern, then one word per part. The first try draws its numbers
        one by one; in a full room (hundreds of viewers, a pool of a few hundred handles)
        the others would cost ~240 draws per arrival, so they are drawn in one array call
        and the generator is rewound to just after the try that is kept. numpy draws bounded
        integers one after another in an array call exactly as in scalar calls (test_viewers
        checks it), so the room is the one that one call per number gives.
        """
        tries = self._tries
        if tries is None or tries.pool is not pool:
            tries = self._tries = _PoolTries(pool)
        name, name_stem = tries.name([int(rng.integers(h)) for h in tries.highs])
        if name_stem not in self.stems:
            return name
        before = rng.bit_generator.state
        width = len(tries.highs)
        drawn = rng.integers(0, tries.tiled).tolist()
        for i in range(0, len(drawn), width):
            name, name_stem = tries.name(drawn[i:i + width])
            if name_stem not in self.stems:
                rng.bit_generator.state = before
                rng.integers(0, tries.tiled[:i + width])  # the draws of the tries made
                return name
        return None

    def take(self, name: str) -> str:
        """Mark ``name`` used in this room (its stem: no clone of it is handed out)."""
        self.stems.add(stem(name))
        return name


@functools.lru_cache(maxsize=1024)
def _stems(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each of a persona's handles with its stem (worked out once per persona)."""
    return tuple((n, stem(n)) for n in names)



class _PoolTries:
    """One name pool's tries: the bound of each number a try draws, and those bounds for
    the 39 tries after the first."""

    def __init__(self, pool):
        self.pool = pool
        self.highs = (len(pool.patterns), *map(len, pool.parts.values()))
        self.tiled = np.tile(self.highs, 39)

    def name(self, drawn: list[int]) -> tuple[str, str]:
        """The handle of the try that drew ``drawn`` (the pattern's index, then each part's
        word's) and its stem."""
        pattern, parts = self.pool.patterns[drawn[0]], self.pool.parts.items()
        name = pattern.format(**{k: v[j] for (k, v), j in zip(parts, drawn[1:])})
        return name, stem(name)
