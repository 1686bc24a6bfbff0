"""Viewer personas: one archetype per YAML file under ``personas/``.

A persona's numbers drive behaviour in the room: when viewers of that kind arrive and
talk, what they ask about and how, how long they wait, how likely they are to buy and
what moves them, and how adversarial they are.
"""

from __future__ import annotations

from pathlib import Path

import pydantic

from liveroom_sim.errors import SpecError, UnknownNameError
from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.lines import Lines, Template

#: Questions that ask for catalog facts (each has verifiable ground truth).
FACT_INTENTS = (
    "price", "stock", "promotion", "shipping", "returns", "warranty",
    "size", "material", "care", "colors",
    "ingredients", "skin_type", "pregnancy",
    "allergens", "shelf_life", "storage",
    "specs", "compatibility", "battery",
    "order_status",
)
#: Messages that ask for no catalog fact.
SOCIAL_INTENTS = ("greet", "chat", "troll", "bait", "inject")
#: Messages the room makes on a viewer's behalf (ignored, or an incomplete answer).
ROOM_INTENTS = ("complaint", "follow_up")
INTENTS = FACT_INTENTS + SOCIAL_INTENTS + ROOM_INTENTS
Probability = pydantic.confloat(ge=0.0, le=1.0)


class Phrasing(Frozen):
    """How a persona words its messages in one language (added around the phrasebook's).

    Attributes:
        names: Handles viewers of this persona go by (each used once per room).
        openers / closers: Words a viewer puts before or after a message; each viewer
            keeps one of each for the whole stream, so its voice stays the same.
        templates: The persona's own lines per intent (mixed with the phrasebook's).
        traits: Facts about the viewer drawn once on arrival (``who``: the person a gift
            is for), used as placeholders, so a viewer never contradicts itself.
        avoid: Words of the room's openers, tails and emoji this persona never types (a
            buyer who never hesitates does not write 纠结好久了, a sceptic no cart emoji).
    """

    names: tuple[str, ...] = pydantic.Field(min_length=1)
    openers: Lines = (Template(text=""),)
    closers: Lines = (Template(text=""),)
    templates: dict[str, Lines] = {}
    traits: dict[str, tuple[str, ...]] = {}
    avoid: tuple[pydantic.constr(min_length=1), ...] = ()

    @pydantic.field_validator("templates")
    @classmethod
    def _known_intents(cls, value):
        return datafile.known_names(value, INTENTS, "intents")


class Persona(Frozen):
    """One viewer archetype.

    Attributes:
        chat_rate_per_min: Messages per minute while present (Poisson), 0-60.
        patience_s: Seconds a question may wait before the viewer complains; after
            ``patience_strikes`` ignored questions the viewer leaves.
        topics: Relative weights of what the viewer talks about (intent -> weight).
        price_sensitivity: 0..1; how much a high price (relative to list) lowers buying.
        purchase_propensity: 0..1; chance to buy after a good answer, before modifiers.
        coupon_response / urgency_response: 0..1; how much an active coupon or a flash
            sale raises the chance to buy.
        loyalty: 0..1; how much satisfaction is kept when something goes wrong.
        dwell_s: Mean seconds a viewer stays when nothing pushes them out.
        patience_s and dwell_s lie within 0-1e6 s (longer than any stream: "never"); topic weights within 0-1e6.
    """

    name: str = pydantic.Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str
    chat_rate_per_min: float = pydantic.Field(ge=0, le=60)
    patience_s: float = pydantic.Field(gt=0, le=1e6)
    patience_strikes: int = pydantic.Field(2, gt=0, le=100)
    dwell_s: float = pydantic.Field(300.0, gt=0, le=1e6)
    topics: dict[str, pydantic.confloat(ge=0, le=1e6)] = pydantic.Field(min_length=1)
    price_sensitivity: Probability
    purchase_propensity: Probability
    coupon_response: Probability = 0.0
    urgency_response: Probability = 0.0
    loyalty: Probability = 0.0
    phrasing: dict[str, Phrasing] = pydantic.Field(min_length=1)

    @pydantic.field_validator("topics")
    @classmethod
    def _topics_known(cls, value: dict[str, float]):
        unknown = sorted(set(value) - set(FACT_INTENTS + SOCIAL_INTENTS))
        if unknown:
            raise ValueError(
                f"unknown topics {unknown}; expected some of {list(FACT_INTENTS + SOCIAL_INTENTS)}"
            )
        if sum(value.values()) <= 0:
            raise ValueError("topic weights must not all be zero")
        return value


def load_persona(path: Path | str) -> Persona:
    """Load one persona file; the file's stem must match its ``name``."""
    persona = datafile.load(Persona, path)
    if Path(path).stem != persona.name:
        raise SpecError(path, [f"field 'name': expected {Path(path).stem!r} (the file name), got {persona.name!r}"])
    return persona


def load_personas(folders: list[Path], names: list[str] | None = None) -> dict[str, Persona]:
    """Load personas from folders (later folders override earlier ones by name).

    Args:
        folders: Folders holding ``<name>.yaml`` persona files.
        names: If given, only these personas, each of which must exist.
    """
    found: dict[str, Path] = {}
    for folder in folders:
        if not Path(folder).is_dir():
            raise SpecError(folder, ["no such persona folder (check persona_dirs; paths are relative to the spec)"])
        for path in sorted(Path(folder).glob("*.yaml")):
            found[path.stem] = path
    wanted = names if names is not None else sorted(found)
    for name in wanted:
        if name not in found:
            raise UnknownNameError("persona", name, found)
    return {name: load_persona(found[name]) for name in wanted}
