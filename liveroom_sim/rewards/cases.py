"""Reward cases as data: one turn's inputs in JSON, turned into a :class:`TurnContext`.

A case names an env spec, the campaign events that have fired (the market as of now is
the spec's opening market with those events applied), the question answered and the
reply. This is the format of the golden suite and of users' own regression suites::

    {"id": "price-after-change", "env": "LiveRoom-v0",
     "events": [{"type": "price_change", "product": "sk-serum-01", "price": 22.99}],
     "question": {"asker": "mia_22", "intent": "price", "product": "sk-serum-01"},
     "reply": "@mia_22 the glow serum is $22.99 right now.",
     "expected": {"factuality": 1.0}}

Cases are always built on the *pinned* world of their env: the catalog and campaign
files as they are, whatever the spec's ``world:`` section draws for episodes
(``docs/worlds.md``), so that a label such as "the serum is $24.99" keeps its meaning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pydantic

from liveroom_sim.errors import SpecError, did_you_mean
from liveroom_sim.harness.core import Constraints
from liveroom_sim.rewards.context import Outcome, Question, TurnContext
from liveroom_sim.spec import World, load_spec
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.facts import required_facts
from liveroom_sim.world.market import Market
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.personas import FACT_INTENTS, INTENTS

_EVENTS = pydantic.TypeAdapter(list[ev.CampaignEvent])


class CaseQuestion(Frozen):
    asker: str
    intent: str
    product: str | None = None
    order: str | None = None
    text: str = ""
    waited_s: pydantic.NonNegativeFloat = 0.0
    payload: tuple[str, ...] = ()

    @pydantic.field_validator("intent")
    @classmethod
    def _known_intent(cls, value: str) -> str:
        if value not in INTENTS:
            raise ValueError(f"unknown intent {value!r}{did_you_mean(value, INTENTS)}; expected one of {list(INTENTS)}")
        return value


class RewardCase(Frozen):
    """One labelled turn. ``expected`` maps component names (and ``total``) to values."""

    id: str
    env: str = "LiveRoom-v0"
    kind: Literal["reply", "tool"] = "reply"
    reply: str = ""
    events: list[dict[str, Any]] = []
    question: CaseQuestion | None = None
    pending: pydantic.NonNegativeInt | None = None
    recent_replies: tuple[str, ...] = ()
    tool_calls: pydantic.NonNegativeInt = 0
    tool_errors: tuple[str, ...] = ()
    hooks: tuple[str, ...] = ()
    since_feature_s: float = 1e9
    replies_since_slogan: int = 0
    outcome: dict[str, float] = {}
    constraints: dict[str, Any] = {}
    turn_latency_s: pydantic.NonNegativeFloat = 0.0
    #: Successful tool calls this exchange as ``"tool:argument"`` (``"get_promotions"``);
    #: absent: lookups are not tracked and no claim counts as unsupported.
    lookups: tuple[str, ...] | None = None
    since_pitch_s: float = 1e9
    redundant_calls: pydantic.NonNegativeInt = 0
    expected: dict[str, float] = {}
    tags: tuple[str, ...] = ()
    #: The failures of the reward this case guards against, by name
    #: (:data:`liveroom_sim.rewards.golden.FAILURES`).
    covers: tuple[str, ...] = ()
    note: str = ""
    #: Whether a person decided the labels and wrote the note by judgement (not a script).
    reviewed: bool = False


def world_for(env: str) -> World:
    """The pinned world of a registered spec id, or of a spec file path: the spec as
    loaded, never an episode's drawn world (see the module docstring)."""
    path = Path(env)
    if not path.suffix:
        path = ENVS_DIR / f"{env}.yaml"
    return load_spec(path)


def build_context(case: RewardCase, where: str = "case") -> TurnContext:
    """The :class:`TurnContext` a case describes.

    Raises:
        SpecError: naming the case and the field, when an event or a question is invalid.
    """
    world = world_for(case.env)
    try:
        events = _EVENTS.validate_python([{"at": 0.0, **e} for e in case.events])
    except pydantic.ValidationError as exc:
        raise SpecError(where, [f"field 'events.{'.'.join(map(str, e['loc']))}': {e['msg']}" for e in exc.errors()]) from None
    market = Market.open(world.catalog, world.campaign.opening_product, world.rules)
    harness = world.harness
    for e in events:
        if isinstance(e, ev.HarnessChange):
            harness = harness.after(e)
        else:
            market.apply(e)
    if case.constraints:
        merged = {**harness.constraints.model_dump(), **case.constraints}
        harness = harness.model_copy(update={"constraints": Constraints(**merged)})
    q = None
    if case.question is not None:
        cq = case.question
        problems = question_problems(cq, world)
        if problems:
            raise SpecError(where, problems)
        try:
            facts = required_facts(cq.intent, cq.product, market, world.phrasebook.fact_words, cq.order) \
                if cq.intent not in ("bait", "inject", "greet", "chat", "troll") else ()
        except (KeyError, LookupError) as exc:
            raise SpecError(where, [f"field 'question': {exc}"]) from None
        q = Question(cq.asker, cq.intent, cq.text, cq.product, cq.order, cq.waited_s, facts, cq.payload)
    pending = case.pending if case.pending is not None else (1 if q is not None and q.facts else 0)
    return TurnContext(
        case.kind, case.reply, market, harness, world.phrasebook.fact_words, q, pending, case.recent_replies,
        case.tool_calls, case.tool_errors, case.hooks, case.since_feature_s, case.replies_since_slogan,
        Outcome(**case.outcome), world.spec.latency.budget_s, case.turn_latency_s,
        lookups=None if case.lookups is None else frozenset(
            (t.partition(":")[0], t.partition(":")[2]) for t in case.lookups),
        since_pitch_s=case.since_pitch_s, redundant_calls=case.redundant_calls,
    )


def question_problems(question: CaseQuestion, world: World) -> list[str]:
    """What a case's question names that its env lacks, each with "did you mean"."""
    problems = []
    ids = [p.id for p in world.catalog.products]
    if question.product is not None and question.product not in ids:
        problems.append(f"field 'question.product': unknown product {question.product!r}"
                        f"{did_you_mean(question.product, ids)}; expected a product id of {world.spec.id}")
    orders = [o.id for o in world.catalog.orders]
    if question.order is not None and question.order not in orders:
        problems.append(f"field 'question.order': unknown order {question.order!r}"
                        f"{did_you_mean(question.order, orders)}; expected one of {orders}")
    if question.intent == "order_status" and question.order is None:
        problems.append("field 'question.order': intent 'order_status' asks about an order; give its id")
    elif question.intent in FACT_INTENTS and question.intent != "order_status" and question.product is None:
        problems.append(f"field 'question.product': intent {question.intent!r} asks about a product; give its id")
    return problems
