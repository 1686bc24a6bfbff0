"""The claims a reply makes, each attributed to a product and an attribute, and checked
against the market as of now.

A claim is a number with its unit ("$22.99", "48 hours", "12 left"), a coupon code, or
a statement without a number ("sold out", "free shipping", "pregnancy-safe", "no
peanuts"). Each is attributed to the product it is about (the product named nearest
before it in its clause, else after it, else the one the reply last named, else the
one asked about, else the featured one) and to an attribute read from the words around
it ("list price", "shipping", "warranty"...). It is correct only when it is true of
*that* attribute of *that* product now, with its unit and currency; a number without a
unit claims nothing a viewer can rely on and is ``unitless``; a true claim whose facts
were not looked up this exchange is ``unsupported`` (when the caller tracks lookups).

Verdicts: ``correct``, ``outdated`` (true before a change), ``invented`` (false),
``wrong_currency``, ``unitless``, ``unsupported``.
"""

from __future__ import annotations

import bisect
import re
from functools import cache, lru_cache
from typing import NamedTuple

from liveroom_sim.rewards.catalog_index import CatalogIndex, catalog_index, code_tokens, trie_pattern
from liveroom_sim.rewards.claim import (
    HOURS_TOLERANCE,
    MAX_CLAIMS,
    MONEY_TOLERANCE,
    PERCENT_TOLERANCE,
    SIZE_TOLERANCE,
    Claim,
    Dim,
    Verdict,
)
from liveroom_sim.rewards.claim import ClaimKind as K
from liveroom_sim.rewards.claim import Verdict as V
from liveroom_sim.rewards.cues import cue, hour_cues, money_cue_before
from liveroom_sim.rewards.hedges import hedge_before, hedged_claim, may_hedge
from liveroom_sim.rewards.orders import order_claims, orders_at
from liveroom_sim.rewards.terms import term_claims
from liveroom_sim.rewards.truths import discounts, money_truth, near
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.market import Market
from liveroom_sim.world.phrasebook import reading_words
from liveroom_sim.world.text import Quantity, cn_to_number, iter_quantities, normalize

# Clause boundaries: sentence marks, and commas or full stops that are not inside a number
# (9.99, 1,000). The class comes first, so the engine skips to the marks; the digits
# around a full stop or comma are looked at only after one (\d is str.isdecimal).
_BOUNDARY = re.compile(r"[!?;\n！？；。.,](?:(?<=[^.,])|(?<!\d.)|(?!\d))")
_LEADING = re.compile(r"\d+(?:\.\d+)?")  # the first number of a quantity as said ("8 h per charge": 8)
# Members read for every number or claim, bound once: a member of an Enum class is looked
# up through its metaclass (~50 ns in Python 3.11).
_BARE, _MONEY, _PRICE, _CORRECT, _INVENTED = Dim.BARE, Dim.MONEY, K.PRICE, V.CORRECT, V.INVENTED


class ReplyLayout:
    """Where things are in a normalised reply: product mentions and (found when first
    asked for) clause starts. (The compliance rules' reading of a reply is another
    thing: :class:`~liveroom_sim.rewards.reading.RuleReading`.)"""

    __slots__ = ("norm", "mentions", "ends", "index", "_starts", "_lines")

    def __init__(self, norm: str, mentions: list[tuple[int, int, str]], index: "CatalogIndex",
                 lines: tuple[int, ...] = ()):
        self.norm, self.mentions, self.index, self._lines = norm, mentions, index, lines
        self.ends = [e for _, e, _ in mentions]
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            starts = clause_starts(self.norm)
            self._starts = sorted({*starts, *self._lines}) if self._lines else starts
        return self._starts

    def clause(self, pos: int) -> tuple[int, int]:
        starts = self.starts
        i = bisect.bisect_right(starts, pos)
        return starts[i - 1], starts[i] if i < len(starts) else len(self.norm)

    def product_at(self, pos: int, fallback: str | None, clause: tuple[int, int] | None = None) -> str | None:
        """The product a statement at ``pos`` is about (see the module docstring);
        ``clause``: ``self.clause(pos)``, when the caller has it."""
        if not self.mentions:
            return fallback  # (nothing named: the clause does not matter)
        start, end = clause or self.clause(pos)
        i = bisect.bisect_right(self.ends, pos)
        earlier = self.mentions[i - 1] if i else None
        if i < len(self.mentions) and self.mentions[i][0] < end and not (earlier and earlier[0] >= start):
            return self.mentions[i][2]  # named later in its clause, with nothing named before it there
        return earlier[2] if earlier else fallback

    def named_over(self, start: int, end: int) -> bool:
        """Whether a product's name holds all of ``start:end``: the words of a name claim
        nothing about an attribute ("Peanut-free Crunch", 无糖饼干), but a longer word that
        holds a name (the ingredient 浓缩乳清蛋白粉 holds the alias 乳清蛋白) is that word."""
        i = bisect.bisect_right(self.ends, start)
        return i < len(self.mentions) and self.mentions[i][0] <= start and end <= self.mentions[i][1]

    def in_name(self, span: tuple[int, int]) -> bool:
        """Whether ``span`` overlaps a product name (the 50 of "SPF 50" claims nothing)."""
        i = bisect.bisect_right(self.ends, span[0])
        return i < len(self.mentions) and self.mentions[i][0] < span[1]


