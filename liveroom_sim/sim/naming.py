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

    def name_for(self, persona: Persona, rng: np.random.Generator) -> str:
        """A handle for a new viewer of ``persona``, unused in this room."""
        phr = persona.phrasing.get(self.language) or next(iter(persona.phrasing.values()))
        free = [n for n, s in _stems(phr.names) if s not in self.stems]
        pool = self.book.names
        if free and (pool is None or rng.random() < 0.75):
            return self._take(free[int(rng.integers(len(free)))])
        if pool is not None:
            for _ in range(40):
                pattern = pool.patterns[int(rng.integers(len(pool.patterns)))]
                parts = {k: v[int(rng.integers(len(v)))] for k, v in pool.parts.items()}
                name = pattern.format(**parts)
                if stem(name) not in self.stems:
                    return self._take(name)
        if free:
            return self._take(free[0])
        # Every handle taken: a room of hundreds. Letters, not digits, keep it unique.
        base = phr.names[int(rng.integers(len(phr.names)))]
        for suffix in ("x", "xo", "z", "yy", "q", "jj", "k", "vv"):
            if stem(base + "_" + suffix) not in self.stems:
                return self._take(base + "_" + suffix)
        return self._take(f"{base}_{len(self.stems)}")

    def _take(self, name: str) -> str:
        self.stems.add(stem(name))
        return name


@functools.lru_cache(maxsize=1024)
def _stems(names: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """Each of a persona's handles with its stem (worked out once per persona)."""
    return tuple((n, stem(n)) for n in names)
