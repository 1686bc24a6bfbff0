"""Reward components about how the host serves the room: engagement, strategy and
harness-following. Pure functions of a turn context; values in [-1, 1]."""

from __future__ import annotations

import math
import re
from functools import lru_cache

from liveroom_sim.rewards.components import Score, _clamp
from liveroom_sim.world.text import contains, mention_pattern, normalize

#: Question intents answered by refusing (politely) rather than with facts.
REFUSE_INTENTS = ("bait", "inject")


def engagement(ctx) -> Score:
    """Did the reply serve the viewer who asked, in time, and move the room?

    Range [-1, 1]. Earns: the facts the question asked for (0.55 times the share
    stated; for bait and injections, a polite refusal that does not obey), addressing
    the asker (0.15), timeliness (0.15 times exp(-wait / (4 x latency budget))), the
    asker's satisfaction change and purchases it brought (up to +-0.15). Loses: answering
    nothing while questions wait (-0.25), repeating an earlier reply (-0.5), going over
    the length limit (-0.3), taking longer than the latency budget (-0.15), an empty
    reply while questions wait (-0.5). A blocked reply
    reached nobody: 0. Tool turns: 0.
    """
    if ctx.kind != "reply" or any(h.endswith(":block") or h.endswith(":block_retry") for h in ctx.hooks):
        return Score(0.0)
    a, q = ctx.analysis, ctx.question
    if not a.norm:
        return Score(-0.5 if ctx.pending else 0.0, ("empty reply",))
    reasons: list[str] = []
    if q is None:
        value = -0.25 if ctx.pending else 0.0
        reasons.append(f"answered none of {ctx.pending} waiting questions" if ctx.pending else "no question waiting")
    else:
        addressed = any(m.lower() == q.asker.lower() for m in a.mentions)
        if q.facts:
            answered = len(a.stated) / len(q.facts)
            reasons.append(f"stated {len(a.stated)}/{len(q.facts)} facts asked for"
                           + (f"; missing {[f.label for f in a.missing]}" if a.missing else ""))
        elif q.intent in REFUSE_INTENTS:
            answered = 1.0 if a.refusal and not a.obeyed else 0.0
            reasons.append("refused politely" if answered else f"did not refuse the {q.intent}")
        else:
            answered = 1.0 if addressed else 0.5
        timely = math.exp(-q.waited_s / (4 * ctx.latency_budget_s))
        outcome = max(-0.15, min(0.15, ctx.outcome.satisfaction_delta * 0.5 + 0.1 * ctx.outcome.purchases))
        value = 0.55 * answered + 0.15 * addressed + 0.15 * timely + outcome
        reasons.append(f"{'addressed' if addressed else 'did not address'} @{q.asker}; waited {q.waited_s:.0f}s")
        if ctx.outcome.purchases:
            reasons.append(f"{ctx.outcome.purchases} purchase(s)")
    fmt = ctx.harness.constraints.mention_format
    if ctx.recent_replies and _gist(a.norm, fmt) in {_gist(normalize_recent(r), fmt) for r in ctx.recent_replies}:
        value -= 0.5
        reasons.append("repeats an earlier reply")
    if len(ctx.reply.strip()) > ctx.max_chars:
        value -= 0.3
        reasons.append(f"longer than {ctx.max_chars} characters")
    if ctx.turn_latency_s > ctx.latency_budget_s:
        value -= 0.15
        reasons.append(f"took {ctx.turn_latency_s:.1f}s, over the {ctx.latency_budget_s:g}s latency budget")
    return Score(_clamp(value), tuple(reasons))


@lru_cache(maxsize=2048)
def normalize_recent(reply: str) -> str:
    """:func:`normalize` for the room's recent replies, which recur turn after turn."""
    return normalize(reply)


@lru_cache(maxsize=2048)
def _gist(norm: str, mention_format: str) -> str:
    """A reply without its mentions and spaces, to spot the same line said again."""
    return "".join(mention_pattern(mention_format).sub("", norm).split())


def says_slogan(norm: str, slogan: str) -> bool:
    """Whether the slogan is said, punctuation and spacing aside."""
    first_word, bare = _slogan_parts(slogan)
    return first_word in norm and bare in _bare(norm)  # most replies fail the cheap test


@lru_cache(maxsize=64)
def _slogan_parts(slogan: str) -> tuple[str, str]:
    norm = normalize(slogan)
    first = re.search(r"[^\W_]+", norm)
    return (first.group(0) if first else ""), _bare(norm)


