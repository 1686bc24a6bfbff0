"""The crowd: viewers arriving, chatting, waiting, complaining, buying and leaving.

Driven by the episode's one random generator; the room asks it to advance to a time
and to react to a delivered reply.
"""

from __future__ import annotations

import dataclasses
import copy
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from liveroom_sim.sim.fitting import _Weighted
from liveroom_sim.sim.viewers import ChatMessage, ChatWriter, Viewer
from liveroom_sim.spec import ViewerConfig
from liveroom_sim.world.market import Market
from liveroom_sim.world.personas import FACT_INTENTS as _FACT_INTENTS, Persona


@dataclass(slots=True)
class CrowdStats:
    arrived: int = 0
    left: int = 0
    left_unanswered: int = 0
    messages: int = 0
    questions: int = 0
    answered: int = 0
    ignored: int = 0
    purchases: int = 0
    buyers: int = 0
    gmv: float = 0.0
    dwell_total: float = 0.0


class Crowd:
    """All viewers of one episode and their pending messages."""

    def __init__(self, config: ViewerConfig, personas: dict[str, Persona], writer: ChatWriter,
                 language: str, rng: np.random.Generator):
        self.config, self.personas, self.writer, self.language, self.rng = config, personas, writer, language, rng
        self.mix = _Weighted(dict(config.mix))
        self.viewers: list[Viewer] = []
        self.present: list[Viewer] = []
        self.pending: list[ChatMessage] = []
        self.chat: list[ChatMessage] = []
        self.stats = CrowdStats()
        self._heap: list[tuple[float, int, int]] = []
        self._seq = 0
        self.version = 0  # bumped whenever the waiting messages change
        self.present_version = 0  # bumped whenever a viewer arrives or leaves
        self._sums: dict[str, tuple] = {}  # derived values, each with the version it is for
        # (when, arrival order, viewer) of each viewer's drift-out time, pushed again when
        # its satisfaction changes (an entry whose time is no longer the viewer's is skipped)
        self._drift: list[tuple[float, int, Viewer]] = []
        self._order: dict[str, int] = {}  # viewer name (unique in a room) -> arrival order
        self._rate = config.arrivals_per_min / 60.0
        self.schedule_arrival(0.0)

    def _after(self, now: float, rate: float) -> float:
        return now + self.rng.exponential(1.0 / rate) if rate > 0 else math.inf

    def schedule_arrival(self, now: float) -> None:
        """Draw when the next viewer arrives after ``now`` (a Poisson process)."""
        self.next_arrival = self._after(now, self._rate)

    def arrive(self, now: float) -> Viewer | None:
        """A new viewer of a persona drawn from the mix (None when the room is full)."""
        if len(self.present) >= self.config.max_present:
            return None
        persona = self.personas[self.mix.draw(self.rng.random())]
        name = self.writer.names.name_for(persona, self.rng)
        v = Viewer(name, persona, now, now + self.rng.exponential(persona.dwell_s))
        self.viewers.append(v)
        self.present.append(v)
        self.present_version += 1
        self._order[v.name] = len(self.viewers) - 1
        heapq.heappush(self._drift, (_drift_at(v), len(self.viewers) - 1, v))
        self.stats.arrived += 1
        self._schedule(len(self.viewers) - 1, opening_start(now, self.stats.messages))
        return v

    def _schedule(self, index: int, now: float) -> None:
        rate = self.viewers[index].persona.chat_rate_per_min / 60.0
        at = self._after(now, rate)
        if at < math.inf:
            self._seq += 1
            heapq.heappush(self._heap, (at, self._seq, index))

    def next_chat_at(self) -> float:
        return self._heap[0][0] if self._heap else math.inf

    def chat_once(self, market: Market) -> ChatMessage | None:
        """Pop the next scheduled chat message and write it."""
        at, _, index = heapq.heappop(self._heap)
        v = self.viewers[index]
        if not v.present:
            return None
        self._schedule(index, at)
        writer = self.writer
        recent = [m.text for m in self.chat[-5:]] if writer.phraser is not None else ()  # what an LLM phraser reads
        msg = writer.write(v, at, len(self.chat), market, self.rng, recent)
        self._post(msg)
        return msg

    def _post(self, msg: ChatMessage) -> None:
        self.chat.append(msg)
        self.stats.messages += 1
        if msg.intent in ("complaint", "follow_up", "troll"):
            return
        req = merge_target(self.pending, msg)
        if req is not None:
            self.stats.questions += msg.is_fact_question and not req.is_fact_question
            i = next(i for i, m in enumerate(self.pending) if m is req)
            self.pending[i] = merge_into(req, msg)
            self.version += 1
            return
        if msg.is_fact_question:
            self.stats.questions += 1
        self.pending.append(msg)
        self.version += 1

    def expire(self, now: float, market: Market) -> list[ChatMessage]:
        """Handle messages whose patience ran out; returns the complaints posted."""
        complaints = []
        keep = []
        for msg in self.pending:
            v = msg.viewer
            if not v.present:
                continue
            if msg.deadline > now:
                keep.append(msg)
                continue
            if not msg.is_fact_question:
                continue  # greetings, baits and injections may be let go
            self.stats.ignored += 1
            v.strikes += 1
            self.satisfy(v, max(0.0, v.satisfaction - 0.15 * (1 - v.persona.loyalty)))
            if v.strikes >= v.persona.patience_strikes:
                self.leave(v, now)
                continue
            msg.deadline = now + v.persona.patience_s
            keep.append(msg)
            c = self.writer.room_message(v, "complaint", msg, now, len(self.chat), market, self.rng)
            self._post(c)
            complaints.append(c)
        if len(keep) != len(self.pending):
            self.version += 1
        self.pending = keep
        return complaints

    def answered(self, msg: ChatMessage) -> None:
        """``msg`` no longer waits for an answer."""
        msg.viewer.answered += msg.answered
        _remove(self.pending, msg)
        self.version += 1

    def leave(self, v: Viewer, now: float) -> None:
        if v.present:
            if any(m.viewer is v and m.is_fact_question for m in self.pending):
                self.stats.left_unanswered += 1
            self.version += 1
            v.present = False
            v.left_at = now
            _remove(self.present, v)
            self.present_version += 1
            self.stats.left += 1
            self.stats.dwell_total += now - v.arrived

    def arrival_sum(self) -> float:
        """``sum(v.arrived for v in self.present)``, summed again only when viewers
        arrived or left (the room reports it every step)."""
        hit = self._sums.get("arrived")
        if hit is None or hit[0] != self.present_version:
            hit = self._sums["arrived"] = (self.present_version, sum(v.arrived for v in self.present))
        return hit[1]

    def arrival_sum_later(self) -> Callable[[], float]:
        """A function that returns :meth:`arrival_sum` as it is now, whenever it is
        called: the viewers present are kept (a copy of the list, made once per change),
        the sum is made only if it is asked for (in a room of hundreds viewers come and
        go nearly every step)."""
        version = self.present_version
        hit = self._sums.get("arrived")
        if hit is not None and hit[0] == version:
            total = hit[1]
            return lambda: total
        kept = self._sums.get("present")
        if kept is None or kept[0] != version:
            kept = self._sums["present"] = (version, tuple(self.present))
        viewers = kept[1]

        def total() -> float:
            hit = self._sums.get("arrived")
            if hit is not None and hit[0] == version:
                return hit[1]
            return sum(v.arrived for v in viewers)

        return total

    def waiting(self) -> tuple[ChatMessage, ...]:
        """The waiting messages of viewers still present, oldest first (kept until the
        waiting messages change: a viewer leaving changes them too)."""
        hit = self._sums.get("present_pending")
        if hit is None or hit[0] != self.version:
            hit = self._sums["present_pending"] = (self.version, tuple(m for m in self.pending if m.viewer.present))
        return hit[1]

    def waiting_askers(self) -> tuple[str, ...]:
        """The names of present viewers with a question of fact waiting, in order."""
        hit = self._sums.get("askers")
        if hit is None or hit[0] != self.version:
            names = tuple(dict.fromkeys(m.viewer.name for m in self.waiting() if m.is_fact_question))
            hit = self._sums["askers"] = (self.version, names)
        return hit[1]

    def questions_waiting(self) -> int:
        """How many waiting messages are questions of fact, counted again only when the
        waiting messages changed."""
        hit = self._sums.get("waiting")
        if hit is None or hit[0] != self.version:
            hit = self._sums["waiting"] = (self.version, sum(m.is_fact_question for m in self.pending))
        return hit[1]

    def satisfy(self, v: Viewer, satisfaction: float) -> None:
        """Set ``v``'s satisfaction (which moves when it drifts out)."""
        v.satisfaction = satisfaction
        if v.present:
            heapq.heappush(self._drift, (_drift_at(v), self._order[v.name], v))

    def drift_out(self, now: float) -> None:
        """Viewers whose dwell time is over leave; satisfied viewers stay longer.

        The times are kept in a heap, so a step looks only at the viewers due (a room of
        hundreds costs what a room of ten does); they leave in the order they arrived.
        """
        due = []
        heap = self._drift
        while heap and heap[0][0] <= now:
            at, order, v = heapq.heappop(heap)
            if v.present and at == _drift_at(v):
                due.append((order, v))
        for _, v in sorted(due, key=lambda d: d[0]):
            self.leave(v, now)

    def play_out(self, start: float, end: float, market: Market) -> tuple[int, int]:
        """``(questions expired, viewers who left unanswered)`` if the stream ran from
        ``start`` to ``end`` with no host, played on a copy (this crowd, the market and
        the episode's generator are not touched). Campaign events are not replayed: the
        cost is of the viewers the host leaves, not of the campaign."""
        quiet = copy.copy(self.writer)
        quiet.phraser = None  # the wording of messages nobody reads is not worth an LLM call
        memo = {id(market): market, id(self.writer): quiet, id(self.config): self.config,
                **{id(p): p for p in self.personas.values()}}
        shadow = copy.deepcopy(self, memo)
        before = shadow.stats.ignored, shadow.stats.left_unanswered
        t = start
        while t < end:
            t = min(end, t + 5.0)
            while min(shadow.next_arrival, shadow.next_chat_at()) <= t:
                if shadow.next_arrival <= shadow.next_chat_at():
                    at = shadow.next_arrival
                    shadow.arrive(at)
                    shadow.schedule_arrival(at)
                else:
                    shadow.chat_once(market)
            shadow.expire(t, market)
            shadow.drift_out(t)
        return shadow.stats.ignored - before[0], shadow.stats.left_unanswered - before[1]

    def follow_up(self, msg: ChatMessage, now: float, market: Market, answer=None) -> ChatMessage:
        """The asker of ``msg`` follows up on an incomplete answer (``answer``: the reply
        as read, with ``stated`` and ``missing`` facts; the follow-up quotes it)."""
        msg.followed_up = True
        msg.deadline = now + msg.viewer.persona.patience_s
        f = self.writer.room_message(msg.viewer, "follow_up", msg, now, len(self.chat), market, self.rng, answer)
        self._post(f)
        return f

    def buy(self, v: Viewer, product_id: str, market: Market) -> bool:
        """``v`` tries to buy one unit at the best price now; False when sold out."""
        price = market.price_after_coupons(product_id)
        if not market.buy(product_id):
            return False
        self.stats.purchases += 1
        self.stats.buyers += v.purchases == 0
        self.stats.gmv = round(self.stats.gmv + price, 2)
        v.purchases += 1
        return True

    def buy_chance(self, v: Viewer, product_id: str, market: Market, quality: float) -> float:
        """Chance that ``v`` buys ``product_id`` after a reply of ``quality`` (0..1)."""
        p = v.persona
        product = market.catalog.by_id[product_id]
        ratio = market.price_after_coupons(product_id) / product.list_price
        price_factor = min(1.0, max(0.2, 1 - p.price_sensitivity * (ratio - 0.5)))
        promo = 1 + 0.5 * p.coupon_response * bool(market.coupons_for(product_id)) \
            + 0.5 * p.urgency_response * (product_id in market.flash)
        repeat = 0.3 ** v.purchases  # a viewer who already bought is less likely to buy again
        return min(0.9, p.purchase_propensity * quality * price_factor * promo * (0.6 + 0.4 * v.satisfaction) * repeat)


