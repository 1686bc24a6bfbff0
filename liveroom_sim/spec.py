"""Environment specs: one YAML file per registered id, tying the world together.

A spec names its catalog, phrasebook, rules, campaign, harness and persona mix (paths
relative to the spec file), and sets the stream's length, the viewers' numbers, the
latency model, the reward weights, harness augmentation and the ranges each episode's
world is drawn in (``world:``, see :mod:`liveroom_sim.world.draw`). ``extends: Other-v0.yaml``
starts from another spec (its file paths stay relative to it) and overrides what the
file sets. :func:`load_spec` validates all of it into one
frozen :class:`World`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import numpy as np
import pydantic

from liveroom_sim.errors import SpecError, UnknownNameError, did_you_mean
from liveroom_sim.harness.augment import AugmentConfig
from liveroom_sim.harness.core import Harness, load_harness
from liveroom_sim.harness.faults import ToolsConfig
from liveroom_sim.world import datafile
from liveroom_sim.world.campaign import Campaign, load_campaign
from liveroom_sim.world.catalog import Catalog, load_catalog
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.derived import derived
from liveroom_sim.world.draw import CatalogPlan, catalog_plan, draw_world
from liveroom_sim.world.paths import ENVS_DIR, PERSONAS_DIR, resolved
from liveroom_sim.world.ranges import WorldRanges
from liveroom_sim.world.personas import Persona, load_personas
from liveroom_sim.world.reaction_lines import ReactionLines, load_reaction_lines
from liveroom_sim.world.phrasebook import Phrasebook, load_phrasebook
from liveroom_sim.world.rules import RuleSet

# The one import of the layer above: the spec validates reward weights against the
# components as the rewards declare them (an exception in pyproject's layer contract).
from liveroom_sim.rewards.registry import COMPONENTS as _DECLARED  # noqa: E402  (after the world)

#: Reward components every spec computes, by name (declared in
#: :mod:`liveroom_sim.rewards.registry`).
COMPONENTS = tuple(c.name for c in _DECLARED if not c.optional)
#: Components a spec may add by giving them a weight (skill selection, the reasoning
#: length penalty). A spec that does not name one neither computes nor reports it.
OPTIONAL_COMPONENTS = tuple(c.name for c in _DECLARED if c.optional)


class RoomConfig(Frozen):
    name: str
    host_name: str


class StreamConfig(Frozen):
    """Stream length in simulated seconds and the step limit (truncation)."""

    duration_s: float = pydantic.Field(900.0, gt=0, le=86_400)
    max_steps: int = pydantic.Field(600, gt=0, le=100_000)
    history_turns: int = pydantic.Field(6, gt=0, le=1_000)


class LLMViewerConfig(Frozen):
    """Viewers whose messages an LLM phrases (see :mod:`liveroom_sim.llm.viewers`)."""

    model: str
    base_url: str | None = None
    personas: tuple[str, ...] = ()
    timeout_s: float = pydantic.Field(10.0, gt=0, le=600)
    max_retries: int = pydantic.Field(1, ge=0, le=10)


class ViewerConfig(Frozen):
    """How many viewers: present at the start, arriving per minute, at most present;
    the persona mix; optionally LLM-phrased messages.

    Ranges: ``initial`` and ``max_present`` up to 1,000 viewers, ``arrivals_per_min``
    0-600 (a very busy room); past these an episode would take minutes and gigabytes.
    """

    initial: int = pydantic.Field(6, ge=0, le=1_000)
    arrivals_per_min: float = pydantic.Field(6.0, ge=0, le=600)
    max_present: int = pydantic.Field(40, gt=0, le=1_000)
    mix: dict[str, pydantic.confloat(gt=0, le=1e6)] = pydantic.Field(min_length=1)
    persona_dirs: tuple[str, ...] = ()
    llm: LLMViewerConfig | None = None


class LatencyConfig(Frozen):
    """Simulated time a turn takes; ``budget_s`` is the latency a live room tolerates.

    Ranges: ``tool_s`` and ``reply_base_s`` 0-60 s, ``reply_per_char_s`` 0-1 s,
    ``budget_s`` up to 600 s.
    """

    tool_s: float = pydantic.Field(0.8, ge=0, le=60)
    reply_base_s: float = pydantic.Field(1.5, ge=0, le=60)
    reply_per_char_s: float = pydantic.Field(0.01, ge=0, le=1)
    budget_s: float = pydantic.Field(8.114, gt=0, le=600)
    use_measured: bool = False


class JudgeConfig(Frozen):
    """An optional LLM judge of engagement (see :mod:`liveroom_sim.rewards.judge`)."""

    model: str
    base_url: str | None = None
    timeout_s: float = pydantic.Field(30.0, gt=0, le=600)
    seed: int = 0


class RewardConfig(Frozen):
    """Weights per component (0 turns one off), the compliance gate, an optional judge.

    ``compliance_gate``: when a turn's compliance is at or below it (a severe
    violation), the turn's total is at most the weighted compliance value (negative)
    and at most ``-severe_penalty``: one line that breaks the law (a medical claim, an
    obeyed bait) can get a real stream cut, so it costs more than several good answers
    earn. Weights lie in 0-100, the gate in -1 to 1 (the range of a component's value).
    """

    weights: dict[str, pydantic.confloat(ge=0, le=100)] = {c.name: c.weight for c in _DECLARED if not c.optional}
    compliance_gate: float | None = pydantic.Field(-1.0, ge=-1, le=1)
    severe_penalty: pydantic.confloat(ge=0, le=1000) = 50.0
    judge: JudgeConfig | None = None

    @pydantic.field_validator("weights")
    @classmethod
    def _known(cls, value):
        known = (*COMPONENTS, *OPTIONAL_COMPONENTS)
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"unknown reward components {unknown}{did_you_mean(unknown[0], known)}; "
                             f"expected some of {list(known)}")
        return {c: float(value.get(c, 0.0)) for c in COMPONENTS} | {
            c: float(value[c]) for c in OPTIONAL_COMPONENTS if c in value}

    @property
    def components(self) -> tuple[str, ...]:
        """The components this spec computes: :data:`COMPONENTS` and the optional ones
        it names."""
        return (*COMPONENTS, *(c for c in OPTIONAL_COMPONENTS if c in self.weights))


class ReasoningConfig(Frozen):
    """The reasoning budget: ``<think>...</think>`` is always stripped before the room
    hears an action; past ``budget_chars`` characters of reasoning in one action, the
    ``reasoning`` reward component charges the excess (see ``docs/rewards.md``)."""

    budget_chars: int = pydantic.Field(400, ge=0, le=100_000)


class SpecFile(Frozen):
    """The YAML file of one env spec."""

    id: str = pydantic.Field(pattern=r"^[A-Za-z0-9_\-]+-v\d+$")
    description: str = ""
    language: Literal["en", "zh"]
    room: RoomConfig
    catalog: str
    phrasebook: str
    rules: str
    campaign: str
    harness: str
    viewers: ViewerConfig
    stream: StreamConfig = StreamConfig()
    latency: LatencyConfig = LatencyConfig()
    reward: RewardConfig = RewardConfig()
    harness_augmentation: AugmentConfig | None = None
    tools: ToolsConfig = ToolsConfig()
    world: WorldRanges = WorldRanges()
    reasoning: ReasoningConfig | None = None
    #: The crowd's reaction lines (default: the built-in ``envs/reactions/<language>.yaml``).
    reactions: str | None = None

    def reactions_path(self, here: Path) -> Path:
        """The reactions file: the spec's own (relative to ``here``, its folder), else
        the built-in one of its language."""
        return here / self.reactions if self.reactions else ENVS_DIR / "reactions" / f"{self.language}.yaml"


class World(Frozen):
    """Everything an episode needs, validated and frozen; shared by every env of a spec."""

    model_config = pydantic.ConfigDict(frozen=True, arbitrary_types_allowed=True)
    spec: SpecFile
    path: str
    catalog: Catalog
    phrasebook: Phrasebook
    rules: RuleSet
    campaign: Campaign
    harness: Harness
    personas: dict[str, Persona]
    reactions: ReactionLines

    def for_episode(self, rng: np.random.Generator) -> "World":
        """This episode's world: catalog and campaign drawn within the spec's ``world:``
        ranges (:func:`~liveroom_sim.world.draw.draw_world`), or this world when they pin it.

        The draw uses a generator spawned from ``rng``'s seed sequence, so the same seed
        gives the same world in any process and the viewers' stream (``rng`` itself) is
        untouched. What the files hold (this world) stays the *pinned* world.
        """
        ranges = self.spec.world
        if ranges.pinned:
            return self
        child = np.random.Generator(np.random.PCG64(rng.bit_generator.seed_seq.spawn(1)[0]))
        catalog, campaign = draw_world(self.catalog, self.campaign, ranges, self.spec.stream.duration_s, child,
                                       self.catalog_plan)
        return self.model_copy(update={"catalog": catalog, "campaign": campaign})

    @derived
    def catalog_plan(self) -> CatalogPlan:
        """Where each episode's catalog draw takes its numbers (the same for every
        episode of the spec: :func:`~liveroom_sim.world.draw.catalog_plan`)."""
        return catalog_plan(self.catalog, self.spec.world)


def load_spec(path: Path | str) -> World:
    """Load an env spec and everything it names.

    Raises:
        SpecError: for the first file that is invalid, naming it, the field and what was
            expected; also when the campaign names products the catalog lacks.
    """
    path = resolved(path)
    return _load_spec(path, _fingerprint(path))


def _fingerprint(path: Path) -> tuple:
    """The files a spec names (see :func:`spec_files`), each with its modification time
    and size: the spec's identity for the cache."""
    out = []
    for f in spec_files(path, folders=True):
        try:
            st = f.stat()
        except OSError:
            continue  # a missing file: loading it names it
        out.append((str(f), st.st_mtime_ns, st.st_size))
    return tuple(out)


