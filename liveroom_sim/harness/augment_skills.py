"""Harness-State Augmentation of skills and hooks: the paper's skill-identifier, skill
content and hook dimensions.

Skill identifiers: ``inject_noise_skills`` (skills for no situation a viewer brings),
``mask_skill_names`` (opaque ids), ``rename_skills``, ``redescribe_skills``. Skill content:
``rewrite_skill_content`` (the rules as a numbered list, bullets or one paragraph),
``mask_skill_content`` (worked examples omitted, rules kept), ``reorder_skill_content``.
Hooks: ``vary_retry`` (how many retries the harness grants, within the range the business
allows), ``restructure_hook_messages`` (what a retry turn says around the hook's
message) and ``simulate_corrections`` (a share of exchanges opens with a draft the hooks
blocked, shown with its retry message, so the policy's first move is the correction).

Each operator is task-preserving: the catalog, campaign and viewers are not touched; a
renamed or masked skill keeps its identity (:attr:`~liveroom_sim.harness.core.Skill.key`),
type and the situations it is for, so the skills a situation needs, and the reward of
loading them, are the same under every variant; noise skills are for no situation. Pools:
``envs/harness/hsa-skills.yaml``.
"""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from liveroom_sim.harness.core import Harness, RetryControl, Skill
from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen, replaced
from liveroom_sim.world.paths import ENVS_DIR


class NoiseSkill(Frozen):
    name: str
    description: str
    instructions: str


class SkillPools(Frozen):
    """The alternatives the skill and hook operators draw from."""

    skill_names: dict[str, tuple[str, ...]]
    skill_descriptions: dict[str, dict[str, tuple[str, ...]]]
    noise_skills: dict[str, tuple[NoiseSkill, ...]]
    example_masks: dict[str, str]
    retry: dict[str, tuple | dict[str, tuple[str, ...]]]


@lru_cache(maxsize=4)
def load_skill_pools(path: str = str(ENVS_DIR / "harness" / "hsa-skills.yaml")) -> SkillPools:
    return datafile.load(SkillPools, path)


def _pick(rng: np.random.Generator, options):
    return options[int(rng.integers(len(options)))]


def _skills(h: Harness, skills) -> Harness:
    return replaced(h, {"skills": tuple(skills)})