def clause_starts(norm: str) -> list[int]:
    """0 and the end of each clause boundary: a sentence mark, or a comma or full stop not
    inside a number (:data:`_BOUNDARY`: no look-behind tried at every position, and no
    test by hand per mark, which cost a third more)."""
    return [0] + [m.end() for m in _BOUNDARY.finditer(norm)]


def read(catalog: Catalog, norm: str, lines: tuple[int, ...] = ()) -> ReplyLayout:
    """The layout of normalised text: where the catalog's products are named in it.
    ``lines``: where its lines after the first start (:func:`~liveroom_sim.world.text.line_starts`),
    each also the start of a clause ("AFTER" on one line says nothing of the price on the next)."""
    index = catalog_index(catalog)
    return ReplyLayout(norm, index.named(norm), index, lines)


def check_claims(reply: str, reading: ReplyLayout, market: Market, asked: str | None, order: str | None,
                 words: dict[str, tuple[str, ...]], lookups: frozenset | None) -> tuple[list[Claim], list[Quantity]]:
    """Every claim of the reply (see the module docstring), and the quantities found.

    Args:
        asked: The product the question is about, if any.
        order: The order the question is about, if any (its arrival time is its fact).
        lookups: ``(canonical tool, argument)`` pairs looked up this exchange, or ``None``.
    """
    norm = reading.norm
    about_order = order is not None  # (or the reply may name one: most replies are about no order)
    if not about_order:
        for head in reading.index.order_heads:
            if head in norm:
                about_order = True
                break
    # An order the reply names is read as the one its numbers may be about, asked or not
    # (a merged request asks about a product first and an order after it).
    order_of = orders_at(norm, market.catalog, order) if about_order else None
    fallback = asked or market.featured
    # A reply is read up to MAX_CLAIMS statements: a longer one is over every length limit.
    found: list[Quantity] = []
    named = bool(reading.mentions)
    for q in iter_quantities(norm):
        if named and reading.in_name(q.span):
            continue
        found.append(q)
        if len(found) >= MAX_CLAIMS:
            break
    claims = []
    for q in found:
        s = q.span[0]
        c = _number_claim(q, reading, market, fallback, order_of and (oid := order_of(s)) and _eta(market, oid))
        if c is not None and q.dim != _BARE and may_hedge(norm, s) and (hedge := hedge_before(norm, s, reading.clause(s)[0])):
            c = hedged_claim(c, hedge, market)  # "not $30, it's $24.99", "under $30", 不到200元
        if c is not None:
            claims.append(c)
    claims += _code_claims(reply, reading, market, fallback)
    claims += term_claims(reading, market, fallback, words)
    if about_order:
        claims += [Claim(K.ORDER_STATUS, w, _verdict(ok), oid, stage=("not " if denied else "") + stage, states=states)
                   for oid, stage, denied, w, ok, states in order_claims(norm, market.catalog, order, reading.named_over,
                                                                         MAX_CLAIMS)]
    if lookups is not None:
        claims = [_supported(c, lookups) for c in claims]
    return claims, found


def _eta(market: Market, order: str) -> tuple[str, float] | None:
    """The order and its arrival time in hours (None when it has none)."""
    days = market.catalog.order(order).eta_days
    return (order, days * 24.0) if days is not None else None


def _supported(c: Claim, lookups: frozenset) -> Claim:
    if c.verdict != _CORRECT:
        return c
    subject = c.product or ""
    for tool in c.tools:
        if (tool, subject) in lookups or (tool, "") in lookups:
            return c
    return c._replace(verdict=V.UNSUPPORTED)


