"""Hooks: the harness's checks around a turn, as the paper lists them.

Around a reply (:func:`fired_hooks`): ``max_length``, ``banned_phrases``, ``format``
(the reply format), ``required_mention``, ``required_skills`` (no reply skill loaded this
exchange, under skills on demand) and ``factual_risk`` (a fact claimed that no lookup of
this exchange backs). Around a tool turn (:func:`check_tool_calls`): ``tool_arguments``
(a product, order or skill the call names that the room does not have). On the room's
update (:func:`check_input`): ``input_check`` (a viewer message that tries to instruct
the host). Each either passes or fires with its message; the room blocks, retries (up
to the harness's ``retry.max_retries``, with its ``retry.message``) or warns as the
hook's action says.

The banned-phrase hook judges from the same reading of the reply as the ``compliance``
reward component (:func:`~liveroom_sim.rewards.reading.reading_of`): it fires on a
banned phrase or a banned claim for the products concerned, never on what a refusal
quotes, so it never blocks a reply the reward calls compliant.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import numpy as np

from liveroom_sim.errors import did_you_mean
from liveroom_sim.harness.actions import Action, ToolCall
from liveroom_sim.harness.core import SKILL_TOOL, Harness
from liveroom_sim.rewards.context import TurnContext
from liveroom_sim.rewards.reading import violations
from liveroom_sim.rewards.skills import has_reply_skill
from liveroom_sim.rewards.tooluse import unbacked_claims
from liveroom_sim.world.market import Market

#: What a spoken reply never contains: tool-call markup and code fences.
MARKUP = ("<tool_call>", '"tool_calls"', "```", "<function", "</think>")


def fired_hooks(ctx: TurnContext) -> list[tuple]:
    """``(hook, message)`` for each hook of the context's harness that the reply trips."""
    fired = []
    c = ctx.harness.constraints
    for hook in ctx.harness.hooks:
        detail = {"max_chars": ctx.max_chars, "mention": c.mention_format.format(name="name"), "phrase": "",
                  "claims": "", "skill_tool": ctx.harness.tools[SKILL_TOOL].name if ctx.harness.skills_on_demand else ""}
        if hook.type in ("input_check", "tool_arguments"):
            continue  # not reply checks: see check_input and check_tool_calls
        if hook.type == "max_length":
            hit = len(ctx.reply.strip()) > ctx.max_chars
        elif hook.type == "banned_phrases":
            phrase = banned_said(ctx)
            hit, detail["phrase"] = phrase is not None, phrase or ""
        elif hook.type == "format":
            text = ctx.reply.lstrip()
            # (a leading "[" may be the harness's own mention format, e.g. "[to mia]")
            hit = text.startswith("{") or any(t in text for t in MARKUP)
        elif hook.type == "required_skills":
            hit = bool(ctx.reply.strip()) and not has_reply_skill(ctx)
        elif hook.type == "factual_risk":
            missing = unbacked_claims(ctx)
            hit, detail["claims"] = bool(missing), ", ".join(c.said for c in missing)
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


def check_tool_calls(action: Action, harness: Harness, market: Market) -> tuple[Action, list[tuple]]:
    """The tool turn after the ``tool_arguments`` hooks: ``(action, [(hook, message)])``.

    A call whose arguments name a product, order or skill the room does not have fires
    the hook; a blocking hook replaces the call by an error carrying its message (the
    call is not run), a warning lets it run. Message placeholders: ``{tool}``,
    ``{argument}``, ``{value}`` and ``{hint}`` (the closest names the room has).
    """
    hooks = [h for h in harness.hooks if h.type == "tool_arguments"]
    if not hooks or action.kind != "tool":
        return action, []
    fired, calls = [], []
    for call in action.tool_calls:
        bad = None if call.error or call.arguments is None else _bad_argument(call, harness, market)
        if bad is not None:
            for hook in hooks:
                message = hook.message.format(tool=call.name, argument=bad[0], value=bad[1], hint=bad[2])
                fired.append((hook, message))
                if hook.action != "warn" and call.error is None:
                    call = replace(call, error=message)
        calls.append(call)
    return (replace(action, tool_calls=tuple(calls)) if fired else action), fired


