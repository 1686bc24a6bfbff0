"""Viewers: persona instances in the room, and the chat they write.

The simulator decides what a viewer wants (intent, product, order) from the persona and
the room; a template (or, later, an LLM) only words it. Every fact question carries its
ground truth as of the time it is asked.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

import numpy as np

from liveroom_sim.world.facts import Fact, intent_fits, required_facts
from liveroom_sim.world.market import Market
from liveroom_sim.world.personas import FACT_INTENTS, Persona
from liveroom_sim.world.phrasebook import Phrasebook

_FACTS = frozenset(FACT_INTENTS)


@dataclass(slots=True)
class Viewer:
    """One viewer in the room."""

    name: str
    persona: Persona
    arrived: float
    leave_at: float
    satisfaction: float = 0.5
    strikes: int = 0
    purchases: int = 0
    present: bool = True


@dataclass(slots=True)
class ChatMessage:
    """A viewer's message; ``truth`` is its ground truth when asked (hidden from policies)."""

    mid: int
    viewer: Viewer
    intent: str
    text: str
    at: float
    product: str | None = None
    order: str | None = None
    truth: tuple[Fact, ...] = ()
    payload: tuple[str, ...] = ()
    deadline: float = 0.0
    answered: bool = False
    followed_up: bool = False
    stated: tuple[str, ...] = ()  # labels of the facts replies to it have stated so far

    @property
    def is_fact_question(self) -> bool:
        return self.intent in _FACTS


class _Weighted:
    """Draw keys by weight with one uniform number (cheaper than ``rng.choice``)."""

    __slots__ = ("keys", "cum")

    def __init__(self, weights: dict[str, float]):
        self.keys = list(weights)
        self.cum = list(itertools.accumulate(weights.values()))

    def draw(self, u: float) -> str:
        return self.keys[min(bisect.bisect_right(self.cum, u * self.cum[-1]), len(self.keys) - 1)]


class ChatWriter:
    """Writes viewers' messages from their persona and the phrasebook (deterministic templates).

    Args:
        phrasebook: The language's viewer templates, baits and injections.
        language: ``en`` or ``zh``; selects each persona's phrasing.
        host: The host's name (templates may greet them).
    """

    def __init__(self, phrasebook: Phrasebook, language: str, host: str, phraser=None):
        self.book, self.language, self.host = phrasebook, language, host
        self.phraser = phraser
        self._topics: dict[str, _Weighted] = {}

    def write(self, viewer: Viewer, now: float, mid: int, market: Market, rng: np.random.Generator,
              recent: list[str] = ()) -> ChatMessage:
        """A new message from ``viewer`` at ``now`` (its intent, product, wording, truth)."""
        persona = viewer.persona
        topics = self._topics.get(persona.name)
        if topics is None:
            topics = self._topics[persona.name] = _Weighted(persona.topics)
        intent = topics.draw(rng.random())
        products = market.catalog.products
        product = market.catalog.by_id[market.featured] if rng.random() < 0.6 else products[int(rng.integers(len(products)))]
        if intent in _FACTS and intent != "order_status" and not intent_fits(intent, product):
            intent = "price"
        msg = ChatMessage(mid, viewer, intent, "", now, deadline=now + persona.patience_s)
        if intent in ("bait", "inject"):
            pool = self.book.baits if intent == "bait" else self.book.injections
            fitting = [b for b in pool if not b.categories or product.category in b.categories] or list(pool)
            bait = fitting[int(rng.integers(len(fitting)))]
            msg.text, msg.payload, msg.product = bait.text.format(product=_name(product, rng), host=self.host), bait.payload, product.id
        else:
            if intent == "order_status":
                orders = market.catalog.orders
                if orders:
                    msg.order = orders[int(rng.integers(len(orders)))].id
                else:
                    intent = msg.intent = "shipping"
            if intent in _FACTS and intent != "order_status":
                msg.product = product.id
            msg.text = self._word(persona, intent, product, msg.order, rng)
        if msg.intent in _FACTS:
            msg.truth = required_facts(msg.intent, msg.product, market, self.book.fact_words, msg.order)
        if self.phraser is not None:
            self._rephrase(msg, persona, product, market, rng, list(recent))
        return msg

    def _rephrase(self, msg: ChatMessage, persona: Persona, product, market: Market, rng, recent) -> None:
        # The seed is drawn whether or not the call succeeds, so the episode's random
        # stream does not depend on the endpoint.
        seed = int(rng.integers(2**31))
        if not self.phraser.applies(persona.name):
            return
        keep = msg.order or next((n for n in product.names if n.lower() in msg.text.lower()), None)
        featured = market.catalog.by_id[market.featured].name
        text = self.phraser.phrase(persona, msg.text, keep, featured, recent, seed)
        if text:
            msg.text = text

    def room_message(self, viewer: Viewer, intent: str, about: ChatMessage | None, now: float, mid: int,
                     market: Market, rng: np.random.Generator) -> ChatMessage:
        """A message the room makes for a viewer: a complaint when ignored, a follow-up."""
        product = market.catalog.by_id[about.product] if about and about.product else market.catalog.by_id[market.featured]
        text = self._word(viewer.persona, intent, product, about.order if about else None, rng)
        return ChatMessage(mid, viewer, intent, text, now, product=product.id)

    def _word(self, persona: Persona, intent: str, product, order: str | None, rng: np.random.Generator) -> str:
        phr = persona.phrasing.get(self.language) or next(iter(persona.phrasing.values()))
        templates = phr.templates.get(intent) or self.book.viewer[intent]
        body = templates[int(rng.integers(len(templates)))]
        opener = phr.openers[int(rng.integers(len(phr.openers)))]
        closer = phr.closers[int(rng.integers(len(phr.closers)))]
        text = body.format(product=_name(product, rng), order=order or "", host=self.host)
        sep = "" if self.language == "zh" else " "
        return sep.join(x for x in (opener, text, closer) if x)


def _name(product, rng: np.random.Generator) -> str:
    names = product.names
    return names[int(rng.integers(len(names)))]