class Around(NamedTuple):
    """A number of the reply and what surrounds it: what a dimension's reader reads."""

    q: Quantity
    r: "ReplyLayout"
    market: Market
    pid: str  # the product it is about (see ReplyLayout.product_at)
    said: str
    before: str  # up to 60 characters of its clause before it
    after: str  # up to 16 characters of its clause after it
    order_eta: tuple[str, float] | None  # the order it may be about, and its arrival in hours


def _number_claim(q: Quantity, r: "ReplyLayout", market: Market, fallback: str, order_eta) -> Claim | None:
    """The claim a number makes, read by its dimension's reader (:data:`_BY_DIM`)."""
    s, e = q.span
    norm = r.norm
    clause = cs, ce = r.clause(s)
    at = Around(q, r, market, r.product_at(s, fallback, clause), norm[s:e].strip(), norm[max(cs, s - 60):s],
                norm[e:min(ce, e + 16)], order_eta)
    return _BY_DIM.get(q.dim, _size_claim)(at)


def _bare_claim(at: Around) -> Claim | None:
    """A number without a unit: a rank says nothing here, 满200减30 is a coupon, a number
    the catalog states of the product with a unit of its own (5 ATM, Bluetooth 5.3,
    sizes 26-34) is a spec; any other claims nothing a viewer can rely on ("it's 24.99":
    dollars? a discount?)."""
    v, pid, said = at.q.value, at.pid, at.said
    if _RANK_BEFORE.search(at.before):
        return None  # a rank ("#1", 第一) is the compliance rules' business, not a fact
    if _buys(at):
        return None  # "3 of them come to $74.97": how many the amount after it buys
    if at.before.rstrip().endswith(reading_words().amounts.spend):
        # 满200减30: a spend-save coupon's threshold and value, written without a unit.
        truth = money_truth(pid, K.COUPON_VALUE, at.market)
        return Claim(K.COUPON_VALUE, said, _verdict(near(v, truth, MONEY_TOLERANCE)), pid, v, Dim.MONEY)
    if at.before.rstrip().endswith(reading_words().amounts.price):
        return _money_claim(at)  # 不贵，才137: said without 元, as hosts say it
    if v in at.r.index.numbers[pid] or _quotes_spec(at, word_before=True):  # ... or "iOS 14 or later"
        return Claim(K.SIZE, said, V.CORRECT, pid, v, Dim.SIZE)
    counted = _claim_words().counted.match(at.r.norm, at.q.span[0])
    if counted is not None and v == items_counted(at.market.catalog.by_id[pid].name):
        return Claim(K.SIZE, counted.group(0), V.CORRECT, pid, v, Dim.SIZE)  # "the 12-pack", 30包: the name's count
    unit = _claim_words().spec_unit.match(at.after)
    if unit:
        # 30℃, 65 cm, 38码: a unit the quantity reader does not know is still a unit; the
        # number is a spec the catalog states of the product, or a made-up one.
        return Claim(K.SIZE, said + unit[0], V.INVENTED, pid, v, Dim.SIZE)
    return Claim(K.NUMBER, said, V.UNITLESS, pid, v, Dim.BARE)