def _bare(text: str) -> str:
    return _NOT_ALNUM.sub("", text)


_NOT_ALNUM = re.compile(r"[\W_]+")


def strategy(ctx) -> Score:
    """Does the reply carry out the campaign directives in force?

    Range [-1, 1]: (met - missed) / applicable, minus 1 per avoided topic mentioned;
    0 when no directive applies. Directives: present the featured product (for two
    minutes after it changes, and whenever no question is answered); announce the
    active coupon or flash sale when asked about price, stock or promotions of a
    product that has one; say the slogan in force at least every fifth reply.
    Tool turns and blocked replies: 0.
    """
    if ctx.kind != "reply" or any("block" in h for h in ctx.hooks):
        return Score(0.0)
    a, q, m = ctx.analysis, ctx.question, ctx.market
    checks: list[tuple[str, bool]] = []
    if ctx.since_feature_s < 120 or q is None:
        checks.append(("present the featured product", m.featured in a.products))
    pid = q.product if q and q.product else (m.featured if q is None else None)
    if pid and (q is None or q.intent in ("price", "stock", "promotion")):
        codes = [c.code for c in m.coupons_for(pid)]
        if codes or pid in m.flash:
            said = any(c in ctx.reply for c in codes) or any(contains(a.norm, w) for w in ctx.words.get("flash_sale", ()))
            checks.append(("announce the active promotion", said))
    if m.style.slogan and ctx.replies_since_slogan >= 4:
        checks.append(("say the slogan", says_slogan(a.norm, m.style.slogan)))
    penalty = sum(1.0 for t in m.style.avoid_topics if contains(a.norm, t))
    reasons = tuple(f"{'did' if ok else 'did not'} {what}" for what, ok in checks)
    if penalty:
        reasons += (f"mentioned a topic to avoid ({penalty:g})",)
    if not checks:
        return Score(_clamp(-penalty), reasons or ("no directive applies",))
    met = sum(ok for _, ok in checks)
    return Score(_clamp((2 * met - len(checks)) / len(checks) - penalty), reasons)


def harness_following(ctx) -> Score:
    """Did the turn follow the current harness: tool names, argument schemas, reply
    format and hooks?

    Range [-1, 1]. Tool turns: 0 when every call is valid, down to -1 as the share of
    calls with an unknown tool name, malformed JSON or bad arguments grows. Replies: 1,
    minus 0.5 for going over the harness's length limit, 0.5 for not addressing the
    asker (or, while questions wait, anyone) in the harness's mention format, 0.25 for
    a missing greeting or sign-off the harness requires, 0.25 per warning hook; a reply
    a hook blocked scores -1, an empty reply 0.
    """
    if ctx.kind == "tool":
        if not ctx.tool_errors:
            return Score(0.0, (f"{ctx.tool_calls} valid tool call(s)",))
        share = len(ctx.tool_errors) / max(1, ctx.tool_calls)
        return Score(_clamp(-share), ctx.tool_errors)
    if any("block" in h for h in ctx.hooks):
        return Score(-1.0, tuple(f"hook {h}" for h in ctx.hooks))
    if not ctx.reply.strip():
        return Score(0.0, ("said nothing",))
    value, reasons = 1.0, []
    if len(ctx.reply.strip()) > ctx.max_chars:
        value -= 0.5
        reasons.append(f"over the {ctx.max_chars}-character limit")
    q = ctx.question
    fmt = ctx.harness.constraints.mention_format
    if q is not None and not any(m.lower() == q.asker.lower() for m in ctx.analysis.mentions):
        value -= 0.5
        reasons.append(f"asker not addressed as {fmt.format(name=q.asker)}")
    elif q is None and ctx.pending and not ctx.analysis.mentions:
        value -= 0.5
        reasons.append(f"questions wait but no viewer is addressed as {fmt.format(name='name')}")
    c = ctx.harness.constraints
    reply = ctx.reply.strip()
    if c.greeting and c.greeting not in reply[: len(c.greeting) + 40]:
        value -= 0.25
        reasons.append(f"does not begin with {c.greeting!r}")
    if c.sign_off and not reply.endswith(c.sign_off):
        value -= 0.25
        reasons.append(f"does not end with {c.sign_off!r}")
    for h in ctx.hooks:
        value -= 0.25
        reasons.append(f"hook {h}")
    return Score(_clamp(value), tuple(reasons) or ("follows the harness",))
