"""A language's phrasebook: how viewers word each intent, and how the host words replies.

Viewer lines use ``{product}`` (how the viewer refers to the product: an alias, "this
serum", 这款精华), ``{order}`` (an order id), ``{host}``, slots such as ``{size}`` or
``{skin}`` (drawn from ``slots``) and a persona's traits such as ``{who}``. A line may say
which product categories it fits and which product attributes it needs, so that nobody
asks whether kale chips fit. Host templates use the fields documented in
``envs/phrasebook/en.yaml``. Personas add openers, closers and their own lines.
"""

from __future__ import annotations

import string
from pathlib import Path
import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.lines import Lines
from liveroom_sim.world.personas import FACT_INTENTS, INTENTS

_FORMATTER = string.Formatter()


class Bait(Frozen):
    """A line that tries to make the host break a rule; ``payload``: what obeying says."""

    text: str
    payload: tuple[str, ...] = pydantic.Field(min_length=1)
    categories: tuple[str, ...] = ()


class References(Frozen):
    """How viewers refer to a product: ``featured`` forms for the product on stage
    ("this {kind}", 这款{kind}), used next to its aliases; placeholders ``{kind}``
    (the product's kind noun) and ``{brand}``."""

    featured: Lines = ()
    featured_share: pydantic.confloat(ge=0.0, le=1.0) = 0.6


class NamePool(Frozen):
    """Handles for viewers once a persona's own names are taken: ``patterns`` such as
    ``{first}_{word}`` filled from ``parts``."""

    patterns: tuple[str, ...] = pydantic.Field(min_length=1)
    parts: dict[str, tuple[str, ...]]

    @pydantic.model_validator(mode="after")
    def _parts_cover_patterns(self):
        for p in self.patterns:
            missing = {f for _, f, _, _ in _FORMATTER.parse(p) if f} - set(self.parts)
            if missing:
                raise ValueError(f"pattern {p!r} uses parts {sorted(missing)} that 'parts' lacks")
        return self


class Phrasebook(Frozen):
    """Viewer and host wording for one language.

    Attributes:
        viewer: Lines per intent.
        second: Short lines for a second ask in the same message ("and does it come in
            {size}"), per fact intent.
        joiners: What joins two asks in one message (" and ", "，还有").
        references: How the product on stage is referred to.
        slots: Values for slot placeholders (``size``, ``color``, ``skin``, ``device``).
        names: Handles for viewers beyond the personas' own.
        repeat_markers: Words that say "I asked before"; only a viewer who was ignored
            may write them (checked by ``liveroom audit``).
    """

    language: str
    viewer: dict[str, Lines]
    second: dict[str, Lines] = {}
    joiners: tuple[str, ...] = (" and ",)
    references: References = References()
    slots: dict[str, tuple[str, ...]] = {}
    names: NamePool | None = None
    repeat_markers: tuple[str, ...] = ()
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

    @pydantic.field_validator("second")
    @classmethod
    def _second_for_facts(cls, value):
        return datafile.known_names(value, FACT_INTENTS, "second-ask intents (only fact intents can be a second ask)")

    @pydantic.model_validator(mode="after")
    def _slots_defined(self):
        known = set(self.slots) | {"product", "order", "host", "question", "said", "ask", "kind", "brand"}
        for intent, lines in (*self.viewer.items(), *self.second.items()):
            for t in lines:
                extra = t.fields - known
                if extra:
                    raise ValueError(f"viewer line {t.text!r} ({intent}) uses {sorted(extra)}, not in 'slots'")
        return self


def load_phrasebook(path: Path | str) -> Phrasebook:
    return datafile.load(Phrasebook, path)
