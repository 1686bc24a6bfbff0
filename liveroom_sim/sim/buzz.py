"""The buzz: how the crowd reacts to the show, in chat and at the checkout.

A real room answers what happens on stage within seconds: a flash sale draws "FLASH SALE
GO GO GO" and a burst of orders, then "抢到了!" from some buyers and "sold out already??"
from the late ones; a coupon drop gets claimed and nudges a few into buying; a stock-out
draws "restock pls", a restock a second wave; a lucky bag (福袋) a row of entries from
viewers who now stay for the draw; the platform shows every purchase ("🛒 just bought
...") for everyone to see. A host's answer is heard too: a good one draws thanks and a
next question, a wrong one a correction.

The crowd keeps a :class:`Buzz`: what is due (a line to post, an order to place) and
when, in time order beside the viewers' own chat. Who reacts and when is drawn from the
episode's generator; the words are the spec's reaction lines
(:class:`~liveroom_sim.world.reaction_lines.ReactionLines`). Every reaction is chat that
asks nothing (intent ``react``) and never waits for an answer; a purchase notice has
intent ``bought``.
"""

from __future__ import annotations

import heapq

from liveroom_sim.sim.viewers import Ask, ChatMessage, Viewer
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.market import Market
from liveroom_sim.world.reaction_lines import ReactionLines

#: The intents of reaction lines and of purchase notices (never waiting for an answer).
REACT, BOUGHT = "react", "bought"
REACTION_INTENTS = (REACT, BOUGHT)
#: How a flash sale multiplies a viewer's pull to buy (its propensity times its response
#: to urgency, times this): the orders of a sale's first seconds.
FLASH_PULL = 3.0
#: The same for a coupon drop (times the response to coupons) and a restock.
COUPON_PULL, RESTOCK_PULL = 1.0, 1.0
#: Most viewers who enter one lucky-bag or red-envelope draw in chat.
MOST_ENTRIES = 12
#: Personas that chat less than this a minute do not react in chat (lurkers stay silent).
TALKATIVE_PER_MIN = 0.3


