"""The harness as data: system-prompt sections, skills, hooks, tool names and constraints.

A harness lives in a folder under ``envs/harness/``: ``harness.yaml`` plus one folder per
skill holding a ``SKILL.md`` (front matter ``name``, ``type``, ``when`` or ``description``,
then instructions). A harness that offers the ``load_skill`` tool has *skills on demand*:
the prompt lists each skill's name, type and description, and the policy loads a skill's
instructions with the tool (see ``docs/harness.md``).
Tool *behaviour* and argument types come from :mod:`liveroom_sim.harness.tools`; the harness only
decides which tools are offered and under what names and descriptions.
"""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Literal

import pydantic

from liveroom_sim.errors import SpecError
from liveroom_sim.harness.tools import SKILL_TOOL  # (tools import no harness code: no cycle)
from liveroom_sim.world import datafile
from liveroom_sim.world.campaign import SkillType
from liveroom_sim.world.datafile import Frozen, replaced
from liveroom_sim.world.derived import Memo, derived


class PromptSection(Frozen):
    """One named section of the system prompt; ``text`` may use ``{placeholders}``."""

    name: str
    title: str
    text: str


class ToolView(Frozen):
    """How the harness presents one tool: its name, description and field names."""

    name: str = pydantic.Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
    description: str | None = None
    fields: dict[str, str] = {}
    field_descriptions: dict[str, str] = {}


#: The types of skill a ``SKILL.md`` may declare. ``reply``: how to answer (a harness
#: with skills on demand wants one loaded before every reply); ``strategy``: optional
#: selling playbooks; ``after-sales`` and ``compliance``: what a situation of theirs needs.
SKILL_TYPES = typing.get_args(SkillType)


class Skill(Frozen):
    """A named instruction document.

    With skills in the prompt it is shown ``always`` or when its trigger words appear;
    with skills on demand the prompt shows its ``name``, ``type`` and ``description``
    and the policy loads the ``instructions``.

    Attributes:
        intents: The viewer intents the skill is for (what the reward's skill-selection
            term counts as relevant); ``None``: every situation; ``()``: none (a noise
            skill). ``pitch`` stands for presenting the featured product. Never shown
            to the policy.
        origin: The name the skill has in its harness file, kept when augmentation
            renames or masks it (``None``: not renamed). Never shown to the policy.
    """

    name: str
    type: SkillType = "strategy"
    when: str = "always"
    triggers: tuple[str, ...] = ()
    description: str | None = None
    intents: tuple[str, ...] | None = None
    instructions: str
    origin: str | None = None

    @property
    def key(self) -> str:
        """The skill's identity across harness variants: its file name."""
        return self.origin or self.name

    def relevant(self, intent: str) -> bool:
        """Whether the skill is for a situation of ``intent``."""
        return self.intents is None or intent in self.intents


class Hook(Frozen):
    """A declarative check around a reply.

    Types: ``max_length`` (reply longer than the constraint), ``banned_phrases`` (a
    banned phrase of the rules in force), ``required_mention`` (the asker is not
    addressed in the mention format), ``format`` (the reply is not plain speech: JSON,
    code fences or tool-call markup). Actions: ``block`` (not delivered),
    ``block_retry`` (not delivered; the policy gets one more turn with the hook's
    message), ``warn`` (delivered; counted).
    """

    type: Literal["max_length", "banned_phrases", "required_mention", "format", "input_check",
                  "tool_arguments", "required_skills", "factual_risk"]
    action: Literal["block", "block_retry", "warn"] = "warn"
    message: str


class RetryControl(Frozen):
    """How the harness retries a reply a ``block_retry`` hook stopped.

    ``max_retries``: more turns the policy gets in one exchange after blocked replies;
    ``message``: what the retry turn says (``{message}``: the hook's message, ``{type}``:
    the hook's type, ``{left}``: retries left after this one); ``simulated``: the share of
    exchanges that open with a simulated hook-triggered correction (a draft the hooks
    blocked, shown with its retry message: the policy's first move is the correction).
    """

    max_retries: int = pydantic.Field(1, ge=0, le=5)
    message: str = pydantic.Field("[hook] {message}", pattern=r"\{message\}")
    simulated: float = pydantic.Field(0.0, ge=0.0, le=1.0)