def _money_claim(at: Around) -> Claim:
    """An amount of money: the price before a change ("was $24.99"), else the attribute
    the words after or before it name (list price, shipping, a coupon's value, a price
    after a coupon), else the price; true to the cent in the catalog's currency."""
    v, pid, said, market, before = at.q.value, at.pid, at.said, at.market, at.before
    words = reading_words().amounts
    if before.rstrip().endswith(words.past):
        # "was $24.99", 之前129元: the price before a change, true if it was one (or is the
        # price a flash sale runs below: "$36, down from $44").
        was = set(market.old_prices[pid]) | {market.catalog.by_id[pid].list_price}
        if pid in market.flash:
            was.add(market.prices[pid])
        return Claim(K.OLD_PRICE, said, _verdict(near(v, was, MONEY_TOLERANCE)), pid, v, Dim.MONEY)
    tail = at.after.lstrip()
    # (one test of all the words after first: an amount is rarely followed by any)
    kind = (K.COUPON_VALUE if tail.startswith(words.coupon_after) else K.SHIPPING_FEE if tail.startswith(words.shipping_after)
            else K.PRICE_AFTER_COUPON if tail.startswith(words.after_coupon)
            else K.LIST_PRICE if tail.startswith(words.list_after) else None) if tail.startswith(_words_after()) else None
    kind = kind or money_cue_before(before, at.q.span[0], at.r.norm, at.r.mentions) or _PRICE
    currency = at.q.currency
    if currency and currency != market.catalog.currency:
        return Claim(kind, said, V.WRONG_CURRENCY, pid, v, Dim.MONEY)
    if near(v, money_truth(pid, kind, market), MONEY_TOLERANCE):
        return Claim(kind, said, _CORRECT, pid, v, _MONEY)
    if kind == _PRICE and near(v, money_truth(pid, K.PRICE_AFTER_COUPON, market), MONEY_TOLERANCE):
        return Claim(K.PRICE_AFTER_COUPON, said, V.CORRECT, pid, v, Dim.MONEY)
    if kind in (K.PRICE, K.PRICE_AFTER_COUPON) and (n := bundle_count(at.before)):
        # "2 for $49.98", 拍两件就是258元: the price of that many, true at n times a true one
        for k in (kind, K.PRICE_AFTER_COUPON) if kind == K.PRICE else (kind,):
            if near(v, {n * t for t in money_truth(pid, k, market)}, MONEY_TOLERANCE):
                return Claim(k, said, V.CORRECT, pid, v, Dim.MONEY)
    if kind in (K.PRICE, K.PRICE_AFTER_COUPON) and _of_one(at):
        # "$2.25 a bar" of a 12-pack, 一包才3块多 of 30包: the price of one, true at the
        # price over the count (the name's, else one said before it in its clause: "40
        # sachets for $13.40 is 33.5 cents each"), to the precision said
        n = items_counted(market.catalog.by_id[pid].name)
        for count in (n,) if n else _counts_before(at.before):
            for k in (kind, K.PRICE_AFTER_COUPON) if kind == K.PRICE else (kind,):
                if any(_to_precision(v, said, t / count) for t in money_truth(pid, k, market)):
                    return Claim(k, said, V.CORRECT, pid, v, Dim.MONEY)
    verdict = V.OUTDATED if near(v, market.old_prices[pid], MONEY_TOLERANCE) else V.INVENTED
    return Claim(kind, said, verdict, pid, v, Dim.MONEY)


@cache
def _words_after() -> tuple[str, ...]:
    """Every word after an amount that names its attribute (see :func:`_money_claim`)."""
    w = reading_words().amounts
    return (*w.coupon_after, *w.shipping_after, *w.after_coupon, *w.list_after)


#: A whole number of things said before an amount ("40 sachets", not the 40 of "$13.40").
_COUNT_OF_THINGS = re.compile(r"(?<![\d.,$])(\d{1,4}|[a-z]+) [a-z]")


def _counts_before(before: str) -> set[int]:
    """The numbers of things (2 to 1,000) said in ``before``, in figures or words."""
    return {n for raw in _COUNT_OF_THINGS.findall(before) if (n := _whole_number(raw, 1000)) is not None}


def _of_one(at: Around) -> bool:
    """Whether an amount is said as the price of one item ("$2.25 a bar", "each", 一包才)."""
    w = _claim_words()
    return w.each_before.search(at.before) is not None or w.each_after.match(at.r.norm, at.q.span[1]) is not None


@lru_cache(maxsize=256)
def items_counted(name: str) -> int | None:
    """The number of items a product's name counts ("Protein Bars 12-Pack": 12,
    每日坚果混合装30包: 30), or ``None``."""
    m = _claim_words().counted.search(normalize(name))
    return int(m.group(1)) if m is not None and int(m.group(1)) >= 2 else None


_DECIMALS = re.compile(r"\d+(?:\.(\d+))?")


def _to_precision(v: float, said: str, truth: float) -> bool:
    """Whether ``truth`` is ``v`` to the precision ``said`` gives it, rounded or cut
    ("3.33元" of 3.33; "3块多", "about $2" of 3.33 and 2.25)."""
    m = _DECIMALS.search(said)
    step = 10.0 ** -len(m.group(1) or "") if m is not None else 1.0
    if m is not None and (digits := float(m.group(0))) and digits != v:
        step *= v / digits  # (said in another unit: "10 cents" is 0.10 to the cent)
    return v - step / 2 <= truth < v + step


#: How far before a percentage a discount word still speaks of it ("discount of 20%").
_DISCOUNT_REACH = 14