def _remove(items: list, item) -> None:
    """``items.remove(item)`` by identity: ``list.remove`` compares with ``==``, which for
    these dataclasses compares every field (a persona, a message's viewer ...) of every
    element before it. The same element goes: viewers' names and messages' ids are
    unique in a room, so no other element equals it."""
    for i, x in enumerate(items):
        if x is item:
            del items[i]
            return
    raise ValueError("list.remove(x): x not in list")


def _drift_at(v: Viewer) -> float:
    """When ``v`` drifts out: its dwell time, longer the more satisfied it is."""
    return v.leave_at + 240 * (v.satisfaction - 0.5)


# ------------------------------------------------------------------ crowd realism (issue 13)
#: Seconds of chat before the stream opens: the viewers already in the room have been
#: typing, so the first observation shows who spoke first and what (it differs by seed).
OPENING_CHAT_S = 45.0
#: A viewer's messages this close together reach the host as one request.
MERGE_WINDOW_S = 10.0


def opening_start(now: float, messages_so_far: int) -> float:
    """When a viewer arriving at ``now`` starts to chat: viewers present at the opening
    (time 0, nothing said yet) started typing before it."""
    return now - OPENING_CHAT_S if now == 0.0 and messages_so_far == 0 else now


def merge_target(pending: list[ChatMessage], msg: ChatMessage) -> ChatMessage | None:
    """The waiting request of ``msg``'s viewer that ``msg`` joins: the viewer's latest,
    when ``msg`` came within :data:`MERGE_WINDOW_S` of it (baits stand alone)."""
    if msg.intent in ("bait", "inject"):
        return None
    for req in reversed(pending):
        if req.viewer is msg.viewer and not req.answered:
            ok = msg.at - req.at <= MERGE_WINDOW_S and req.intent not in ("bait", "inject")
            return req if ok else None
    return None


def merge_into(req: ChatMessage, msg: ChatMessage) -> ChatMessage:
    """The request ``req`` with ``msg`` folded in: one request with every ask, each with
    its truth. Both messages stay in the chat as they were typed."""
    req = dataclasses.replace(req)
    if not req.is_fact_question and msg.is_fact_question:
        # a greeting then a question: the question leads the request
        req.intent, req.product, req.order = msg.intent, msg.product, msg.order
        req.asks = msg.asks + tuple(a for a in req.asks if a.intent in _FACT_INTENTS)
        req.ref, req.deadline = msg.ref, msg.deadline
    else:
        have = {(a.intent, a.product, a.order) for a in req.asks}
        req.asks = req.asks + tuple(a for a in msg.asks
                                    if (a.intent, a.product, a.order) not in have and a.intent in _FACT_INTENTS)
    req.truth = tuple(f for a in req.asks for f in a.truth)
    req.text = f"{req.text} / {msg.text}"
    req.body = f"{req.body} / {msg.body}"
    req.parts += 1
    return req