class Constraints(Frozen):
    """Interaction constraints the harness asks of every reply.

    ``greeting``: text every reply begins with (right after the mention);
    ``sign_off``: text every reply ends with. Both off when ``None``.
    ``max_tool_turns``: tool turns allowed before each reply (the prompt says so; a
    retry after a blocked reply counts afresh; a tool turn beyond it is not run and each
    of its calls is an error, which the harness term charges). Off when ``None``: the
    latency budget alone limits them.
    """

    max_chars: pydantic.PositiveInt = 280
    mention_format: str = pydantic.Field("@{name}", pattern=r"^[^{}]*\{name\}[^{}]*$")
    greeting: str | None = None
    sign_off: str | None = None
    max_tool_turns: pydantic.PositiveInt | None = None


class Harness(Frozen):
    """A complete harness state."""

    format: Literal["markdown", "xml", "json"] = "markdown"
    sections: tuple[PromptSection, ...] = pydantic.Field(min_length=1)
    tools: dict[str, ToolView] = pydantic.Field(min_length=1)
    skills: tuple[Skill, ...] = ()
    hooks: tuple[Hook, ...] = ()
    constraints: Constraints = Constraints()
    retry: RetryControl = RetryControl()
    #: The order the prompt lists its data items in (the lineup's products, the rules'
    #: lines): the catalog's and rule set's own when ``None``, else a permutation drawn
    #: from this seed (HSA's ``reorder_items``).
    item_order: int | None = None

    @property
    def skills_on_demand(self) -> bool:
        """Whether the policy loads skills itself (the harness offers ``load_skill``)."""
        return SKILL_TOOL in self.tools

    def skill_named(self, name: object) -> Skill | None:
        """The skill called ``name`` now (case and surrounding space ignored), or ``None``."""
        if not isinstance(name, str):
            return None
        key = name.strip().lower()
        return next((s for s in self.skills if s.name.lower() == key), None)

    def tool_name(self, canonical: str) -> str:
        """The name the policy must use now for canonical tool ``canonical``."""
        return self.tools[canonical].name

    @derived
    def tool_schemas(self) -> list[dict]:
        """The harness's tools in OpenAI ``tools`` format, schemas from the typed tools
        (names, fields and descriptions as this harness shows them); read-only."""
        out = []
        for canonical, view in self.tools.items():
            tool = _tool_registry()[canonical]
            schema = tool.schema
            props = {}
            for field, spec in schema.get("properties", {}).items():
                name = view.fields.get(field, field)
                desc = view.field_descriptions.get(field, tool.field_docs.get(field, ""))
                props[name] = {"type": spec.get("type", "string"), "description": desc}
            out.append({
                "type": "function",
                "function": {
                    "name": view.name,
                    "description": view.description or tool.description,
                    "parameters": {"type": "object", "properties": props,
                                   "required": [view.fields.get(f, f) for f in schema.get("required", [])],
                                   "additionalProperties": False},
                },
            })
        return out

    @derived
    def name_tables(self) -> tuple[dict[str, str], dict[str, tuple[dict[str, str], dict[str, str]]]]:
        """``(tool name -> canonical, canonical -> (its fields renamed, shown -> canonical))``:
        what :meth:`canonical_tool` and the tool views say, for reading calls."""
        names: dict[str, str] = {}
        for canonical, view in self.tools.items():
            names.setdefault(view.name, canonical)  # the first tool of a name, as canonical_tool
        fields = {canonical: (view.fields, {shown: field for field, shown in view.fields.items()})
                  for canonical, view in self.tools.items()}
        return names, fields

    @derived
    def read_calls(self) -> Memo:
        """Tool calls read against this harness, by name and arguments text
        (:mod:`liveroom_sim.harness.actions`: a policy makes the same few calls again and
        again). An optimisation: it saves about 1% of the env's step time (see ``Memo``)."""
        return Memo(4096)

    @derived
    def prompts(self) -> Memo:
        """System prompts rendered with this harness, by what else they read
        (:mod:`liveroom_sim.sim.chat.prompts`). An optimisation: about 2% of the env's
        step time."""
        return Memo(256)

    @derived
    def _changes(self) -> dict[tuple, "Harness"]:
        """The harnesses :meth:`after` made from this one, by change (see there)."""
        return {}

    def after(self, change) -> "Harness":
        """This harness after a campaign ``harness_change``: tools renamed (canonical name
        -> new name) and a skill added or replaced.

        The same harness and the same change give the same object back (harnesses are
        frozen): every episode of a spec makes the same changes (its events differ only
        in their times), and what is kept per harness object (the rendered prompt, the
        tool-name tables) is then built once per spec instead of once per episode. Kept
        on this harness, by every field of the change but its time, so a field added to
        the event later is part of the key too.
        """
        key = tuple((k, tuple(v.items()) if isinstance(v, dict) else v)
                    for k, v in change.__dict__.items() if k != "at")
        changes = self._changes
        after = changes.get(key)
        if after is None:
            after = changes[key] = self._after(change)
        return after

    def _after(self, change) -> "Harness":
        tools = {k: replaced(v, {"name": change.rename_tool[k]}) if k in change.rename_tool else v
                 for k, v in self.tools.items()}
        skills = self.skills
        if change.skill:
            text = change.skill_text or ""
            # A skill on demand is listed by its description: the event's, else its text's first line.
            first = next((ln.strip("# ").strip() for ln in text.splitlines() if ln.strip("# ").strip()), change.skill)
            new = Skill(name=change.skill, type=change.skill_type, when=change.skill_when,
                        description=change.skill_description or first, instructions=text)
            skills = tuple(s for s in skills if s.name != change.skill) + (new,)
        return replaced(self, {"tools": tools, "skills": skills})

    def canonical_tool(self, name: str) -> str | None:
        """The canonical tool called ``name`` under this harness, or ``None``."""
        for canonical, view in self.tools.items():
            if view.name == name:
                return canonical
        return None



