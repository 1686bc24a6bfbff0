"""Verifiable instructions of the ``follow`` suite, in the manner of IFEval: each check
reads the reply (and the rules, constraints and directives in force) and says met or not.

Checks: ``max_chars`` (the length limit in force, a stricter style directive's included),
``mention`` (the asker addressed in the harness's mention format), ``greeting`` and
``sign_off`` (the harness's required opening and closing), ``language`` (the room's
language), ``disclosure`` (every disclosure the rules require for what the reply is about),
``slogan`` (the slogan in force, when it is owed), ``avoid_topics`` (none of the topics
the directive says to avoid), ``rules`` (no violation of the rules in force, updates
mid-stream included) and ``skills`` (under a harness with skills on demand: the skills
the situation requires, a reply skill among them, were loaded before the reply).
"""

from __future__ import annotations

import re

from liveroom_sim.evals.cases import Case
from liveroom_sim.rewards.analysis import addresses
from liveroom_sim.rewards.conduct import says_slogan
from liveroom_sim.rewards.skills import loaded_skills, required_skills
from liveroom_sim.evals.grade import compliance_violations

_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
CHECKS = ("max_chars", "mention", "greeting", "sign_off", "language", "disclosure", "slogan", "avoid_topics", "rules",
          "skills")


def _language_ok(reply: str, language: str) -> bool:
    cjk = len(_CJK.findall(reply))
    if language == "zh":
        return cjk >= max(2, len(_LATIN_WORD.findall(reply)))
    return cjk == 0


def check(name: str, value, ctx) -> bool:
    """Whether the reply of ``ctx`` meets instruction ``name`` (``value``: its parameter)."""
    reply = ctx.reply.strip()
    c = ctx.harness.constraints
    if name == "max_chars":
        return len(reply) <= ctx.max_chars
    if name == "mention":
        return ctx.question is not None and addresses(reply, ctx.question.asker, c.mention_format)
    if name == "greeting":
        return bool(c.greeting) and c.greeting in reply[: len(c.greeting) + 40]
    if name == "sign_off":
        return bool(c.sign_off) and reply.endswith(c.sign_off)
    if name == "language":
        return _language_ok(reply, str(value))
    if name == "disclosure":
        return not any(v.startswith(("missing_disclosure:", "denial:")) for v in compliance_violations(ctx))
    if name == "slogan":
        return says_slogan(ctx.analysis.norm, ctx.market.style.slogan or "")
    if name == "avoid_topics":
        return not any(t.lower() in ctx.analysis.norm for t in ctx.market.style.avoid_topics)
    if name == "rules":
        return not compliance_violations(ctx)
    if name == "skills":
        loaded = {s.name for s in loaded_skills(ctx) or ()}
        return all(loaded & names for _, names in required_skills(ctx))
    raise ValueError(f"unknown check {name!r}; expected one of {', '.join(CHECKS)}")


def check_all(case: Case, ctx) -> dict[str, bool]:
    """Every check of the case; all unmet when the turn produced no reply."""
    if ctx is None or not ctx.delivered:
        return {c.name: False for c in case.checks}
    return {c.name: check(c.name, c.value, ctx) for c in case.checks}
