"""A Gymnasium space of arbitrary unicode strings (prompts and replies)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces


class UnicodeText(spaces.Space[str]):
    """Any ``str`` of at most ``max_length`` characters, any script (CJK, emoji).

    Gymnasium's ``Text`` space needs a fixed character set; prompts and replies do not
    have one. Sampling draws printable ASCII and CJK text from the space's generator.
    """

    def __init__(self, max_length: int = 1_000_000, seed: int | np.random.Generator | None = None):
        self.max_length = max_length
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        n = int(self.np_random.integers(0, 64))
        ascii_part = self.np_random.integers(32, 127, size=n)
        cjk = self.np_random.integers(0x4E00, 0x4E00 + 500, size=int(self.np_random.integers(0, 8)))
        return "".join(map(chr, ascii_part)) + "".join(map(chr, cjk))

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText(max_length={self.max_length})"
