"""What viewers type when the show does something: the crowd's reaction lines, per language.

A flash sale draws "FLASH SALE GO GO GO" and "抢到了!", a stock-out "sold out already??",
a lucky bag a row of "扣1", a purchase the platform's "🛒 just bought ..."; the room
(:mod:`liveroom_sim.sim.buzz`) decides who reacts and when, these files say how it reads.
The built-in files are ``envs/reactions/<language>.yaml``; a spec may name its own
(``reactions:``). ``{product}`` is the only slot: how the viewer calls the product.

Example:
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> lines = load_reaction_lines(ENVS_DIR / "reactions" / "en.yaml")
    >>> lines.mentions("flash_sale", "omg FLASH sale"), lines.mentions("flash_sale", "price?")
    (True, False)
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.lines import placeholders
from liveroom_sim.world.text import normalize

#: What a reaction is to (the keys of ``lines``).
Reaction = Literal["flash_sale", "got_it", "missed", "coupon", "stock_out", "restock", "lucky_bag", "red_envelope",
                   "won", "lost", "price_down", "price_up", "feature", "thanks", "correction", "bought"]


class ReactionLines(Frozen):
    """The lines of each reaction, and the cue words that tell a line speaks of an event."""

    cues: dict[Literal["flash_sale"], tuple[str, ...]] = {}
    lines: dict[Reaction, tuple[str, ...]]

    @pydantic.field_validator("lines")
    @classmethod
    def _complete(cls, value):
        missing = sorted(set(Reaction.__args__) - {k for k, v in value.items() if v})
        if missing:
            raise ValueError(f"no lines for {missing}; every reaction needs at least one")
        for kind, texts in value.items():
            for text in texts:
                if placeholders(text) - {"product"}:
                    raise ValueError(f"{kind}: {text!r} has a slot other than {{product}}")
        return value

    def mentions(self, event: str, text: str) -> bool:
        """Whether ``text`` speaks of ``event`` (holds one of its cue words, case and
        width folded)."""
        folded = normalize(text)
        return any(normalize(c) in folded for c in self.cues.get(event, ()))


def load_reaction_lines(path: Path | str) -> ReactionLines:
    """Load and validate a reactions file."""
    return datafile.load(ReactionLines, path)
