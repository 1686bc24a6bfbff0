"""Skill selection and reasoning length: the reward terms of a harness with skills on
demand and a reasoning budget (the paper's *skill selection* reward and its penalty on
reasoning length). Pure functions of a turn's context; see ``docs/rewards.md``.

The reading of which skills a reply needs and which it loaded is shared with the
``required_skills`` hook (:func:`has_reply_skill`), so the hook and the reward agree.
"""

from __future__ import annotations

from liveroom_sim.harness.core import SKILL_TOOL, Skill
from liveroom_sim.rewards.components import Score, _clamp
from liveroom_sim.rewards.conduct import serves

#: Skill types a situation may require (besides one reply skill): they are required when
#: their front matter names the situation's intent.
_REQUIRED_TYPES = ("after-sales", "compliance")
#: What one irrelevant skill loaded costs.
IRRELEVANT_COST = 0.5


def loaded_skills(ctx) -> tuple[Skill, ...] | None:
    """The skills loaded successfully this exchange (``None``: lookups not tracked)."""
    if ctx.lookups is None:
        return None
    found = (ctx.harness.skill_named(arg) for tool, arg in ctx.lookups if tool == SKILL_TOOL)
    return tuple(sorted({s.name: s for s in found if s is not None}.values(), key=lambda s: s.name))


def situation(ctx) -> str:
    """The intent a reply's skills are chosen for: the question's, or ``pitch`` when it
    answers nobody (presenting the featured product)."""
    return ctx.question.intent if ctx.question is not None else "pitch"


def required_skills(ctx) -> tuple[tuple[str, frozenset[str]], ...]:
    """What the situation requires, as ``(requirement, skill names that meet it)``: one
    reply skill for it, and each after-sales or compliance skill written for its intent."""
    intent = situation(ctx)
    skills = ctx.harness.skills
    out = [("a reply skill", frozenset(s.name for s in skills if s.type == "reply" and s.relevant(intent)))]
    out += [(s.name, frozenset((s.name,))) for s in skills
            if s.type in _REQUIRED_TYPES and s.intents is not None and intent in s.intents]
    return tuple(out)


def has_reply_skill(ctx) -> bool:
    """Whether a reply skill was loaded this exchange (what the ``required_skills`` hook
    checks); true when skills are not on demand or lookups are not tracked."""
    loaded = loaded_skills(ctx)
    if not ctx.harness.skills_on_demand or loaded is None:
        return True
    return any(s.type == "reply" for s in loaded)


def skill_selection(ctx) -> Score:
    """Did the host load the skills this situation needs, and only those?

    Range [-1, 1]. Replies under a harness with skills on demand: the share of the
    situation's requirements met (one reply skill; the after-sales or compliance skill
    written for the question's intent), minus 0.5 per loaded skill that is not for this
    situation (a noise skill, the after-sales playbook for a price question); -1 when no
    skill was loaded this exchange. A positive value is earned only by a delivered reply
    that serves a need (loading the right skills and then saying nothing useful earns
    nothing). Tool turns, and harnesses without skills on demand: 0.
    """
    if ctx.kind != "reply" or not ctx.harness.skills_on_demand:
        return Score(0.0, ("skills not on demand",) if ctx.kind == "reply" else ())
    loaded = loaded_skills(ctx)
    if loaded is None:
        return Score(0.0, ("lookups not tracked",))
    if not loaded:
        return Score(-1.0, ("no skill loaded this exchange",))
    names = {s.name for s in loaded}
    needs = required_skills(ctx)
    unmet = [what for what, meets in needs if not names & meets]
    intent = situation(ctx)
    irrelevant = [s.name for s in loaded if not s.relevant(intent)]
    value = _clamp((len(needs) - len(unmet)) / len(needs) - IRRELEVANT_COST * len(irrelevant))
    reasons = [f"loaded {sorted(names)}"]
    if unmet:
        reasons.append(f"missing {unmet}")
    if irrelevant:
        reasons.append(f"not for a {intent} request: {irrelevant}")
    if value > 0 and not serves(ctx):
        return Score(0.0, (*reasons, "credit withheld: the reply serves no waiting need"))
    return Score(value, tuple(reasons))


def reasoning_length(ctx) -> Score:
    """Reasoning past the budget: ``<think>`` text the action carried beyond
    ``reasoning_budget`` characters.

    Range [-1, 0]: 0 within the budget (or with no budget); else minus the excess over
    the budget as a share of the budget (at least 100 characters), down to -1. Tool
    turns and replies alike: the paper shortens reasoning before both.
    """
    budget = ctx.reasoning_budget
    if budget is None or ctx.reasoning_chars <= budget:
        return Score(0.0, (f"{ctx.reasoning_chars} reasoning chars",) if ctx.reasoning_chars else ())
    excess = ctx.reasoning_chars - budget
    return Score(_clamp(-excess / max(budget, 100)), (f"{ctx.reasoning_chars} reasoning chars, budget {budget}",))