def load_skill(path: Path) -> Skill:
    """Parse a ``SKILL.md``: YAML front matter between ``---`` lines, then instructions."""
    text = datafile.read_text(path)
    if not text.startswith("---"):
        raise SpecError(path, ["front matter: expected the file to start with '---' and YAML (name, when)"])
    try:
        _, head, body = text.split("---", 2)
    except ValueError as exc:
        raise SpecError(path, [f"front matter: expected YAML between '---' lines ({exc})"]) from None
    meta = datafile.parse_yaml(head, path) or {}
    if not isinstance(meta, dict):
        raise SpecError(path, ["front matter: expected a mapping with name and when"])
    return datafile.validate(Skill, {**meta, "instructions": body.strip()}, path)


def load_harness(folder: Path | str) -> Harness:
    """Load a harness folder (``harness.yaml`` and ``*/SKILL.md``)."""
    folder = Path(folder)
    base = datafile.load(Harness, folder / "harness.yaml")
    skills = tuple(load_skill(p) for p in sorted(folder.glob("*/SKILL.md")))
    known = set(_tool_registry())
    unknown = sorted(set(base.tools) - known)
    if unknown:
        raise SpecError(folder / "harness.yaml", [f"field 'tools': unknown tools {unknown}; expected some of {sorted(known)}"])
    harness = replaced(base, {"skills": base.skills + skills})
    if harness.skills_on_demand:
        bare = [s.name for s in harness.skills if not s.description]
        if bare:
            raise SpecError(folder, [f"skills {bare}: a harness with skills on demand ({SKILL_TOOL!r} in tools) "
                                     "needs a 'description' in each SKILL.md front matter"])
        if not any(s.type == "reply" for s in harness.skills):
            raise SpecError(folder, ["skills: a harness with skills on demand needs a skill of type 'reply'"])
    return harness


def _tool_registry():
    from liveroom_sim.harness.tools import (
        TOOLS,  # tools import catalog data only; no cycle at import time
    )

    return TOOLS
