"""Tool rationality and the room's outcome: two reward components the paper names
besides accuracy and effectiveness. Pure functions; see ``docs/rewards.md``."""

from __future__ import annotations

from liveroom_sim.rewards.claim import FACT_VERDICTS as _FACT_VERDICTS
from liveroom_sim.rewards.claim import kind_label
from liveroom_sim.rewards.components import Score, _clamp

#: Outcome costs per event of the room (see :func:`outcome`).
EXPIRED_COST = 0.5
LEFT_COST = 1.0


def tool_rationality(ctx) -> Score:
    """Were the facts the reply states looked up this exchange, with the right tools,
    without redundant calls?

    Range [-1, 1]. Replies: +1 when every fact claimed is backed by a successful call
    this exchange to a tool that returns it (the price by the price tool of that
    product, a coupon code by the promotions tool, an order's arrival by the order
    tool); minus the share of claims that are not (-1 when none is); -1 when any fact
    is one whose lookup failed this exchange (a tool fault) and was stated anyway (the
    host knew it could not check); 0 for a reply that claims no fact (an honest "I can't
    check that right now" claims none), or when the caller does not track lookups. A
    tool turn: 0, minus
    0.25 per call repeating one already made this exchange (down to -1); errors are the
    harness component's. The +1 is earned only by a reply that serves a need that asks
    for facts (a question of fact, or an owed pitch), in proportion to the share of it
    newly met.
    """
    if ctx.kind == "tool":
        if ctx.redundant_calls:
            return Score(_clamp(-0.25 * ctx.redundant_calls), (f"{ctx.redundant_calls} redundant call(s)",))
        calls = ctx.tool_calls
        return Score(0.0, lambda: (f"{calls} call(s)",))
    if ctx.lookups is None:
        return Score(0.0, ("lookups not tracked",))
    claims = fact_claims(ctx)
    missing = [c for c in claims if not _backed(c, ctx.lookups)]  # (unbacked_claims, from the claims at hand)
    if not claims:
        return Score(0.0, ("no fact claimed",))
    if not missing:
        if not ctx.facts_needed:  # (a fact nobody asked for needs no lookup to be paid for)
            return Score(0.0, (f"all {len(claims)} fact(s) looked up, but no fact was asked for",))
        return Score(1.0, (f"all {len(claims)} fact(s) looked up this exchange",))
    unchecked = [f"{kind_label(c.kind)} {c.said}" for c in unchecked_claims(ctx)]
    if unchecked:
        return Score(-1.0, (f"stated after its lookup failed: {unchecked}",))
    said = [f"{kind_label(c.kind)} {c.said}" for c in missing]
    return Score(_clamp(-(1 - (len(claims) - len(missing)) / len(claims))), (f"not looked up this exchange: {said}",))


def fact_claims(ctx) -> list:
    """The reply's claims that state a fact some tool returns."""
    return [c for c in ctx.analysis.claims if c.verdict in _FACT_VERDICTS and c.tools]


def unbacked_claims(ctx) -> list:
    """The fact claims no successful lookup of this exchange backs (the reading the
    ``factual_risk`` hook shares with :func:`tool_rationality`); none when the caller
    does not track lookups."""
    if ctx.lookups is None:
        return []
    return [c for c in fact_claims(ctx) if not _backed(c, ctx.lookups)]


def _backed(c, lookups: frozenset) -> bool:
    return any((t, c.product or "") in lookups or (t, "") in lookups for t in c.tools)


def unchecked_claims(ctx) -> list:
    """The facts a reply states whose lookup hit a tool fault this exchange and was not
    made since: the host knew it could not check them (empty when no lookup failed)."""
    failed = ctx.failed_lookups
    if not failed or ctx.lookups is None or ctx.kind != "reply":
        return []
    return [c for c in ctx.analysis.claims if c.verdict in _FACT_VERDICTS and c.tools
            and not _backed(c, ctx.lookups) and _backed(c, failed)]


def lookup_failed_for(ctx, question, unavailable: bool = False) -> bool:
    """Whether a lookup about ``question``'s product or order (or a tool of no argument)
    hit a tool fault this exchange and was not made since; with ``unavailable``, whether
    one could not be had at all (denied, or faulted again on a retry)."""
    failed = ctx.unavailable_lookups if unavailable else ctx.failed_lookups
    return bool(failed) and any(s in ("", question.product, question.order) for _, s in failed)


def no_outcome(ctx) -> Score:
    """What the room lost while the step ran (see :func:`outcome`): 0 for the turn itself;
    the room charges the step's losses when it settles it
    (:meth:`~liveroom_sim.rewards.model.RewardModel.settle`). A named function, not a
    lambda: the reward model (and so an env) must pickle."""
    return _ZERO


_ZERO = Score(0.0)


def outcome(expired: int, left_unanswered: int) -> Score:
    """What the room lost while the step ran: questions whose viewer's patience ran out
    unanswered (-0.5 each) and viewers who left with a question unanswered (-1 each).

    Range (-inf, 0] per step (it counts events, so it is not clamped); 0 when nothing
    was lost. When an episode ends early, the rest of the stream is played out with no
    host and charged the same way (see :meth:`liveroom_sim.sim.room.Room.settle`).
    """
    if not expired and not left_unanswered:
        return Score(0.0)
    reasons = []
    if expired:
        reasons.append(f"{expired} question(s) expired unanswered")
    if left_unanswered:
        reasons.append(f"{left_unanswered} viewer(s) left unanswered")
    return Score(-(EXPIRED_COST * expired + LEFT_COST * left_unanswered), tuple(reasons))
