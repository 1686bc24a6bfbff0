"""What a reward component sees of one turn: :class:`TurnContext`.

The context is built by the room (or from a golden case) and is all a component may
read: the reply, the question it answers, the market as of now (read-only), the rules
in force (on the market), the current harness, and what happened around the reply.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from liveroom_sim.harness.core import Harness
from liveroom_sim.rewards.analysis import analyze
from liveroom_sim.rewards.conduct import credit_of, facts_needed, need_of, serves_of
from liveroom_sim.world.facts import Fact
from liveroom_sim.world.market import Market


@dataclass(frozen=True, slots=True)
class Question:
    """A viewer message the reply answers, with its ground truth as of now."""

    asker: str
    intent: str
    text: str = ""
    product: str | None = None
    order: str | None = None
    waited_s: float = 0.0
    facts: tuple[Fact, ...] = ()
    payload: tuple[str, ...] = ()
    stated_before: tuple[str, ...] = ()  # tags (Fact.tag) of the facts earlier replies already stated


@dataclass(frozen=True, slots=True)
class Outcome:
    """How the room took the reply: satisfaction change of the asker, purchases made."""

    satisfaction_delta: float = 0.0
    purchases: int = 0


class _kept:
    """A property worked out on first read and kept in the instance, where later reads
    find it: ``functools.cached_property`` without the lock it takes in Python 3.11 (a
    context is read by one thread; a first read took 0.7 µs with the lock, 0.3 without).
    """

    def __init__(self, derive):
        self._derive, self._name, self.__doc__ = derive, derive.__name__, derive.__doc__

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        value = obj.__dict__[self._name] = self._derive(obj)
        return value


@dataclass
class TurnContext:
    """Everything a reward component may read about one turn (read-only by contract:
    components are pure functions of it; it is not frozen only because building one
    per turn must be cheap).

    Attributes:
        kind: ``reply`` (spoken to the room) or ``tool`` (an internal tool turn).
        reply: The reply text as the policy wrote it (empty for tool turns).
        market: The market as of now; components must not change it.
        question: The viewer message the reply answers, if any.
        pending: How many viewer questions were waiting for an answer.
        recent_replies: The room's last replies before this one, newest last.
        tool_calls / tool_errors: Calls made in a tool turn, and the errors among them.
        hooks: Hooks that fired on this reply, as ``type:action``.
        since_feature_s: Seconds since the featured product last changed.
        replies_since_slogan: Replies since the slogan in force was last said.
        turn_latency_s: How long the reply took to reach the room (generating and
            speaking), against ``latency_budget_s``.
        lookups: ``(canonical tool, argument)`` pairs of the successful tool calls made
            this exchange (``(tool, "")`` for a tool without arguments); ``None`` when
            the caller does not track them (then no claim counts as unsupported).
        waiting: Names of the viewers whose question waits now (``None``: unknown).
        failed_lookups: ``(canonical tool, argument)`` pairs whose calls this exchange
            hit a tool fault (timeout, malformed or truncated output, denial) and were
            not looked up since; ``None`` when none did (or faults are not tracked).
        unavailable_lookups: Those of ``failed_lookups`` the host could not get this
            exchange: denied, or faulted again when retried (``None``: none).
        redundant_calls: In a tool turn, the calls that repeat one already made this
            exchange (same tool, same arguments, nothing changed in between).
        since_pitch_s: Seconds since the host last presented the featured product (or
            since it changed, if that is later).
        reasoning_chars: Characters of ``<think>`` reasoning stripped from the action.
        reasoning_budget: Reasoning characters one action may take without cost
            (``None``: no budget).
    """

    kind: Literal["reply", "tool"]
    reply: str
    market: Market
    harness: Harness
    words: dict[str, tuple[str, ...]]
    question: Question | None = None
    pending: int = 0
    recent_replies: tuple[str, ...] = ()
    tool_calls: int = 0
    tool_errors: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    since_feature_s: float = 1e9
    replies_since_slogan: int = 0
    outcome: Outcome = field(default_factory=Outcome)
    latency_budget_s: float = 8.114
    turn_latency_s: float = 0.0
    lookups: frozenset | None = None
    waiting: tuple[str, ...] | None = None
    redundant_calls: int = 0
    since_pitch_s: float = 1e9
    reasoning_chars: int = 0
    reasoning_budget: int | None = None
    failed_lookups: frozenset | None = None
    unavailable_lookups: frozenset | None = None

    # What the components share is read once per turn and kept on the context, its
    # owner (a cached property stores it in the instance, where later reads find it).

    @_kept
    def analysis(self):
        """The parsed reply (claims, stated facts, mentions, the compliance rules' reading)."""
        return analyze(self)

    @_kept
    def need(self):
        """How much of a waiting viewer's need the reply newly meets, and why (see
        :func:`~liveroom_sim.rewards.conduct.need_met`)."""
        return need_of(self)

    @_kept
    def serves_need(self) -> bool:
        """Whether the reply serves a need of the room (see
        :func:`~liveroom_sim.rewards.conduct.serves`)."""
        return serves_of(self)

    @_kept
    def credit(self) -> float:
        """The share of a whole reply's credits the reply earns (see
        :func:`~liveroom_sim.rewards.conduct.credit_share`)."""
        return credit_of(self)

    @property
    def facts_needed(self) -> bool:
        """Whether the need the reply serves asks for facts (see
        :func:`~liveroom_sim.rewards.conduct.facts_needed`)."""
        return facts_needed(self)

    def with_outcome(self, outcome: Outcome, hooks: tuple[str, ...]) -> "TurnContext":
        """Record the room's reaction and the hooks that fired (the room's one change to a
        context, made before any component reads it); returns the context.

        The room reads the reply (``analysis``) before the viewers react, then scores it
        with their reaction; the reading is the same, so it is carried over.
        """
        self.outcome, self.hooks = outcome, hooks
        for derived in ("need", "serves_need", "credit"):  # they read the hooks: computed again when asked
            self.__dict__.pop(derived, None)
        return self

    @property
    def delivered(self) -> bool:
        """Whether the room heard the reply: a non-empty reply no hook blocked. The room
        records the hooks that fired (:meth:`with_outcome`) before it scores a turn."""
        if self.kind != "reply" or not self.reply or self.reply.isspace():
            return False
        return not self.hooks or not any(h.endswith((":block", ":block_retry")) for h in self.hooks)

    @property
    def max_chars(self) -> int:
        """The length limit in force: the harness's, or a stricter style directive's."""
        style = self.market.style.max_chars
        limit = self.harness.constraints.max_chars
        return min(limit, style) if style else limit