def _percent_claim(at: Around) -> Claim | None:
    """A percentage: an efficacy rate ("100% effective": none is true), a number of the
    spec sheet (30% cotton), else a discount, true of a coupon or of the price against
    the list price."""
    v, pid, said, norm, e = at.q.value, at.pid, at.said, at.r.norm, at.q.span[1]
    words = _claim_words()
    efficacy = _EFFICACY_AFTER.match(norm, e) or words.efficacy_before.search(at.before)
    if efficacy:
        # "100% effective", 百分百有效, 有效率95%: no catalog states an efficacy rate, so
        # none is true (and a denial or refusal of one claims nothing).
        if words.denied_before.search(at.before):
            return None
        s = at.q.span[0]
        return Claim(K.EFFICACY, norm[s:max(e, efficacy.end() if efficacy.re is _EFFICACY_AFTER else e)].strip(),
                     V.INVENTED, pid, v, Dim.PERCENT)
    # A discount word next to the number ("20% off", "discount: 20%", 打2折), not anywhere in the
    # clause: in "200 h with backlight off and layout 75%" the "off" is the backlight's.
    near_words = at.before[-_DISCOUNT_REACH:] + said + at.after
    discount = any(c in near_words for c in reading_words().amounts.discount)
    if not discount and v in at.r.index.percents[pid]:
        return Claim(K.SIZE, said, V.CORRECT, pid, v, Dim.SIZE)
    return Claim(K.PERCENT_OFF, said, _verdict(near(v, discounts(pid, at.market), PERCENT_TOLERANCE)), pid, v,
                 Dim.PERCENT_OFF)


def _hours_claim(at: Around) -> Claim | None:
    """A duration: an order's arrival when the reply is about an order, else the
    attribute its cue words name (returns, warranty, shipping, shelf life, battery), else
    any of the product's durations; a countdown or a way of speaking claims nothing."""
    v, pid, said, order_eta = at.q.value, at.pid, at.said, at.order_eta
    kind = cue(at.before + " " + at.after, hour_cues())
    if kind is None and (v < 1 or at.q.spelled) and order_eta is None:
        # "30 minutes left", 30分钟后涨价: a countdown; "one day you'll love it": a way of
        # speaking. Neither is a product's duration.
        return None
    if order_eta is not None and (kind in (K.ETA, None) or abs(v - order_eta[1]) < HOURS_TOLERANCE):
        return Claim(K.ETA, said, _verdict(abs(v - order_eta[1]) < HOURS_TOLERANCE), order_eta[0], v, Dim.HOURS)
    index = at.r.index
    durations = index.durations[pid]
    truth = {durations[kind]} if kind in durations else (set() if kind else set(durations.values()))
    # The spec sheet's own wording ("8 h per charge") only backs a battery time or a
    # duration of no named attribute: a ship time, return window, warranty or shelf
    # life is one catalog field, so a spec number (12 h battery, 30 ml) is no proof.
    holds = near(v, truth, HOURS_TOLERANCE) or (kind in (None, K.BATTERY) and (m := _LEADING.search(said)) is not None
                                                  and float(m[0]) in index.numbers[pid])
    return Claim(kind or K.DURATION, said, _verdict(holds), pid, v, Dim.HOURS)


def _count_claim(at: Around) -> Claim | None:
    """A count of items: the stock left (or a flash sale's quantity left); none for a
    number of items bought (两件258元)."""
    market, pid, v = at.market, at.pid, at.q.value
    if _buys(at) and not _claim_words().stock_before.search(at.before):
        return None  # 两件258元: a number of items bought, priced after it, no stock
    truth = {float(market.stock[pid])}
    if pid in market.flash and market.flash[pid][1] is not None:
        truth.add(float(market.flash[pid][1]))
    if v not in truth and _quotes_spec(at):
        # "接口 2个USB-C + 1个USB-A": the spec sheet's own words count ports, not stock
        return Claim(K.SIZE, at.said, V.CORRECT, pid, v, Dim.SIZE)
    return Claim(K.STOCK, at.said, _verdict(v in truth), pid, v, Dim.COUNT)


#: The word just before a number: a Latin word, or the two Chinese characters before it.
_LAST_WORD = re.compile(r"([a-z]+|[\u4e00-\u9fff]{1,2})\s*$")


