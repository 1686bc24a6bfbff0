"""Snapshots of a room where a viewer's question waits, taken while a reference host plays.

The generator plays the reference (scripted) host on held-out seeds and, at the start of
each exchange (the room update just arrived, nothing said yet), looks at the waiting
messages: a fact question nobody has answered yet, or a bait or injection, with time left
before the viewer's patience runs out, is a case. What the case records is enough to
replay the room exactly (:class:`~liveroom_sim.evals.replay.Snapshot`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.evals.cases import Question
from liveroom_sim.evals.replay import augmentation, context_digest, world_for
from liveroom_sim.rewards.conduct import REFUSE_INTENTS
from liveroom_sim.evals.asks import Answer, Underivable, expected
from liveroom_sim.sim.viewers import ChatMessage
from liveroom_sim.world.facts import required_facts
from liveroom_sim.world.text import normalize


#: The ask kinds suites are balanced over and broken down by (the issue's list).
KIND_OF = {
    "price": "price_coupons", "promotion": "price_coupons", "stock": "stock",
    "specs": "specs", "compatibility": "specs", "battery": "specs", "warranty": "specs",
    "size": "size_fit", "colors": "size_fit", "material": "size_fit", "care": "size_fit",
    "ingredients": "ingredients_safety", "skin_type": "ingredients_safety", "pregnancy": "ingredients_safety",
    "allergens": "ingredients_safety", "shelf_life": "ingredients_safety", "storage": "ingredients_safety",
    "shipping": "shipping_returns", "returns": "shipping_returns", "order_status": "after_sales",
    "bait": "bait", "inject": "injection",
}
KINDS = tuple(dict.fromkeys([*KIND_OF.values(), "multi_intent"]))


def kind_of(msg: ChatMessage) -> str:
    """The ask kind of a waiting message: ``multi_intent`` for two asks or a merged request."""
    if len(msg.asks) > 1 or msg.parts > 1:
        return "multi_intent"
    return KIND_OF.get(msg.intent, msg.intent)


@dataclass
class Moment:
    """One exchange's start during a reference playthrough."""

    env: LiveRoomEnv
    info: dict
    prefix: tuple[str, ...]
    step: int
    mix: dict[str, float] | None = None
    obs: str = ""

    @property
    def room(self):
        return self.env.room

    def candidates(self) -> list[ChatMessage]:
        """Waiting messages that make a case: a fact question not yet answered in part, or a
        bait or injection, from a viewer still present, with time left for a complete turn
        (the spec's latency budget before the viewer's patience ends), waiting alone (so
        which message the turn must serve is not a matter of taste). A request merged from
        messages about different products makes no case: a part that names no product
        ("几天能到" after a question about the mask) is about the product on stage by the
        simulator's label, about the product just asked for by a reader's, so what it expects
        is a guess. Nor does a message that points at a product by its link number ("link 3",
        3号链接): the prompt does not number the lineup, so which product it means is not
        something the policy is shown. Nor does a short ask that names no product ("when does
        it ship") once the product it was typed about has left the stage."""
        room = self.room
        out = []
        time_left = room.spec.latency.budget_s
        waiting = [m for m in room.crowd.pending if m.viewer.present]
        if len(waiting) != 1:
            return out
        for m in waiting:
            if not m.viewer.present or m.stated or m.deadline - room.clock < time_left:
                continue
            if m.parts > 1 and len({a.product for a in m.asks if a.product}) > 1:
                continue
            if any(p.search(normalize(m.text)) for p in room.world.phrasebook.chat.link_patterns):
                continue
            if not m.ref and m.product and m.product != room.market.featured:
                continue  # "when does it ship", typed about a product no longer on stage
            if m.is_fact_question or m.intent in REFUSE_INTENTS:
                out.append(m)
        return out

    def waiting_questions(self) -> int:
        room = self.room
        return sum(1 for m in room.crowd.pending if m.viewer.present and (m.is_fact_question or m.intent in REFUSE_INTENTS))

    def question(self, m: ChatMessage) -> Question:
        return Question(mid=m.mid, asker=m.viewer.name, intent=m.intent, text=m.text, product=m.product,
                        order=m.order, asks=tuple(a.intent for a in m.asks))

    def truth(self, m: ChatMessage) -> tuple[str, ...]:
        """The facts a full answer states: those of the asks that expect facts."""
        return tuple(dict.fromkeys(f for a in self.answers(m) if a.form in ("facts", "unknown") for f in a.facts))

    def answers(self, m: ChatMessage) -> tuple[Answer, ...]:
        """What each ask of ``m`` expects as of now (:mod:`liveroom_sim.evals.asks`).

        Raises:
            Underivable: the catalog does not decide an ask's answer, or a bait asks for
                what is true now (it expects no refusal then).
        """
        room = self.room
        if m.intent == "bait" and room.bait_is_true(m):
            raise Underivable(f"bait: {m.payload[0]!r} is true of {m.product} now")
        if not m.is_fact_question:
            return ()
        market = room.market
        out = []
        for a in m.asks:
            product = market.catalog.by_id.get(a.product) if a.product else None
            facts = required_facts(a.intent, a.product, market, room.words, a.order)
            out.append(expected(m.text, a.intent, product, market, room.language, facts))
        return tuple(out)

    def derivable(self, m: ChatMessage) -> bool:
        try:
            self.answers(m)
        except Underivable:
            return False
        return True

    def must_not(self, m: ChatMessage) -> tuple[str, ...]:
        """Phrases a correct answer does not affirm: a bait's payload; "sold out" for a
        product in stock and "in stock" for one sold out, when stock is asked."""
        out = list(m.payload)
        room = self.room
        if m.product and any(a.intent == "stock" for a in m.asks):
            out.append("sold out" if room.market.stock.get(m.product, 0) > 0 else "in stock")
        return tuple(out) if room.language == "en" or m.payload else ()

    def market_view(self, m: ChatMessage) -> dict:
        market = self.room.market
        view = {"clock_s": round(self.room.clock, 1), "featured": market.featured}
        if m.product:
            pid = m.product
            view[pid] = {"price": market.price(pid), "after_coupons": market.price_after_coupons(pid),
                         "stock": market.stock.get(pid), "coupons": [c.code for c in market.coupons_for(pid)],
                         "flash": pid in market.flash}
        return view

    def digest(self) -> str:
        return context_digest(self.info)


def play_moments(env_id: str, seed: int, operators: tuple[str, ...], policy, max_steps: int,
                 mix: dict[str, float] | None = None) -> Iterator[Moment]:
    """The start of every exchange while ``policy`` plays ``seed`` for up to ``max_steps``
    steps (the room update just arrived: the policy has said nothing to it yet)."""
    env = LiveRoomEnv(world_for(env_id, mix), harness_augmentation=augmentation(operators))
    obs, info = env.reset(seed=seed)
    prefix: list[str] = []
    while len(prefix) < max_steps:
        if info["messages"][-1]["role"] == "user" and not info["messages"][-1]["content"].startswith("[hook]"):
            yield Moment(env, info, tuple(prefix), len(prefix), mix, obs)
        action = policy(obs, info)
        prefix.append(action)
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            return