def inject_noise_skills(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Add one or two noise skills (for no situation; shown like any other skill)."""
    p = load_skill_pools()
    taken = {s.name.lower() for s in h.skills}
    options = [n for n in p.noise_skills.get(lang, ()) if n.name.lower() not in taken]
    if not options or any(s.intents == () for s in h.skills):  # noise once (not again at each change)
        return h
    count = min(len(options), 1 + int(rng.integers(2)))
    chosen = [options[i] for i in sorted(rng.choice(len(options), size=count, replace=False))]
    noise = [Skill(name=n.name, type="strategy", description=n.description, instructions=n.instructions,
                   intents=()) for n in chosen]
    at = [int(rng.integers(len(h.skills) + 1)) for _ in noise]  # anywhere in the list
    skills = list(h.skills)
    for i, sk in sorted(zip(at, noise), key=lambda x: -x[0]):
        skills.insert(i, sk)
    return _skills(h, skills)


def mask_skill_names(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Replace skill names by opaque ids (``skill-07``); descriptions still say what each is for."""
    numbers = rng.choice(np.arange(1, 100), size=len(h.skills), replace=False)
    return _skills(h, (replaced(s, {"name": f"skill-{int(n):02d}", "origin": s.key})
                       for s, n in zip(h.skills, numbers)))


def rename_skills(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Rename skills from the pool of names for each (a skill without a pool keeps its name)."""
    p = load_skill_pools()
    taken = {s.name.lower() for s in h.skills}
    out = []
    for s in h.skills:
        options = [n for n in p.skill_names.get(s.key, ()) if n.lower() not in taken]
        if options:
            name = _pick(rng, options)
            taken.add(name.lower())
            s = replaced(s, {"name": name, "origin": s.key})
        out.append(s)
    return _skills(h, out)


def redescribe_skills(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Rewrite skill descriptions with the pool's equivalents."""
    table = load_skill_pools().skill_descriptions.get(lang, {})
    return _skills(h, (replaced(s, {"description": _pick(rng, table[s.key])}) if table.get(s.key) else s
                       for s in h.skills))


_SENTENCE = re.compile(r"[^.!?。！？；;\n]+[.!?。！？；;]*")


def _sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip(" .。")]


def rewrite_skill_content(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Rewrite each skill's rules as a numbered list, bullets or one paragraph."""
    out = []
    for s in h.skills:
        rules = _sentences(s.instructions)
        style = int(rng.integers(3))
        if style == 0:
            text = "\n".join(f"{i}. {r}" for i, r in enumerate(rules, 1))
        elif style == 1:
            text = "\n".join(f"- {r}" for r in rules)
        else:
            text = ("" if lang == "zh" else " ").join(rules)
        out.append(replaced(s, {"instructions": text or s.instructions}))
    return _skills(h, out)


_EXAMPLE = re.compile(r"[（(][^（）()]*[“\"][^”\"]+[”\"][^（）()]*[）)]|（[^（）]*[、，][^（）]*）")


def mask_skill_content(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Omit the worked examples in parentheses (the rules they illustrate stay)."""
    mark = load_skill_pools().example_masks.get(lang, "[...]")
    out = []
    for s in h.skills:
        examples = list(_EXAMPLE.finditer(s.instructions))
        if examples:
            keep = rng.random(len(examples)) < 0.5  # each example masked with probability 1/2
            text = s.instructions
            for m, kept in sorted(zip(examples, keep), key=lambda x: -x[0].start()):
                if not kept:
                    text = text[:m.start()] + f"({mark})" + text[m.end():]
            s = replaced(s, {"instructions": text})
        out.append(s)
    return _skills(h, out)


def reorder_skill_content(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Shuffle the order of each skill's rules."""
    out = []
    for s in h.skills:
        rules = _sentences(s.instructions)
        if len(rules) > 1:
            order = rng.permutation(len(rules))
            s = replaced(s, {"instructions": "\n".join(rules[i] for i in order)})
        out.append(s)
    return _skills(h, out)


def vary_retry(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Grant another number of retries after a blocked reply, within the pool's range."""
    options = load_skill_pools().retry.get("max_retries", ())
    if not options:
        return h
    return replaced(h, {"retry": replaced(h.retry, {"max_retries": int(_pick(rng, options))})})


def restructure_hook_messages(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Change what a retry turn says around the hook's message (its structure, not its content)."""
    table = load_skill_pools().retry.get("message", {})
    options = table.get(lang, ()) if isinstance(table, dict) else ()
    if not options:
        return h
    return replaced(h, {"retry": RetryControl(max_retries=h.retry.max_retries, message=_pick(rng, options))})


def simulate_corrections(h: Harness, lang: str, rng: np.random.Generator, pools=None) -> Harness:
    """Open a share of the exchanges with a simulated hook-triggered correction: a
    careless draft the harness's hooks block, shown with its retry message (see
    :func:`liveroom_sim.sim.hooks.simulated_correction`)."""
    options = load_skill_pools().retry.get("simulated", ())
    if not options:
        return h
    return replaced(h, {"retry": replaced(h.retry, {"simulated": float(_pick(rng, options))})})


#: The operators of this module, in the order :func:`liveroom_sim.harness.augment.augment`
#: applies them (descriptions are rewritten by a skill's file name, before renaming).
SKILL_OPERATORS = {
    "redescribe_skills": redescribe_skills,
    "rewrite_skill_content": rewrite_skill_content,
    "mask_skill_content": mask_skill_content,
    "reorder_skill_content": reorder_skill_content,
    "inject_noise_skills": inject_noise_skills,
    "rename_skills": rename_skills,
    "mask_skill_names": mask_skill_names,
    "vary_retry": vary_retry,
    "restructure_hook_messages": restructure_hook_messages,
    "simulate_corrections": simulate_corrections,
}