class Buzz:
    """What the crowd will still say and buy in reaction to the show, in time order.

    Args:
        lines: The reaction lines; ``None`` keeps the crowd quiet about the show.
    """

    def __init__(self, lines: ReactionLines | None):
        self.lines = lines
        # (when, sequence, what, viewer's arrival order, product): numbers and strings only
        self.heap: list[tuple[float, int, str, int, str]] = []
        self._seq = 0

    def next_at(self) -> float:
        return self.heap[0][0] if self.heap else float("inf")

    def push(self, at: float, what: str, index: int, product: str) -> None:
        self._seq += 1
        heapq.heappush(self.heap, (at, self._seq, what, index, product))

    # ------------------------------------------------------------- the show
    def on_event(self, crowd, event, at: float, market: Market) -> None:
        """Schedule the crowd's reactions to a fired campaign event."""
        if self.lines is None:
            return
        rng = crowd.rng
        match event:
            case ev.FlashSaleStart(product=pid):
                self._talk(crowd, "flash_sale", pid, at, 2 + int(rng.integers(0, 3)), (2.0, 30.0))
                self._orders(crowd, "buy_flash", pid, at, 10.0,
                             lambda p: p.purchase_propensity * p.urgency_response * FLASH_PULL)
            case ev.CouponStart(products=covered):
                pid = covered[0] if covered else market.featured
                self._talk(crowd, "coupon", pid, at, 1 + int(rng.integers(0, 2)), (3.0, 25.0))
                self._orders(crowd, "buy", pid, at, 20.0, lambda p: p.purchase_propensity * p.coupon_response * COUPON_PULL)
            case ev.StockOut(product=pid):
                self._talk(crowd, "stock_out", pid, at, 1 + int(rng.integers(0, 3)), (2.0, 20.0))
            case ev.Restock(product=pid):
                self._talk(crowd, "restock", pid, at, 1 + int(rng.integers(0, 2)), (2.0, 20.0))
                self._orders(crowd, "buy", pid, at, 15.0, lambda p: p.purchase_propensity * RESTOCK_PULL)
            case ev.PriceChange(product=pid):
                before = market.old_prices[pid][-1] if market.old_prices[pid] else market.prices[pid]
                kind = "price_down" if market.prices[pid] < before else "price_up"
                self._talk(crowd, kind, pid, at, int(rng.integers(0, 2)) + (kind == "price_up"), (3.0, 15.0))
            case ev.Feature(product=pid):
                self._talk(crowd, "feature", pid, at, 1 + int(rng.integers(0, 2)), (2.0, 12.0))
            case ev.Giveaway():
                self._giveaway(crowd, event, at)

    def _talkers(self, crowd, k: int) -> list[Viewer]:
        """``k`` talkative viewers present, drawn at random."""
        talkative = [v for v in crowd.present if v.persona.chat_rate_per_min >= TALKATIVE_PER_MIN]
        if k <= 0 or not talkative:
            return []
        return [talkative[i] for i in crowd.rng.permutation(len(talkative))[:k].tolist()]

    def _talk(self, crowd, kind: str, pid: str, at: float, k: int, delay: tuple[float, float]) -> None:
        rng = crowd.rng
        for v in self._talkers(crowd, k):
            self.push(at + float(rng.uniform(*delay)), kind, crowd.order_of(v), pid)

    def _orders(self, crowd, what: str, pid: str, at: float, mean_delay: float, pull) -> None:
        """Each viewer present places an order within seconds with its persona's pull."""
        present = crowd.present
        if not present:
            return
        rng = crowd.rng
        draws = rng.random(len(present))
        waits = rng.exponential(mean_delay, size=len(present))
        for v, u, wait in zip(present, draws.tolist(), waits.tolist()):
            if u < min(0.6, pull(v.persona)):
                self.push(at + 1.0 + wait, what, crowd.order_of(v), pid)

    def _giveaway(self, crowd, event: ev.Giveaway, at: float) -> None:
        """Viewers enter in chat and stay for the draw; a winner and a few others speak after."""
        rng = crowd.rng
        kind, end = event.kind, at + event.duration_s
        entrants = [v for v in self._talkers(crowd, MOST_ENTRIES) if rng.random() < 0.6]
        for v in entrants:
            self.push(at + float(rng.uniform(1.0, 0.8 * event.duration_s)), kind, crowd.order_of(v), event.product)
            crowd.hold(v, end + 10.0)
        if entrants:
            order = rng.permutation(len(entrants)).tolist()
            self.push(end + float(rng.uniform(1.0, 6.0)), "won", crowd.order_of(entrants[order[0]]), event.product)
            for i in order[1:1 + int(rng.integers(1, 3))]:
                self.push(end + float(rng.uniform(2.0, 10.0)), "lost", crowd.order_of(entrants[i]), event.product)

    # ------------------------------------------------------------- the host
    def answer_heard(self, crowd, msg: ChatMessage, now: float, full: bool, wrong: int) -> None:
        """The asker of ``msg`` heard the host's answer: a wrong one draws a correction; a
        full, right one now and then thanks, and a next question soon."""
        if self.lines is None:
            return
        rng, index, pid = crowd.rng, crowd.order_of(msg.viewer), msg.product or ""
        if wrong:
            if rng.random() < 0.6:
                self.push(now + float(rng.uniform(2.0, 6.0)), "correction", index, pid)
        elif full:
            if rng.random() < 0.15:
                self.push(now + float(rng.uniform(2.0, 8.0)), "thanks", index, pid)
            if rng.random() < 0.2:
                crowd.ask_soon(msg.viewer, now + float(rng.uniform(4.0, 15.0)))

    # ------------------------------------------------------------- when due
    def pop(self, crowd, market: Market) -> ChatMessage | None:
        """Carry out the next due reaction: a line posted, or an order placed (and its
        notice posted); ``None`` when it came to nothing (the viewer left, sold out)."""
        at, _, what, index, pid = heapq.heappop(self.heap)
        v = crowd.viewers[index]
        if not v.present:
            return None
        if what in ("buy_flash", "buy"):
            if what == "buy_flash" and pid not in market.flash:  # over, or sold out before the order
                if crowd.rng.random() >= 0.5:
                    return None
                what = "missed"
            else:
                if not crowd.buy(v, pid, market, at):
                    return None
                if what == "buy_flash" and crowd.rng.random() < 0.4:
                    self.push(at + float(crowd.rng.uniform(1.0, 6.0)), "got_it", index, pid)
                return None  # (the purchase posted its notice)
        msg = self.line(crowd, v, what, pid, at, market)
        crowd.post(msg)
        return msg

    def line(self, crowd, v: Viewer, kind: str, pid: str, at: float, market: Market) -> ChatMessage:
        """``v``'s line of reaction ``kind`` about ``pid`` at ``at`` (not posted)."""
        rng = crowd.rng
        crowd.writer.voice(v, rng)  # (a viewer whose first words are a reaction has its voice from now on)
        texts = self.lines.lines[kind]
        text = texts[int(rng.integers(len(texts)))]
        product = market.catalog.by_id.get(pid) or market.catalog.by_id[market.featured]
        ref = crowd.writer.refer(product, market, rng) if "{product}" in text else ""
        if ref:
            text = text.format(product=ref)
        intent = BOUGHT if kind == "bought" else REACT
        return ChatMessage(len(crowd.chat), v, text, at, (Ask(intent, product.id),), ref=ref, body=text,
                           strikes=v.strikes, featured=market.featured)
