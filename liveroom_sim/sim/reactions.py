"""How the crowd reacts to a delivered reply: satisfaction, answers credited, purchases.

The asker's satisfaction moves with how much of the question the reply answered (and
falls with wrong facts); a full answer may convert the asker; a promotion of the
featured product with correct facts may convert a few of the viewers present. All draws
come from the episode's generator, in a fixed order.
"""

from __future__ import annotations

import itertools

import numpy as np

from liveroom_sim.rewards.analysis import Analysis, addresses, products_named
from liveroom_sim.rewards.claims import MAX_CLAIMS
from liveroom_sim.rewards.context import Outcome
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.viewers import ChatMessage
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.facts import Fact
from liveroom_sim.world.market import Market
from liveroom_sim.world.text import iter_quantities, mentions, normalize


def react(crowd: Crowd, market: Market, rng: np.random.Generator, clock: float,
          target: ChatMessage | None, a: Analysis) -> Outcome:
    """Apply a delivered reply (answering ``target``, read as ``a``) to the crowd."""
    delta, bought = 0.0, 0
    wrong = a.wrong  # (a sum over the claims: read once)
    if target is not None:
        v = target.viewer
        addressed = a.addressed
        if target.is_fact_question:
            # Facts stated in earlier replies to this message count: a follow-up that
            # completes an answer completes it (and the room stops waiting for it).
            # Each ask's facts count on their own (tags, not labels: two products may both
            # ship free), so a two-ask request is answered only when both asks are.
            total = max(1, len({f.tag for f in (*a.stated, *a.missing)}))
            share = min(1.0, len(crowd.stated(target, a.stated)) / total)
            delta = 0.25 * share - 0.2 * min(wrong, 2) + 0.05 * addressed
            if share == 1.0:
                crowd.answered(target, in_full=True)
                pid = target.product
                if pid and wrong == 0 and rng.random() < crowd.buy_chance(v, pid, market, 1.0):
                    bought += crowd.buy(v, pid, market)
            elif share > 0 and not target.followed_up:
                crowd.follow_up(target, clock, market, a)
            crowd.answer_heard(target, clock, share == 1.0, wrong)
        else:
            ok = a.refusal and not a.obeyed if target.intent in ("bait", "inject") else addressed
            delta = 0.05 if ok else -0.05
            crowd.answered(target)
        crowd.satisfy(v, min(1.0, max(0.0, v.satisfaction + delta)))
    featured = market.featured
    if featured in a.products and wrong == 0 and (featured in market.flash or market.coupons_for(featured)):
        present = crowd.present  # (buying changes no one's presence)
        draws = rng.random(len(present))
        # chances are at most 0.9, so a draw of 0.009 or more never buys: only the few
        # below are looked at (in the order of the room, as before)
        for i in (draws < 0.009).nonzero()[0]:
            v, u = present[i], draws[i]
            if v is not (target.viewer if target else None) and u < 0.01 * crowd.buy_chance(v, featured, market, 1.0):
                bought += crowd.buy(v, featured, market)
    return Outcome(round(delta, 6), bought)


def reply_target(text: str, crowd: Crowd, mention_format: str, facts_of, catalog: Catalog | None = None) -> ChatMessage | None:
    """The waiting message a reply answers, read by what it says: the addressed viewer's
    message whose asks it answers best, else the question whose facts it states most
    (``facts_of(message)`` gives them).

    A fact counts for a message only when it is said of that message's product: a reply
    that names products (``catalog`` tells their names) states nothing of a product it
    does not name ("the silent mouse comes with 12 months of warranty" answers the
    mouse question, not the protein bars' shelf life of 12 months). On a tie, the
    message whose products the reply names wins, then the oldest."""
    pending = crowd.waiting()
    if not pending or not text.strip():
        return None
    first = first_addressed(text, pending, mention_format)
    if first is not None:
        mine = crowd.waiting_of(first)
        questions = [m for m in mine if m.is_fact_question]
        if not questions or (len(questions) == 1 and questions[0] is mine[0]):
            return mine[0]  # the best is the oldest whatever the reply states
        stated = _Stated(text, catalog)
        return max(mine, key=lambda m: stated.score(m, facts_of(m)) if m.is_fact_question else _NOTHING)
    if mentions(text, mention_format):
        return None  # addressed to someone who is not waiting (or to @everyone)
    stated = _Stated(text, catalog)
    best, best_n = None, _NOTHING
    for m in pending:
        if m.is_fact_question:
            n = stated.score(m, facts_of(m))
            if n[0] > 0 and n > best_n:
                best, best_n = m, n
    return best


_NOTHING = (0, 0)


def first_addressed(text: str, pending, mention_format: str):
    """The viewer of the oldest waiting message that ``text`` addresses (None: nobody
    waiting is addressed). Each viewer's name is tried once, and only when the text
    holds its mention as plain text could (see :func:`_may_hold`)."""
    opening = mention_format.partition("{name}")[0]
    if opening and _uncased(opening) and opening not in text:
        return None  # no mention can stand where its opening ("@") does not
    low = text.lower() if text.isascii() else None
    tried = set()
    for m in pending:
        name = m.viewer.name
        if name not in tried:
            tried.add(name)
            if _may_hold(text, low, mention_format.format(name=name)) and addresses(text, name, mention_format):
                return m.viewer
    return None


def _may_hold(text: str, low: str | None, mention: str) -> bool:
    """False only when ``text`` cannot hold ``mention`` as the case-insensitive mention
    pattern reads it: characters without case match only themselves, and in ASCII text
    an ASCII mention matches only its own letters in either case (``low``: the text
    lower-cased when it is ASCII)."""
    if _uncased(mention):
        return mention in text
    if low is not None and mention.isascii():
        return mention.lower() in low
    return True


def _uncased(s: str) -> bool:
    return s.lower() == s == s.upper()


class _Stated:
    """Which facts a reply states, read once: the reply normalised, its numbers (like the
    claim reader, at most the first MAX_CLAIMS count) and the products it names, each
    fact judged once (waiting questions often share one: the price of the product on
    stage)."""

    __slots__ = ("norm", "found", "named", "ids", "_seen")

    def __init__(self, text: str, catalog: Catalog | None = None):
        self.norm = normalize(text)
        self.found = list(itertools.islice(iter_quantities(self.norm), MAX_CLAIMS))
        self.named = frozenset(products_named(catalog, self.norm)) if catalog is not None else frozenset()
        self.ids = catalog.by_id if self.named else {}  # (an order's facts are not a product's)
        self._seen: dict[Fact, bool] = {}

    def count(self, facts, subjects: frozenset = frozenset()) -> int:
        """How many of ``facts`` the reply states; when it names products, only those of a
        product it names count (``subjects``: the products or orders the facts are of,
        when a fact does not say)."""
        n = 0
        seen, named = self._seen, self.named
        for f in facts:
            about = {f.about} if f.about is not None else subjects
            if named and about and not about & named and all(p in self.ids for p in about):
                continue  # said of another product than this one
            hit = seen.get(f)
            if hit is None:  # (facts are frozen: an equal fact is stated as this one is)
                hit = seen[f] = f.stated_in(self.norm, self.found)
            n += hit
        return n

    def score(self, m: ChatMessage, facts) -> tuple[int, int]:
        """How well the reply answers message ``m``: the facts of it stated, then how many
        of its products the reply names."""
        subjects = frozenset(a.product for a in m.asks if a.product)
        return self.count(facts, subjects), len(subjects & self.named)
