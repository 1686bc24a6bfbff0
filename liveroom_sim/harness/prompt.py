"""Render what the policy sees from the current harness and room state: the system
prompt, the OpenAI tool schemas, and each turn's room update."""

from __future__ import annotations

import json
import re
from typing import get_args

import numpy as np
import pydantic

from liveroom_sim.errors import SpecError
from liveroom_sim.harness.core import SKILL_TOOL, Harness
from liveroom_sim.world import datafile
from liveroom_sim.world.campaign import SkillType
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.market import Market
from liveroom_sim.world.paths import ENVS_DIR

class PromptLabels(Frozen):
    """How one language's system prompt words the harness and the room
    (``envs/prompt/<lang>.yaml``): each label a format string whose ``{slots}`` the
    renderer fills, so each must keep the slots it is given here."""

    banned: str
    claims: str
    disclose: str
    featured: str
    slogan: str
    tone: str
    avoid: str
    max: str
    always: str
    loads: str
    any: str
    greeting: str
    sign_off: str
    max_tool_turns: str
    on_demand: str
    types: dict[SkillType, str]
    when: dict[str, str] = {}  # rule scopes in the language's words (default: the scope's name)

    @pydantic.model_validator(mode="after")
    def _slots(self):
        for label, wanted in _SLOTS_OF.items():
            found = set(_SLOT.findall(getattr(self, label)))
            if found != wanted:
                raise ValueError(f"{label}: slots {sorted(found)}, the renderer fills {sorted(wanted)}")
        missing = sorted(set(get_args(SkillType)) - set(self.types))
        if missing:
            raise ValueError(f"types: no label for {missing}")
        return self


_SLOT = re.compile(r"\{(\w*)\}")
_SLOTS_OF = {"claims": {"name"}, "disclose": {"forms", "when"}, "featured": {"name", "id"}, "slogan": {"slogan"},
             "tone": {"tone"}, "avoid": {"topics"}, "max": {"n"}, "loads": {"triggers"}, "greeting": {"text"},
             "sign_off": {"text"}, "max_tool_turns": {"text"}, "on_demand": {"tool"}}


def _load_labels() -> dict[str, dict]:
    """Every language's labels, as plain dicts (the renderer and the built-in hosts'
    reading index them by label)."""
    return {path.stem: datafile.load(PromptLabels, path).model_dump()
            for path in sorted((ENVS_DIR / "prompt").glob("*.yaml"))}


#: ``{language: {label: wording}}`` from ``envs/prompt/<lang>.yaml``.
LABELS = _load_labels()


def _labels(language: str) -> dict:
    try:
        return LABELS[language]
    except KeyError:
        raise SpecError(ENVS_DIR / "prompt" / f"{language}.yaml",
                        [f"no system-prompt wording for language {language!r}: write this file "
                         "(as envs/prompt/en.yaml words it)"]) from None

def tool_schemas(harness: Harness) -> list[dict]:
    """The harness's tools in OpenAI ``tools`` format (:attr:`Harness.tool_schemas`:
    made once per harness state; read-only)."""
    return harness.tool_schemas


def system_prompt(harness: Harness, market: Market, language: str, room: dict, active_skills: frozenset[str]) -> str:
    """The system prompt rendered from the harness's sections in its format."""
    L = _labels(language)
    c = harness.constraints
    values = {
        "host_name": room["host_name"],
        "room_name": room["name"],
        "lineup": _in_order(market.catalog.lineup, harness.item_order),
        "rules": _in_order(_rules_text(market.rules, L), harness.item_order),
        "directives": _directives_text(market, L),
        "max_chars": min(c.max_chars, market.style.max_chars or c.max_chars),
        "mention": c.mention_format.format(name="name"),
        "skills": _skills_text(harness, active_skills, L),
        "etiquette": " ".join(L[k].format(text=getattr(c, k)) for k in ("greeting", "sign_off", "max_tool_turns")
                              if getattr(c, k)),
    }
    parts = [(s.name, s.title, s.text.format(**values)) for s in harness.sections]
    if harness.format == "xml":
        return "\n".join(f"<{n}>\n{body}\n</{n}>" for n, _, body in parts)
    if harness.format == "json":
        return json.dumps({n: body for n, _, body in parts}, ensure_ascii=False, indent=1)
    return "\n\n".join(f"## {title}\n{body}" for _, title, body in parts)


def _in_order(lines: str, seed: int | None) -> str:
    """``lines`` (one item a line) in the order ``seed`` draws, or as they are."""
    if seed is None:
        return lines
    items = lines.split("\n")
    return "\n".join(items[i] for i in np.random.default_rng(seed).permutation(len(items)))


def _rules_text(r, L: dict) -> str:
    lines = [f"{L['banned']}: " + ", ".join(f'"{b.phrase}"' for b in r.banned)] if r.banned else []
    for claim in r.claims:
        cats = ", ".join(claim.categories) or L["any"]
        # A family of verbs and objects only ("boost immunity") is shown by them: no rule line ends empty.
        said = ", ".join(claim.patterns[:6]) or " / ".join(claim.verbs[:4]) + " " + " / ".join(claim.objects[:4])
        lines.append(L["claims"].format(name=claim.name) + f" {cats}: " + said.strip())
    for d in r.disclosures:
        when = L.get("when", {}).get(d.when, d.when.replace("_", " "))
        lines.append(L["disclose"].format(forms=" / ".join(f'"{f}"' for f in d.forms), when=when))
    return "\n".join(lines)


def _directives_text(market: Market, L: dict) -> str:
    p = market.catalog.by_id[market.featured]
    s = market.style
    lines = [L["featured"].format(name=p.name, id=p.id)]
    if s.slogan:
        lines.append(L["slogan"].format(slogan=s.slogan))
    if s.tone:
        lines.append(L["tone"].format(tone=s.tone))
    if s.max_chars:
        lines.append(L["max"].format(n=s.max_chars))
    if s.avoid_topics:
        lines.append(L["avoid"].format(topics=", ".join(s.avoid_topics)))
    return "\n".join(lines)


def _skills_text(harness: Harness, active: frozenset[str], L: dict) -> str:
    if harness.skills_on_demand:
        listed = "\n".join(f"- {sk.name} [{L['types'][sk.type]}]: {sk.description}" for sk in harness.skills)
        return L["on_demand"].format(tool=harness.tool_name(SKILL_TOOL)) + "\n" + listed
    out = []
    for sk in harness.skills:
        if sk.when == "always" or sk.name in active:
            out.append(f"### {sk.name} {L['always'] if sk.when == 'always' else ''}\n{sk.instructions}")
        else:
            out.append(f"### {sk.name} " + L["loads"].format(triggers=", ".join(sk.triggers)))
    return "\n\n".join(out)


def active_skills(harness: Harness, chat_text: str) -> frozenset[str]:
    """Triggered skills whose trigger words appear in the (lower-cased) chat."""
    return frozenset(sk.name for sk in harness.skills
                     if sk.when != "always" and any(t.lower() in chat_text for t in sk.triggers))


#: How the prompt labels each skill type, per language (what a policy reads back).
SKILL_TYPE_LABELS = {lang: dict(L["types"]) for lang, L in LABELS.items()}
#: The sentence that introduces skills on demand (``{tool}``: the skill tool's name now).
SKILL_LIST_INTRO = {lang: L["on_demand"] for lang, L in LABELS.items()}