def _bad_argument(call: ToolCall, harness: Harness, market: Market) -> tuple[str, str, str] | None:
    """The first argument of the call (as the harness names it) that names nothing the
    room has: its name, its value and a did-you-mean hint."""
    shown = harness.tools[call.canonical].fields
    for field, value in call.arguments.items():
        if field not in _NAMES:
            continue
        if field == "skill":
            ok = isinstance(value, str) and harness.skill_named(value) is not None
        elif field == "product_id":
            ok = isinstance(value, str) and value in market.catalog.by_id
        else:
            ok = isinstance(value, str) and any(o.id == value for o in market.catalog.orders)
        if not ok:
            known = _NAMES[field](market, harness)  # (listed only for the hint)
            return shown.get(field, field), str(value), did_you_mean(str(value), known).strip()
    return None


#: What each checked argument names, listed for a did-you-mean hint.
_NAMES = {"product_id": lambda market, harness: list(market.catalog.by_id),
          "order_id": lambda market, harness: [o.id for o in market.catalog.orders],
          "skill": lambda market, harness: [s.name for s in harness.skills]}


def check_input(update: str, messages: list, harness: Harness, cues: tuple[str, ...]) -> tuple[str, list[tuple]]:
    """The room's update after the ``input_check`` hooks: ``(update, [(hook, message)])``.

    A viewer message in the update that tries to instruct the host (it carries one of
    the phrasebook's injection ``cues``, or tool-call markup) fires the hook: a warning
    adds the hook's message to the update (``{names}``: who sent them), a block also
    withholds the messages' text. The messages stay in the room (the viewer still waits).
    """
    hooks = [h for h in harness.hooks if h.type == "input_check"]
    if not hooks:
        return update, []
    flagged = [m for m in messages if _instructs(m.text.lower(), cues)]
    if not flagged:
        return update, []
    names = ", ".join(dict.fromkeys(m.viewer.name for m in flagged))
    fired = []
    for hook in hooks:
        message = hook.message.format(names=names)
        fired.append((hook, message))
        if hook.action != "warn":
            for m in flagged:
                update = update.replace(f": {m.text}", ": [withheld by the input check]")
        update += f"\n[hook] {message}"
    return update, fired


def _instructs(text: str, cues: tuple[str, ...]) -> bool:
    return any(c in text for c in cues) or any(t in text for t in MARKUP)


#: Key of the simulated corrections' generator in the episode's seed sequence.
_CORRECTIONS_KEY = 0x5C0AA


def corrections_generator(rng: np.random.Generator) -> np.random.Generator:
    """The generator of an episode's simulated corrections: derived from its seed
    sequence by a fixed key, so it consumes nothing of the viewers' stream."""
    seq = rng.bit_generator.seed_seq
    child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, _CORRECTIONS_KEY), pool_size=seq.pool_size)
    return np.random.Generator(np.random.PCG64(child))


def simulated_correction(harness: Harness, lines: tuple[str, ...], rng: np.random.Generator,
                         context_of: Callable[[str], TurnContext]) -> tuple[object, str, str] | None:
    """A hook-triggered correction to open the exchange with, or ``None``:
    ``(hook, draft, retry message)`` when the draw falls within the harness's
    ``retry.simulated`` share and a draft trips a ``block_retry`` hook.

    Drafts are the phrasebook's generic host ``lines`` as a careless policy would send
    them: as they are (no skill loaded, nobody addressed), past the length limit, or
    wrapped in tool-call markup; the hooks judge each exactly as they judge a reply, on
    the room's own reading of it (``context_of(draft)``).
    """
    control = harness.retry
    if control.max_retries == 0 or rng.random() >= control.simulated:
        return None
    line = lines[int(rng.integers(len(lines)))]
    drafts = [line, " ".join([line] * (harness.constraints.max_chars // max(len(line), 1) + 2)),
              f"<tool_call>{line}</tool_call>"]
    for i in rng.permutation(len(drafts)):
        fired = [(h, m) for h, m in fired_hooks(context_of(drafts[i])) if h.action == "block_retry"]
        if fired:
            hook, message = fired[0]
            # (a simulated correction uses none of the exchange's retries)
            return hook, drafts[i], control.message.format(message=message, type=hook.type, left=control.max_retries)
    return None