def spec_files(path: Path, *, folders: bool = False) -> list[Path]:
    """The files a spec reads, in a fixed order: its bases, data files, harness file and
    skills, persona files and the augmentation pools (with ``folders``, the persona
    folders too: a folder's time changes when a file is added). Only those files are
    looked at (scanning the spec's folder cost seconds a ``gym.make`` where a spec sat
    beside a virtual environment)."""
    path = resolved(path)
    files: list[Path] = []
    try:
        data = _read_with_base(path, read=files)
    except SpecError:
        data = {}  # _load_spec reports it
    here = path.parent
    for key in ("catalog", "phrasebook", "rules", "campaign", "reactions"):
        if isinstance(data.get(key), str):
            files.append(here / data[key])
    if not isinstance(data.get("reactions"), str) and data.get("language") in ("en", "zh"):
        files.append(ENVS_DIR / "reactions" / f"{data['language']}.yaml")
    if isinstance(data.get("harness"), str):
        harness = here / data["harness"]
        files += [harness / "harness.yaml", *sorted(harness.glob("*/SKILL.md"))]
    viewers = data.get("viewers") if isinstance(data.get("viewers"), dict) else {}
    dirs = viewers.get("persona_dirs") if isinstance(viewers.get("persona_dirs"), list) else []
    for folder in (PERSONAS_DIR, *(here / str(d) for d in dirs)):
        files += [*([folder] if folders else []), *sorted(folder.glob("*.yaml"))]
    files.append(ENVS_DIR / "harness" / "hsa.yaml")  # augmentation pools
    return files