def _quotes_spec(at: Around, word_before: bool = False) -> bool:
    """Whether a number and the words after it (and, with ``word_before``, the word before
    it) are a spec-sheet or compatibility value of the product as the catalog writes it
    (a count of ports, "iOS 14 or later")."""
    texts = at.r.index.spec_texts.get(at.pid)
    if not texts:
        return False
    s, e = at.q.span
    said, core = at.r.norm[s:e + 4].strip(), len(at.r.norm[s:e].strip())
    heads = [said[:k] for k in range(len(said), core, -1)]  # the number and 1-4 characters after it
    before = _LAST_WORD.findall(at.before)[-1:] if word_before else []  # "ios", 安卓
    return any(h in t and all(w in t for w in before) for t in texts for h in heads)


def _size_claim(at: Around) -> Claim:
    """Any other quantity (30 ml, 5 ATM): true when the spec sheet states it."""
    v = at.q.value
    return Claim(K.SIZE, at.said, _verdict(near(v, at.r.index.numbers[at.pid], SIZE_TOLERANCE)), at.pid, v, Dim.SIZE)


#: The reader of each dimension of number (any other: :func:`_size_claim`).
_BY_DIM = {Dim.BARE: _bare_claim, Dim.MONEY: _money_claim, Dim.PERCENT_OFF: _percent_claim,
           Dim.HOURS: _hours_claim, Dim.COUNT: _count_claim}


def _verdict(holds: bool) -> Verdict:
    return _CORRECT if holds else _INVENTED


#: Words after a percentage that make it an efficacy rate ("100% effective", 百分百有效).
#: (Kept here, not in the phrasebooks' ``claims.efficacy``: the claim's text ends where
#: the first of these in this order ends, and two are whole words, "works" and "results";
#: a list in data would need both rules spelt out per word.)
_EFFICACY_AFTER = re.compile(r"\s?(?:effective|effectiveness|efficacy|success|guaranteed to work|works\b|results\b"
                             r"|有效|见效|管用|起效|成功率)")


class _ClaimPatterns(NamedTuple):
    efficacy_before: re.Pattern[str]  # an efficacy rate's words before it ("success rate of 95%", 有效率95%)
    denied_before: re.Pattern[str]  # a denial shortly before it ("not 100% effective")
    spec_unit: re.Pattern[str]  # a spec sheet's unit after a bare number (after normalising: ℃ is °c)
    bundle_before: re.Pattern[str]  # a number of items and its link, right before an amount ("2 for", 两件就是)
    bundle_after: re.Pattern[str]  # after a number of items: its item word, link and an amount (两件258元)
    stock_before: re.Pattern[str]  # a stock word right before a count (剩两件 is stock, also before an amount)
    each_before: re.Pattern[str]  # one item named right before an amount ("each bar is", 一包才)
    each_after: re.Pattern[str]  # one item named right after an amount ("a bar", "each", /包, 一包)
    counted: re.Pattern[str]  # a count of items in a product's name ("12-pack", 30包)
    share_before: re.Pattern[str]  # a share named right before an amount (一天不到, 一毫升)
    share_after: re.Pattern[str]  # a share named right after an amount ("a ml", "per use", /天)


def _buys(at: Around) -> bool:
    """Whether a number is a number of items an amount right after it is the price of
    ("3 of them come to $74.97", 两件258元)."""
    return _claim_words().bundle_after.match(at.r.norm, at.q.span[1]) is not None


def bundle_count(before: str) -> int | None:
    """The number of items an amount right after ``before`` is the price of ("3 bottles
    come to", "two for", 拍两件就是), or ``None``; a number of 2 to 20 only."""
    m = _claim_words().bundle_before.search(before)
    return _whole_number(m["n"], 20) if m is not None else None


def _whole_number(raw: str, most: int) -> int | None:
    """The number ``raw`` says (figures, an English number word or Chinese numerals), when
    it is a whole number from 2 to ``most`` (a count of things), else ``None``."""
    n = reading_words().numbers.words.get(raw) if raw.isascii() and raw.isalpha() else \
        float(raw) if raw.isdigit() else cn_to_number(raw)
    return int(n) if n is not None and n == int(n) and 2 <= n <= most else None


