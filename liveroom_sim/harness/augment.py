"""Harness-State Augmentation (HSA): task-preserving random changes to the harness.

Each operator changes only how the harness *presents* the task: tool and field names,
descriptions, prompt sections and their format, skill wording and order, interaction
constraints (with the reward's checks of them, which read the same constraints). The
catalog, campaign, viewers and every question's ground truth are untouched, so a policy
that reads its harness scores the same under any variant.

Example:
    >>> import numpy as np
    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> h = load_spec(ENVS_DIR / "LiveRoom-v0.yaml").harness
    >>> v = augment(h, "en", np.random.default_rng(0), ("rename_tools",))
    >>> sorted(v.tools) == sorted(h.tools), v.tool_name("get_product") != "get_product"
    (True, True)
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pydantic

from liveroom_sim.harness import augment_limits
from liveroom_sim.harness.augment_skills import SKILL_OPERATORS
from liveroom_sim.harness.core import Constraints, Harness
from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen, replaced
from liveroom_sim.world.paths import ENVS_DIR

OPERATORS = (
    "rename_tools", "rename_fields", "redescribe", "reorder_sections", "reformat",
    "paraphrase_skills", "reorder_skills", "vary_constraints",
)


class AugmentConfig(Frozen):
    """When and how to augment: ``probability`` per episode (drawn at reset), which
    ``operators``, and whether to augment again after each mid-stream harness change."""

    probability: pydantic.confloat(ge=0.0, le=1.0) = 1.0
    operators: tuple[str, ...] = OPERATORS
    at_harness_change: bool = False

    @pydantic.field_validator("operators")
    @classmethod
    def _known(cls, value):
        return datafile.known_names(value, ALL_OPERATORS, "operators")


class Pools(Frozen):
    """The alternatives operators draw from (``envs/harness/hsa.yaml``)."""

    tool_names: dict[str, tuple[str, ...]]
    field_names: dict[str, tuple[str, ...]]
    descriptions: dict[str, dict[str, tuple[str, ...]]]
    section_titles: dict[str, dict[str, tuple[str, ...]]]
    paraphrases: dict[str, dict[str, tuple[str, ...]]]
    constraints: dict[str, dict[str, tuple] | tuple]
    #: Business ranges of numeric limits, per language: ``{max_chars: {en: [160, 280]}}``.
    limits: dict[str, dict[str, tuple[int, int]]] = {}

    @pydantic.field_validator("limits")
    @classmethod
    def _limits(cls, value):
        return augment_limits.check_limits(value)


@lru_cache(maxsize=4)
def load_pools(path: str = str(ENVS_DIR / "harness" / "hsa.yaml")) -> Pools:
    return datafile.load(Pools, path)


def augment(harness: Harness, language: str, rng: np.random.Generator,
            operators: tuple[str, ...] = OPERATORS, pools: Pools | None = None) -> Harness:
    """A task-preserving variant of ``harness``; operators run in :data:`ALL_OPERATORS` order.

    Args:
        harness: The harness to vary.
        language: Picks descriptions, titles and paraphrases.
        rng: The augmentation's own generator (never the episode's: viewers must behave
            the same with and without augmentation).
        operators: Which operators to apply.
    """
    pools = pools or load_pools()
    h = harness
    for op in ALL_OPERATORS:
        if op in operators:
            h = _OPS[op](h, language, rng, pools)
    return h


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _rename_tools(h: Harness, lang, rng, pools: Pools) -> Harness:
    taken: set[str] = set()
    tools = {}
    for canonical, view in h.tools.items():
        options = [n for n in pools.tool_names.get(canonical, ()) if n not in taken and n != view.name]
        name = _pick(rng, options) if options else view.name
        taken.add(name)
        tools[canonical] = replaced(view, {"name": name})
    return replaced(h, {"tools": tools})


def _tool_fields(canonical: str) -> list[str]:
    from liveroom_sim.harness.tools import TOOLS

    return list(TOOLS[canonical].params)


def _rename_fields(h: Harness, lang, rng, pools: Pools) -> Harness:
    tools = {}
    for canonical, view in h.tools.items():
        fields = dict(view.fields)
        for f in _tool_fields(canonical):
            if pools.field_names.get(f):
                fields[f] = _pick(rng, pools.field_names[f])
        tools[canonical] = replaced(view, {"fields": fields})
    return replaced(h, {"tools": tools})


def _redescribe(h: Harness, lang, rng, pools: Pools) -> Harness:
    texts = pools.descriptions.get(lang, {})
    tools = {}
    for canonical, view in h.tools.items():
        update: dict = {}
        if texts.get(canonical):
            update["description"] = _pick(rng, texts[canonical])
        docs = {f: _pick(rng, texts[f]) for f in _tool_fields(canonical) if texts.get(f)}
        if docs:
            update["field_descriptions"] = {**view.field_descriptions, **docs}
        tools[canonical] = replaced(view, update)
    return replaced(h, {"tools": tools})


def _reorder_sections(h: Harness, lang, rng, pools: Pools) -> Harness:
    order = rng.permutation(len(h.sections))
    return replaced(h, {"sections": tuple(h.sections[i] for i in order)})


def _reformat(h: Harness, lang, rng, pools: Pools) -> Harness:
    titles = pools.section_titles.get(lang, {})
    sections = tuple(replaced(s, {"title": _pick(rng, titles[s.name])}) if titles.get(s.name) else s
                     for s in h.sections)
    return replaced(h, {"format": _pick(rng, ("markdown", "xml", "json")), "sections": sections})


def _paraphrase_skills(h: Harness, lang, rng, pools: Pools) -> Harness:
    table = pools.paraphrases.get(lang, {})
    skills = []
    for sk in h.skills:
        text = sk.instructions
        for phrase, options in table.items():
            if phrase in text:
                text = text.replace(phrase, _pick(rng, options))
        skills.append(replaced(sk, {"instructions": text}))
    return replaced(h, {"skills": tuple(skills)})


def _reorder_skills(h: Harness, lang, rng, pools: Pools) -> Harness:
    order = rng.permutation(len(h.skills))
    return replaced(h, {"skills": tuple(h.skills[i] for i in order)})


def _vary_constraints(h: Harness, lang, rng, pools: Pools) -> Harness:
    c = pools.constraints

    def options(key):
        v = c.get(key, ())
        return v.get(lang, ()) if isinstance(v, dict) else v

    update = {}
    for key in ("max_chars", "mention_format", "greeting", "sign_off"):
        if options(key):
            update[key] = _pick(rng, options(key))
    return replaced(h, {"constraints": Constraints(**{**h.constraints.model_dump(), **update})})


_OPS = {
    "rename_tools": _rename_tools, "rename_fields": _rename_fields, "redescribe": _redescribe,
    "reorder_sections": _reorder_sections, "reformat": _reformat, "paraphrase_skills": _paraphrase_skills,
    "reorder_skills": _reorder_skills, "vary_constraints": _vary_constraints,
    **SKILL_OPERATORS,
    **augment_limits.OPS,
}
#: Every operator a spec may name; :data:`OPERATORS` (the default set) and those of the
#: operator modules, which run only when named.
ALL_OPERATORS = tuple(_OPS)


def episode_harness(harness: Harness, language: str, config: AugmentConfig | None, rng: np.random.Generator,
                    variant: int = 0) -> tuple[Harness, bool, np.random.Generator | None]:
    """The harness one episode starts with: ``(harness, augmented, augmentation generator)``.

    Augmentation draws from its own generator, spawned from the episode's seed sequence,
    so viewers behave the same with and without it; ``variant`` picks another of the
    seed's harness variants (HSA-SFT uses K of them). The generator is kept for
    augmenting again at harness changes.
    """
    if config is None:
        return harness, False, None
    child = rng.bit_generator.seed_seq.spawn(variant + 1)[variant]
    augment_rng = np.random.Generator(np.random.PCG64(child))
    if augment_rng.random() < config.probability:
        return augment(harness, language, augment_rng, config.operators), True, augment_rng
    return harness, False, augment_rng