@lru_cache(maxsize=32)
def _load_spec(path: Path, _fingerprint: tuple) -> World:
    # Cached by the state of the files it reads: worlds are frozen, so sharing one
    # between envs changes no result and keeps 1,000 envs of a spec cheap; an edited
    # data file gives a new world.
    spec = datafile.validate(SpecFile, _read_with_base(path), path)
    here = path.parent
    _check_named_files(spec, here, path)
    dirs = [PERSONAS_DIR, *(here / d for d in spec.viewers.persona_dirs)]
    world = World(
        spec=spec,
        path=str(path),
        catalog=load_catalog(here / spec.catalog),
        phrasebook=load_phrasebook(here / spec.phrasebook),
        rules=datafile.load(RuleSet, here / spec.rules),
        campaign=load_campaign(here / spec.campaign),
        harness=load_harness(here / spec.harness),
        personas=_personas(dirs, spec, path),
        reactions=load_reaction_lines(spec.reactions_path(here)),
    )
    _check_references(world, here / spec.campaign)
    _check_world_ranges(world, path)
    return world


def _check_named_files(spec: SpecFile, here: Path, path: Path) -> None:
    """Each file the spec names exists: a missing one is named with the spec's field (the
    error of reading it would name only the missing path, as if it were unreadable)."""
    missing = [f"field '{key}': no {'folder' if key == 'harness' else 'file'} {getattr(spec, key)!r} (looked for "
               f"{here / getattr(spec, key)}; paths are relative to the spec file)"
               for key in _PATH_FIELDS if not (here / getattr(spec, key)).exists()]
    if missing:
        raise SpecError(path, missing)


