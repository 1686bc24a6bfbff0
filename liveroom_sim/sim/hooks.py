"""Hooks: the harness's checks around a reply, run before the room hears it.

Each hook the harness declares (``max_length``, ``banned_phrases``, ``format``,
``mention``) either passes or fires with its message; the room blocks, retries or
warns as the hook's action says.

The banned-phrase hook judges from the same reading of the reply as the ``compliance``
reward component (:func:`~liveroom_sim.rewards.reading.reading_of`): it fires on a
banned phrase or a banned claim for the products concerned, never on what a refusal
quotes, so it never blocks a reply the reward calls compliant.
"""

from __future__ import annotations

from liveroom_sim.rewards.context import TurnContext
from liveroom_sim.rewards.reading import violations

#: What a spoken reply never contains: tool-call markup and code fences.
MARKUP = ("<tool_call>", '"tool_calls"', "```", "<function", "</think>")


def fired_hooks(ctx: TurnContext) -> list[tuple]:
    """``(hook, message)`` for each hook of the context's harness that the reply trips."""
    fired = []
    c = ctx.harness.constraints
    for hook in ctx.harness.hooks:
        detail = {"max_chars": ctx.max_chars, "mention": c.mention_format.format(name="name"), "phrase": ""}
        if hook.type == "max_length":
            hit = len(ctx.reply.strip()) > ctx.max_chars
        elif hook.type == "banned_phrases":
            phrase = banned_said(ctx)
            hit, detail["phrase"] = phrase is not None, phrase or ""
        elif hook.type == "format":
            text = ctx.reply.lstrip()
            # (a leading "[" may be the harness's own mention format, e.g. "[to mia]")
            hit = text.startswith("{") or any(t in text for t in MARKUP)
        else:
            hit = ctx.question is not None and not any(
                m.lower() == ctx.question.asker.lower() for m in ctx.analysis.mentions)
        if hit:
            fired.append((hook, hook.message.format(**detail)))
    return fired


def banned_said(ctx: TurnContext) -> str | None:
    """The first banned phrase or banned claim the reply makes, as the reward counts it
    (:func:`~liveroom_sim.rewards.reading.violations`), or ``None``."""
    for f in violations(ctx):
        if f.kind == "banned":
            return f.rule
        if f.kind == "claim":
            return f.said
    return None