@cache
def _claim_words() -> _ClaimPatterns:
    """The patterns of the phrasebooks' ``reading.claims`` words (built on first use)."""
    w = reading_words().claims
    latin = re.compile(r"[a-z]+")

    def alt(words, left: str = "", right: str = "") -> str:
        """Longest first; a word of Latin letters only with the boundaries given."""
        return "|".join(left + x + right if latin.fullmatch(x) else re.escape(x)
                        for x in sorted(words, key=len, reverse=True))

    efficacy, rate, linking = alt(w.efficacy), alt(w.rate), alt(w.linking)
    denied, units = alt(w.denied, r"\b", r"\b"), alt(w.spec_units, right=r"\b")
    a, numbers = reading_words().amounts, reading_words().numbers
    items, links = alt(a.bundle_items, right=r"\b"), alt(a.bundle_links, r"\b", r"\b")
    spelled = alt(numbers.words, r"\b", r"\b")
    numeral = "".join((*numbers.digits, *numbers.multipliers))
    number = rf"(?P<n>(?<![\d.,])\d{{1,2}}|{spelled}|[{numeral}]{{1,3}})"
    stock = alt(numbers.stock_before, r"\b", r"\b")
    before, after = alt(numbers.money_before), alt(numbers.money_after, right=r"\b")
    one = alt((*a.bundle_items, *a.one_items), right=r"\b")
    each, alone = alt(a.each, r"\b", r"\b"), alt(a.each_after, r"\b", r"\b") or "(?!)"
    shares = alt(a.shares, right=r"\b") or "(?!)"
    return _ClaimPatterns(
        re.compile(rf"(?:{efficacy})\s?(?:{rate})?\s?(?:{linking})?\s?$"),
        re.compile(rf"(?:{denied})[^.,!?;，。！？；]{{0,24}}$"),
        re.compile(rf"\s?(?:{units})"),
        re.compile(rf"{number}\s?(?:(?:{items})\s?(?:{links})?|(?:{links}))\s?$"),
        re.compile(rf"\s?(?:{items})?\s?(?:{links})?\s?(?:(?:{before})\s?\d|(?:\d+(?:\.\d+)?|[{numeral}]+)\s?(?:{after}))"),
        re.compile(rf"(?:{stock})\s?$"),
        re.compile(rf"(?:{each})\s?(?:{one})\s?(?:{links})?\s?$"),
        re.compile(rf"\s?(?:/\s?(?:{one})|(?:{each})\s?(?:{one})|{alone})"),
        re.compile(rf"(?<![\d.])(\d{{1,3}})\s?-?\s?(?:{one})"),
        re.compile(rf"(?:{each})\s?(?:{shares})[^\d.,!?;，。！？；]{{0,4}}$"),
        re.compile(rf"\s?(?:/\s?(?:{shares})|(?:{each})\s?(?:{shares}))"),
    )


def of_share(norm: str, start: int, end: int) -> bool:
    """Whether the amount at ``norm[start:end]`` is said as the price of a share ("$2 a ml",
    "30 cents a use", 一天不到一块钱: see the phrasebook's ``shares``)."""
    w = _claim_words()
    return w.share_after.match(norm, end) is not None or w.share_before.search(norm, max(0, start - 12), start) is not None


_RANK = re.compile(r"(?:TOP|NO|NR)\d{1,2}")
_AMOUNT_CODE = re.compile(r"(?:USD|RMB|CNY)\d+")  # USD24.99 is an amount (read as one), not a code
#: What writes a number as a rank: #1, No.1, 第1, top 1, number 1, T O P 1.
_RANK_BEFORE = re.compile(r"(?:#|第|(?<![a-z])(?:n ?o ?\.|t ?o ?p|number)) ?$")


def _code_claims(reply: str, r: ReplyLayout, market: Market, fallback: str) -> list[Claim]:
    claims = []
    found = code_tokens(reply)
    if not found:
        return claims  # (most replies hold no upper-case token)
    tokens = r.index.tokens
    for code in dict.fromkeys(found):
        if code in tokens or not any(ch.isdigit() for ch in code) and code not in market.coupons \
                and code not in market.expired_codes or (_RANK.fullmatch(code) or _AMOUNT_CODE.fullmatch(code)) \
                and code not in market.coupons:
            continue  # TOP1 / NO1 is a rank (the compliance rules' business), USD24 an amount
        at = r.norm.find(code.lower())
        pid = r.product_at(at, fallback) if at >= 0 else fallback
        coupon = market.coupons.get(code)
        if coupon is not None:
            verdict = _verdict(not coupon.products or pid in coupon.products)
        else:
            verdict = V.OUTDATED if code in market.expired_codes else V.INVENTED
        claims.append(Claim(K.COUPON, code, verdict, pid))
    return claims