def _personas(dirs: list[Path], spec: SpecFile, path: Path) -> dict[str, Persona]:
    for folder, name in zip(dirs[1:], spec.viewers.persona_dirs):
        if not folder.is_dir():
            raise SpecError(path, [f"field 'viewers.persona_dirs': no folder {name!r} (paths are relative to this file)"])
    try:
        return load_personas(dirs, sorted(spec.viewers.mix))
    except UnknownNameError as exc:
        raise SpecError(path, [f"field 'viewers.mix': {exc}"]) from None


def _read_with_base(path: Path, seen: tuple[Path, ...] = (), read: list[Path] | None = None) -> dict:
    """The spec's YAML, merged over the spec it ``extends`` (a file beside it); the files
    read are appended to ``read``."""
    if read is not None:
        read.append(path)
    data = datafile.read_yaml(path)
    datafile.foreign(data, (*SpecFile.model_fields, "extends"), path, "an env spec")
    base_name = data.pop("extends", None)
    if base_name is None:
        return data
    base = resolved(path.parent / str(base_name))
    if base in seen or base == path:
        raise SpecError(path, [f"field 'extends': {base_name!r} extends itself"])
    if not base.exists():
        raise SpecError(path, [f"field 'extends': no spec file {base_name!r} (paths are relative to this file)"])
    return _merge(_absolute_paths(_read_with_base(base, (*seen, path), read), base.parent), data)


_PATH_FIELDS = ("catalog", "phrasebook", "rules", "campaign", "harness")


def _absolute_paths(data: dict, folder: Path) -> dict:
    """The base spec's file paths made absolute, so they still point at its files."""
    data = dict(data)
    for key in (*_PATH_FIELDS, "reactions"):
        if isinstance(data.get(key), str):
            data[key] = str(resolved(folder / data[key]))
    viewers = data.get("viewers")
    if isinstance(viewers, dict) and isinstance(viewers.get("persona_dirs"), list):
        data["viewers"] = {**viewers, "persona_dirs": [str(resolved(folder / d)) for d in viewers["persona_dirs"]]}
    return data


def _merge(base: dict, over: dict) -> dict:
    out = dict(base)
    for k, v in over.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _check_references(world: World, campaign_path: Path) -> None:
    ids = {p.id for p in world.catalog.products}
    problems = []
    named = [("opening_product", world.campaign.opening_product)]
    for i, event in enumerate(world.campaign.events):
        if hasattr(event, "product"):
            named.append((f"events.{i}.product", event.product))
        for j, pid in enumerate(getattr(event, "products", ())):
            named.append((f"events.{i}.products.{j}", pid))
        for old in getattr(event, "rename_tool", {}):
            if old not in world.harness.tools:
                problems.append(f"field 'events.{i}.rename_tool': unknown tool {old!r}; expected one of {sorted(world.harness.tools)}")
    for field, pid in named:
        if pid not in ids:
            problems.append(f"field '{field}': unknown product {pid!r}; expected a product id of the catalog")
    if problems:
        raise SpecError(campaign_path, problems)


def _check_world_ranges(world: World, path: Path) -> None:
    """Products and coupon codes that the ``world:`` ranges name must exist."""
    ids = [p.id for p in world.catalog.products]
    codes = [e.code for e in world.campaign.events if getattr(e, "type", "") == "coupon_start"]
    ranges = world.spec.world
    problems = [
        f"field 'world.{part}.products.{pid}': unknown product {pid!r}{did_you_mean(pid, ids)}"
        for part, spread in (("prices", ranges.prices), ("stock", ranges.stock))
        for pid in spread.products if pid not in ids
    ]
    problems += [f"field 'world.coupons.by_code.{code}': no coupon {code!r} in the campaign{did_you_mean(code, codes)}"
                 for code in ranges.coupons.by_code if code not in codes]
    if problems:
        raise SpecError(path, problems)
