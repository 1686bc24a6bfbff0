"""The crowd: viewers arriving, chatting, waiting, complaining, buying and leaving.

Driven by the episode's one random generator; the room asks it to advance to a time
and to react to a delivered reply.
"""

from __future__ import annotations

import copy
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from liveroom_sim.sim.buzz import BOUGHT, REACTION_INTENTS, Buzz
from liveroom_sim.sim.fitting import _Weighted
from liveroom_sim.sim.requests import MERGE_WINDOW_S, OPENING_CHAT_S, merge_into, merge_target, opening_start
from liveroom_sim.sim.viewers import ChatMessage, ChatWriter, Viewer
from liveroom_sim.sim.waiting import Waiting
from liveroom_sim.spec import ViewerConfig
from liveroom_sim.world.market import Market
from liveroom_sim.world.personas import Persona
from liveroom_sim.world.reaction_lines import ReactionLines

__all__ = ["Crowd", "CrowdStats", "MERGE_WINDOW_S", "OPENING_CHAT_S", "opening_start"]


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


#: What the room does not queue for an answer: complaints and follow-ups (their request
#: waits already), trolling, reactions to the show and purchase notices.
_NOT_QUEUED = frozenset(("complaint", "follow_up", "troll", *REACTION_INTENTS))


class Crowd:
    """All viewers of one episode and their pending messages.

    ``present`` (viewers in the room, in arrival order) and ``pending`` (messages
    waiting for an answer, oldest first; a viewer's stay there until the next
    :meth:`expire` after it left) are lists made again only after a change: read-only.
    """

    def __init__(self, config: ViewerConfig, personas: dict[str, Persona], writer: ChatWriter,
                 language: str, rng: np.random.Generator, reactions: ReactionLines | None = None):
        self.config, self.personas, self.writer, self.language, self.rng = config, personas, writer, language, rng
        self.buzz = Buzz(reactions)  # the crowd's reactions to the show, due later
        self.now = 0.0  # the latest time the crowd was moved to
        self.sales: list[tuple[float, str]] = []  # (when, product) of every purchase
        self._repeated: set[int] = set()  # waiting messages their viewer repeated
        self.mix = _Weighted(dict(config.mix))
        self.viewers: list[Viewer] = []
        self._present: dict[str, Viewer] = {}  # viewer name (unique in a room) -> viewer, in arrival order
        self._present_list: list[Viewer] | None = []
        self._waiting = Waiting()
        self._gone: list[str] = []  # viewers who left with messages waiting (dropped at the next expire)
        self.chat: list[ChatMessage] = []
        self.stats = CrowdStats()
        self._heap: list[tuple[float, int, int]] = []
        self._seq = 0
        self.version = 0  # bumped whenever the waiting messages change
        self.present_version = 0  # bumped whenever a viewer arrives or leaves
        self._sums: dict[str, tuple] = {}  # derived values, each with the version it is for
        # (when, arrival order) of each viewer's drift-out time, pushed again when its
        # satisfaction changes (an entry whose time is no longer the viewer's is skipped);
        # numbers only, so the cyclic GC stops tracking the entries
        self._drift: list[tuple[float, int]] = []
        self._order: dict[str, int] = {}  # viewer name (unique in a room) -> arrival order
        self._rate = config.arrivals_per_min / 60.0
        self.schedule_arrival(0.0)

    @property
    def present(self) -> list[Viewer]:
        if self._present_list is None:
            self._present_list = list(self._present.values())
        return self._present_list

    @property
    def pending(self) -> list[ChatMessage]:
        return self._waiting.messages()

    def order_of(self, v: Viewer) -> int:
        """``v``'s arrival order (its index in :attr:`viewers`)."""
        return self._order[v.name]

    def _after(self, now: float, rate: float) -> float:
        return now + self.rng.exponential(1.0 / rate) if rate > 0 else math.inf

    def schedule_arrival(self, now: float) -> None:
        """Draw when the next viewer arrives after ``now`` (a Poisson process)."""
        self.next_arrival = self._after(now, self._rate)

    def arrive(self, now: float) -> Viewer | None:
        """A new viewer of a persona drawn from the mix (None when the room is full)."""
        if len(self._present) >= self.config.max_present:
            return None
        self.now = max(self.now, now)
        persona = self.personas[self.mix.draw(self.rng.random())]
        name = self.writer.names.name_for(persona, self.rng)
        v = Viewer(name, persona, now, now + self.rng.exponential(persona.dwell_s))
        self.viewers.append(v)
        self._present[v.name] = v
        self._present_list = None
        self.present_version += 1
        self._order[v.name] = len(self.viewers) - 1
        heapq.heappush(self._drift, (_drift_at(v), len(self.viewers) - 1))
        self.stats.arrived += 1
        self._schedule(len(self.viewers) - 1, opening_start(now, self.stats.messages))
        return v

    def _schedule(self, index: int, now: float) -> None:
        rate = self.viewers[index].persona.chat_rate_per_min / 60.0
        at = self._after(now, rate)
        if at < math.inf:
            self._seq += 1
            heapq.heappush(self._heap, (at, self._seq, index))

    def ask_soon(self, v: Viewer, at: float) -> None:
        """``v`` writes a message at ``at`` besides its own pace (a next question after an answer)."""
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, self._order[v.name]))

    def next_chat_at(self) -> float:
        """When the next message (a viewer's own, or a reaction to the show) is due."""
        own = self._heap[0][0] if self._heap else math.inf
        return min(own, self.buzz.next_at()) if self.buzz.heap else own

    def chat_once(self, market: Market) -> ChatMessage | None:
        """Write the next due message: a viewer's own, or a reaction (which may be an order)."""
        buzz = self.buzz
        if buzz.heap and (not self._heap or buzz.heap[0][0] <= self._heap[0][0]):
            self.now = max(self.now, buzz.heap[0][0])
            return buzz.pop(self, market)
        at, _, index = heapq.heappop(self._heap)
        self.now = max(self.now, at)
        v = self.viewers[index]
        if not v.present:
            return None
        self._schedule(index, at)
        writer = self.writer
        recent = [m.text for m in self.chat[-5:]] if writer.phraser is not None else ()  # what an LLM phraser reads
        msg = writer.write(v, at, len(self.chat), market, self.rng, recent)
        self._post(msg)
        return msg

    def on_event(self, event, at: float, market: Market) -> None:
        """A campaign event fired at ``at`` (``market`` already applied it): the crowd's
        reactions to it are scheduled (see :mod:`liveroom_sim.sim.buzz`)."""
        self.now = max(self.now, at)
        self.buzz.on_event(self, event, at, market)

    def answer_heard(self, msg: ChatMessage, now: float, full: bool, wrong: int) -> None:
        """The asker of ``msg`` heard a reply to it (``full``: every fact stated;
        ``wrong``: how many stated facts were wrong): thanks, a next question or a correction."""
        self.buzz.answer_heard(self, msg, now, full, wrong)

    def hold(self, v: Viewer, until: float) -> None:
        """``v`` stays at least until ``until`` (waiting for a lucky-bag draw)."""
        if v.present and _drift_at(v) < until:
            v.leave_at = until - 240 * (v.satisfaction - 0.5)
            heapq.heappush(self._drift, (_drift_at(v), self._order[v.name]))

    def post(self, msg: ChatMessage) -> None:
        """Post a message the room made (a reaction) to the chat."""
        self._post(msg)

    def _post(self, msg: ChatMessage) -> None:
        self.chat.append(msg)
        self.stats.messages += 1
        if msg.intent in _NOT_QUEUED:
            return
        waiting = self._waiting
        mine = waiting.numbers(msg.viewer.name)  # (only the viewer's own can be the request it joins)
        req = merge_target([waiting.get(n) for n in mine], msg) if mine and msg.intent not in ("bait", "inject") else None
        if req is not None:
            self.stats.questions += msg.is_fact_question and not req.is_fact_question
            waiting.replace(waiting.number_of(req), merge_into(req, msg))
            self.version += 1
            return
        if msg.is_fact_question:
            self.stats.questions += 1
        waiting.add(msg)
        self.version += 1

    def expire(self, now: float, market: Market) -> list[ChatMessage]:
        """Handle messages whose patience ran out; returns the complaints posted.

        The messages are taken oldest first, as a scan of them all would (a viewer who
        leaves here loses its later messages at once, its earlier ones at the next call),
        but only those due and those of viewers who left are looked at.
        """
        self.now = max(self.now, now)
        waiting = self._waiting
        if not self._gone and not waiting.any_due(now):
            return []
        numbers = waiting.due(now)
        for name in self._gone:
            numbers.update(waiting.numbers(name))
        self._gone = []
        complaints = []
        dropped = False
        for n in sorted(numbers):
            msg = waiting.get(n)
            if msg is None:
                continue  # a later message of a viewer who left above
            v = msg.viewer
            if not v.present or not msg.is_fact_question:
                waiting.drop(n)  # greetings, baits and injections may be let go
                dropped = True
                continue
            self.stats.ignored += 1
            v.strikes += 1
            self.satisfy(v, max(0.0, v.satisfaction - 0.15 * (1 - v.persona.loyalty)))
            last = v.strikes >= v.persona.patience_strikes
            # Out of patience, a viewer asks once more before leaving ("hello??"): it
            # leaves when a question it already repeated runs out again.
            if last and msg.mid in self._repeated:
                self.leave(v, now)
                for later in [k for k in waiting.numbers(v.name) if k >= n]:
                    waiting.drop(later)
                dropped = True
                continue
            self._repeated.add(msg.mid)
            waiting.set_deadline(n, now + v.persona.patience_s * (0.5 if last else 1.0))
            c = self.writer.room_message(v, "complaint", msg, now, len(self.chat), market, self.rng)
            self._post(c)
            complaints.append(c)
        if dropped:
            self.version += 1
        return complaints

    def stated(self, msg: ChatMessage, facts) -> tuple[str, ...]:
        """A reply to ``msg`` stated ``facts``: they count with those earlier replies to it
        stated (a follow-up that completes an answer completes it). Returns the tags of
        every fact stated to it so far."""
        msg.stated = tuple(dict.fromkeys((*msg.stated, *(f.tag for f in facts))))
        return msg.stated

    def answered(self, msg: ChatMessage, in_full: bool = False) -> None:
        """``msg`` no longer waits for an answer (``in_full``: every fact it asks for
        was stated, and it counts as answered)."""
        if in_full:
            msg.answered = True
            self.stats.answered += 1
        msg.viewer.answered += msg.answered
        n = self._waiting.number_of(msg)
        if n is None:
            raise ValueError(f"message {msg.mid} is not waiting for an answer")
        self._waiting.drop(n)
        self.version += 1

    def leave(self, v: Viewer, now: float) -> None:
        if v.present:
            waiting = self._waiting
            mine = [waiting.get(n) for n in waiting.numbers(v.name)]
            if any(m.viewer is v and m.is_fact_question for m in mine):
                self.stats.left_unanswered += 1
            if mine:
                self._gone.append(v.name)
            self.version += 1
            v.left_at = now
            del self._present[v.name]
            self._present_list = None
            self.present_version += 1
            self.stats.left += 1
            self.stats.dwell_total += now - v.arrived

    def arrival_sum_later(self) -> Callable[[], float]:
        """A function that returns ``sum(v.arrived for v in self.present)`` as it is now,
        whenever it is called (the room reports it every step): the viewers present are
        kept (a copy of the list, made once per change), the sum is made only if it is
        asked for (in a room of hundreds viewers come and go nearly every step)."""
        version = self.present_version
        hit = self._sums.get("arrived")
        if hit is not None and hit[0] == version:
            known = hit[1]
            return lambda: known
        kept = self._sums.get("present")
        if kept is None or kept[0] != version:
            kept = self._sums["present"] = (version, tuple(self.present))
        viewers = kept[1]

        def total() -> float:
            hit = self._sums.get("arrived")
            if hit is not None and hit[0] == version:
                return hit[1]
            found = sum(v.arrived for v in viewers)
            if self.present_version == version:  # still the room's: later steps read it too
                self._sums["arrived"] = (version, found)
            return found

        return total

    def waiting(self) -> tuple[ChatMessage, ...]:
        """The waiting messages of viewers still present, oldest first (kept until the
        waiting messages change: a viewer leaving changes them too)."""
        hit = self._sums.get("present_pending")
        if hit is None or hit[0] != self.version:
            pending = self.pending
            # (a viewer who left with messages waiting is in _gone until they are dropped)
            msgs = tuple(m for m in pending if m.viewer.present) if self._gone else tuple(pending)
            hit = self._sums["present_pending"] = (self.version, msgs)
        return hit[1]

    def waiting_of(self, v: Viewer) -> list[ChatMessage]:
        """``v``'s waiting messages, oldest first (none once it left): those of
        :meth:`waiting` that are ``v``'s, without looking at anyone else's."""
        if not v.present:
            return []
        waiting = self._waiting
        return [waiting.get(n) for n in waiting.numbers(v.name)]

    def fact_questions_waiting(self) -> tuple[tuple[str, ...], int]:
        """The questions of fact waiting from viewers still present: their askers' names
        in order and how many there are, read in one pass (nothing kept between calls:
        the waiting chat changes nearly every reply; not :meth:`questions_waiting`, which
        counts messages of viewers who left too)."""
        questions = [m for m in self.waiting() if m.is_fact_question]
        return tuple(dict.fromkeys(m.viewer.name for m in questions)), len(questions)

    def questions_waiting(self) -> int:
        """How many waiting messages are questions of fact (counted as they come and go)."""
        return self._waiting.facts

    def satisfy(self, v: Viewer, satisfaction: float) -> None:
        """Set ``v``'s satisfaction (which moves when it drifts out)."""
        v.satisfaction = satisfaction
        if v.present:
            heapq.heappush(self._drift, (_drift_at(v), self._order[v.name]))

    def drift_out(self, now: float) -> None:
        """Viewers whose dwell time is over leave; satisfied viewers stay longer.

        The times are kept in a heap, so a step looks only at the viewers due (a room of
        hundreds costs what a room of ten does); they leave in the order they arrived.
        """
        heap = self._drift
        if not heap or heap[0][0] > now:
            return
        due, viewers = [], self.viewers
        while heap and heap[0][0] <= now:
            at, order = heapq.heappop(heap)
            v = viewers[order]
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
        shadow.buzz = Buzz(None)  # (reactions due would place orders on the real market)
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
        n = self._waiting.number_of(msg)
        if n is None:
            msg.deadline = now + msg.viewer.persona.patience_s
        else:
            self._waiting.set_deadline(n, now + msg.viewer.persona.patience_s)
        f = self.writer.room_message(msg.viewer, "follow_up", msg, now, len(self.chat), market, self.rng, answer)
        self._post(f)
        return f

    def buy(self, v: Viewer, product_id: str, market: Market, at: float | None = None) -> bool:
        """``v`` tries to buy one unit at the best price now (``at``, default: the
        crowd's latest time); False when sold out. The room sees the purchase."""
        price = market.price_after_coupons(product_id)
        if not market.buy(product_id):
            return False
        at = self.now if at is None else at
        self.stats.purchases += 1
        self.stats.buyers += v.purchases == 0
        self.stats.gmv = round(self.stats.gmv + price, 2)
        v.purchases += 1
        self.sales.append((at, product_id))
        if self.buzz.lines is not None:
            self._post(self.buzz.line(self, v, BOUGHT, product_id, at, market))
        return True

    def buy_chance(self, v: Viewer, product_id: str, market: Market, quality: float) -> float:
        """Chance that ``v`` buys ``product_id`` after a reply of ``quality`` (0..1)."""
        p = v.persona
        # What the market offers on the product (kept in its memo, valid while it is as now)
        key = ("buy_terms", product_id)
        terms = market.memo.get(key)
        if terms is None:
            ratio = market.price_after_coupons(product_id) / market.catalog.by_id[product_id].list_price
            terms = market.memo[key] = (ratio, bool(market.coupons_for(product_id)), product_id in market.flash)
        ratio, coupon, flash = terms
        price_factor = min(1.0, max(0.2, 1 - p.price_sensitivity * (ratio - 0.5)))
        promo = 1 + 0.5 * p.coupon_response * coupon + 0.5 * p.urgency_response * flash
        repeat = 0.3 ** v.purchases  # a viewer who already bought is less likely to buy again
        return min(0.9, p.purchase_propensity * quality * price_factor * promo * (0.6 + 0.4 * v.satisfaction) * repeat)


def _drift_at(v: Viewer) -> float:
    """When ``v`` drifts out: its dwell time, longer the more satisfied it is."""
    return v.leave_at + 240 * (v.satisfaction - 0.5)


