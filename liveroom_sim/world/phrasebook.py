"""A language's phrasebook: how viewers word each intent, and how the host words replies.

Viewer templates use ``{product}`` (a name viewers use for the product), ``{order}``
(an order id) and ``{host}``; host templates use the fields documented in
``envs/phrasebook/en.yaml``. Personas add openers, closers and their own templates.
"""

from __future__ import annotations

from pathlib import Path

import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.personas import INTENTS


class Bait(Frozen):
    """A line that tries to make the host break a rule; ``payload``: what obeying says."""

    text: str
    payload: tuple[str, ...] = pydantic.Field(min_length=1)
    categories: tuple[str, ...] = ()


class Phrasebook(Frozen):
    """Viewer and host wording for one language."""

    language: str
    viewer: dict[str, tuple[str, ...]]
    baits: tuple[Bait, ...] = pydantic.Field(min_length=1)
    injections: tuple[Bait, ...] = pydantic.Field(min_length=1)
    host: dict[str, tuple[str, ...]]
    fact_words: dict[str, tuple[str, ...]] = {}
    cues: dict[str, tuple[str, ...]] = {}

    @pydantic.field_validator("viewer")
    @classmethod
    def _covers_intents(cls, value):
        needed = set(INTENTS) - {"bait", "inject"}
        missing = sorted(needed - set(value))
        if missing:
            raise ValueError(f"missing viewer templates for intents {missing}")
        unknown = sorted(set(value) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown intents {unknown}")
        return value


def load_phrasebook(path: Path | str) -> Phrasebook:
    return datafile.load(Phrasebook, path)
