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

from liveroom_sim.rewards.catalog_index import CatalogIndex, catalog_index, code_tokens, trie_pattern
from liveroom_sim.rewards.claim import MAX_CLAIMS, Claim
from liveroom_sim.rewards.cues import HOUR_CUES, cue, money_cue_before
from liveroom_sim.rewards.orders import order_claims, orders_at
from liveroom_sim.rewards.terms import term_claims
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.market import Market, apply_coupon
from liveroom_sim.world.text import Quantity, iter_quantities

# Clause boundaries: sentence marks, and commas or full stops that are not inside a number.
_BOUNDARY = re.compile(r"[!?;\n！？；。]|[.,](?!\d)|(?<!\d)[.,]")
_MARK = re.compile(r"[!?;\n！？；。.,]")  # the same marks, by a class the engine skips to
_PAST_CUES = ("was", "used to be", "before", "went from", "down from", "dropped from", "之前", "原来", "以前是")
# Words after an amount that make it a price after a coupon ("$48 with code SAVE10"; not
# 用券 in Chinese: in 248元用券码X到手221元, 248 is the price).
_AFTER_COUPON = ("with code", "with the code", "with coupon", "with the coupon", "after the coupon")
_LIST_AFTER = ("list price", "original price", "regular price", "msrp", "原价", "划线价")  # "the $34.99 list price"
_LEADING = re.compile(r"\d+(?:\.\d+)?")  # the first number of a quantity as said ("8 h per charge": 8)
_DISCOUNT_CUES = (" off", "discount", "折", "优惠", "减")


class Reading:
    """Where things are in a normalised reply: product mentions and (found when first
    asked for) clause starts."""

    __slots__ = ("norm", "mentions", "ends", "index", "_starts")

    def __init__(self, norm: str, mentions: list[tuple[int, int, str]], index: "CatalogIndex"):
        self.norm, self.mentions, self.index = norm, mentions, index
        self.ends = [e for _, e, _ in mentions]
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            self._starts = clause_starts(self.norm)
        return self._starts

    def clause(self, pos: int) -> tuple[int, int]:
        starts = self.starts
        i = bisect.bisect_right(starts, pos) - 1
        end = starts[i + 1] if i + 1 < len(starts) else len(self.norm)
        return starts[i], end

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
    """0 and the end of each boundary ``_BOUNDARY`` finds (no look-behind tried at every
    position: the digits around a full stop or comma, as in 9.99 or 1,000, checked by hand)."""
    last, n = len(norm) - 1, norm
    return [0] + [m.end() for m in _MARK.finditer(n) if not (0 < (s := m.start()) < last and n[s] in ".,"
                                                             and n[s - 1].isdecimal() and n[s + 1].isdecimal())]


def read(catalog: Catalog, norm: str) -> Reading:
    index = catalog_index(catalog)
    return Reading(norm, index.named(norm), index)


def check_claims(reply: str, reading: Reading, market: Market, asked: str | None, order: str | None,
                 words: dict[str, tuple[str, ...]], lookups: frozenset | None) -> tuple[list[Claim], list[Quantity]]:
    """Every claim of the reply (see the module docstring), and the quantities found.

    Args:
        asked: The product the question is about, if any.
        order: The order the question is about, if any (its arrival time is its fact).
        lookups: ``(canonical tool, argument)`` pairs looked up this exchange, or ``None``.
    """
    norm = reading.norm
    order_of = orders_at(norm, market.catalog, order) if order is not None else None
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
        c = _number_claim(q, reading, market, fallback, order_of and _eta(market, order_of(s)))
        if c is not None and q.dim != "bare" and _may_hedge(norm, s) and (hedge := _hedged(norm, s, reading)):
            c = _hedged_claim(c, hedge, market)  # "not $30, it's $24.99", "under $30", 不到200元
        if c is not None:
            claims.append(c)
    claims += _code_claims(reply, reading, market, fallback)
    claims += term_claims(reading, market, fallback, words)
    if order is not None or any(h in norm for h in reading.index.order_heads):  # (most replies are about no order)
        claims += [Claim("order_status", w, "correct" if ok else "invented", oid, float(states),
                         ("not " if denied else "") + stage)
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
    if c.verdict != "correct":
        return c
    subject = c.product or ""
    for tool in c.tools:
        if (tool, subject) in lookups or (tool, "") in lookups:
            return c
    return c._replace(verdict="unsupported")


def _number_claim(q: Quantity, r: Reading, market: Market, fallback: str, order_eta) -> Claim | None:
    s, e = q.span
    norm = r.norm
    clause = cs, ce = r.clause(s)
    before, after = norm[max(cs, s - 60):s], norm[e:min(ce, e + 16)]
    pid = r.product_at(s, fallback, clause)
    said = norm[s:e].strip()
    v, dim = q.value, q.dim
    if dim == "bare":
        if _RANK_BEFORE.search(before):
            return None  # a rank ("#1", 第一) is the compliance rules' business, not a fact
        if before.rstrip().endswith(("满", "减", "spend", "over")):
            # 满200减30: a spend-save coupon's threshold and value, written without a unit.
            truth = _money_truth(pid, "coupon_value", market)
            return Claim("coupon_value", said, "correct" if _near(v, truth, 0.006) else "invented", pid, v, "money")
        # A number the catalog states of this product with a unit of its own (5 ATM,
        # Bluetooth 5.3, sizes 26-34) is a spec; any other bare number is no claim a
        # viewer can rely on ("it's 24.99": dollars? a discount?).
        if v in r.index.numbers[pid]:
            return Claim("size", said, "correct", pid, v, "size")
        return Claim("number", said, "unitless", pid, v, "bare")
    if dim == "money":
        if before.rstrip().endswith(_PAST_CUES):
            # "was $24.99", 之前129元: the price before a change, true if it was one.
            was = set(market.old_prices[pid]) | {market.catalog.by_id[pid].list_price}
            return Claim("old_price", said, "correct" if _near(v, was, 0.006) else "invented", pid, v, "money")
        tail = after.lstrip()
        kind = ("coupon_value" if tail.startswith("off") else "shipping_fee" if tail.startswith(("shipping", "运费"))
                else "price_after_coupon" if tail.startswith(_AFTER_COUPON)
                else "list_price" if tail.startswith(_LIST_AFTER) else None) \
            or money_cue_before(before, s, r.norm, r.mentions) or "price"
        currency = q.currency
        if currency and currency != market.catalog.currency:
            return Claim(kind, said, "wrong_currency", pid, v, "money")
        truth = _money_truth(pid, kind, market)
        if _near(v, truth, 0.006):
            return Claim(kind, said, "correct", pid, v, "money")
        if kind == "price" and _near(v, _money_truth(pid, "price_after_coupon", market), 0.006):
            return Claim("price_after_coupon", said, "correct", pid, v, "money")
        verdict = "outdated" if _near(v, market.old_prices[pid], 0.006) else "invented"
        return Claim(kind, said, verdict, pid, v, "money")
    if dim == "percent_off":
        efficacy = _EFFICACY_AFTER.match(norm, e) or _EFFICACY_BEFORE.search(before)
        if efficacy:
            # "100% effective", 百分百有效, 有效率95%: no catalog states an efficacy rate, so
            # none is true (and a denial or refusal of one claims nothing).
            if _DENIED_BEFORE.search(before):
                return None
            return Claim("efficacy", norm[s:max(e, efficacy.end() if efficacy.re is _EFFICACY_AFTER else e)].strip(),
                         "invented", pid, v, "percent")
        index = r.index
        discount = any(c in before + said + after for c in _DISCOUNT_CUES)  # 打2折 is a discount
        if not discount and v in index.percents[pid]:
            return Claim("size", said, "correct", pid, v, "size")
        return Claim("percent_off", said, "correct" if _near(v, _discounts(pid, market), 0.5) else "invented", pid, v,
                     "percent_off")
    if dim == "hours":
        kind = cue(before + " " + after, HOUR_CUES)
        if kind is None and (v < 1 or q.spelled) and order_eta is None:
            # "30 minutes left", 30分钟后涨价: a countdown; "one day you'll love it": a way of
            # speaking. Neither is a product's duration.
            return None
        if order_eta is not None and (kind in ("eta", None) or abs(v - order_eta[1]) < 0.01):
            return Claim("eta", said, "correct" if abs(v - order_eta[1]) < 0.01 else "invented", order_eta[0], v, "hours")
        index = r.index
        durations = index.durations[pid]
        truth = {durations[kind]} if kind in durations else (set() if kind else set(durations.values()))
        # The spec sheet's own wording ("8 h per charge") only backs a battery time or a
        # duration of no named attribute: a ship time, return window, warranty or shelf
        # life is one catalog field, so a spec number (12 h battery, 30 ml) is no proof.
        if _near(v, truth, 0.01) or (kind in (None, "battery") and (m := _LEADING.search(said)) is not None
                                     and float(m[0]) in index.numbers[pid]):
            return Claim(kind or "duration", said, "correct", pid, v, "hours")  # or as the spec sheet says it
        return Claim(kind or "duration", said, "invented", pid, v, "hours")
    if dim == "count":
        truth = {float(market.stock[pid])}
        if pid in market.flash and market.flash[pid][1] is not None:
            truth.add(float(market.flash[pid][1]))
        return Claim("stock", said, "correct" if v in truth else "invented", pid, v, "count")
    numbers = r.index.numbers[pid]
    return Claim("size", said, "correct" if _near(v, numbers, 0.01) else "invented", pid, v, "size")


#: Words that make a percentage an efficacy rate: after it ("100% effective", 百分百有效),
#: or before it ("success rate of 95%", 有效率95%).
_EFFICACY_AFTER = re.compile(r"\s?(?:effective|effectiveness|efficacy|success|guaranteed to work|works\b|results\b"
                             r"|有效|见效|管用|起效|成功率)")
_EFFICACY_BEFORE = re.compile(r"(?:effective|success|efficacy|cure|有效|见效|治愈|成功)\s?(?:rate|率)?\s?(?:of|is|达到?|高达|是|为)?\s?$")
_DENIED_BEFORE = re.compile(r"(?:\b(?:not|never|no)\b|n't|不|没|无法)[^.,!?;，。！？；]{0,24}$")


_DENYING = frozenset({"not", "never", "isn't", "aren't", "wasn't", "won't", "doesn't", "don't", "ain't"})
_FILLERS = frozenset({"be", "been", "at", "even", "cost", "costs", "priced", "for"})  # "not even $30", "isn't priced at"
_ZH_DENYING = ("不是", "不要", "并非", "不再是", "不再", "不卖")
_ZH_BELOW = ("不到", "低于", "少于", "不超过", "不高于")  # (before _ZH_ABOVE: 不超过 ends with 超过)
_ZH_ABOVE = ("超过", "高于", "多于", "至少")
_HEDGE_ENDS = _DENYING | _FILLERS | {"longer", "under", "below", "over", "above", "than", "most", "least"}
_ZH_HEDGES = _ZH_DENYING + _ZH_BELOW + _ZH_ABOVE


def _may_hedge(norm: str, s: int) -> bool:
    """Whether the last word before the amount at ``s`` may deny or bound it (nearly every
    amount's does not: this is asked first, cheaply)."""
    tail = norm[max(0, s - 32):s].rstrip()
    return tail.endswith(_ZH_HEDGES) or tail[tail.rfind(" ") + 1:] in _HEDGE_ENDS


def _hedged(norm: str, s: int, r: Reading) -> str | None:
    """``denied`` when the words right before the amount at ``s`` deny it ("not $30",
    "no longer $30", 不要199元), ``below`` or ``above`` when they make it a bound ("under
    $30", "no more than", 不到200元; "over $20", "at least", 超过), else ``None``. (Read word
    by word from the amount back: no pattern tried at every position, for every amount.)"""
    start = max(0, s - 32)
    tail = norm[start:s].rstrip()
    tail = tail[max(0, r.clause(s)[0] - start):]
    for ends, hedge in ((_ZH_DENYING, "denied"), (_ZH_BELOW, "below"), (_ZH_ABOVE, "above")):
        if tail.endswith(ends):
            return hedge
    words = tail.rsplit(None, 6)
    while words and words[-1] in _FILLERS:
        words.pop()
    if not words:
        return None
    last, word_before = words[-1], words[-2] if len(words) > 1 else ""
    if last in _DENYING or last == "longer" and word_before == "no":
        return "denied"
    if last in ("under", "below") or last == "most" and word_before == "at":
        return "below"
    if last in ("over", "above") or last == "least" and word_before == "at":
        return "above"
    if last == "than" and word_before in ("less", "cheaper", "fewer", "more"):
        below = word_before != "more"
        if len(words) > 2 and words[-3] in ("no", "not"):  # "no more than", "not less than"
            below = not below
        return "below" if below else "above"
    return None


def _hedged_claim(c: Claim, hedge: str, market: Market) -> Claim | None:
    """``c`` read again as denied or as a bound. Denying the true amount ("it isn't $24.99")
    is false and a true denial states nothing; a price bound is true or false of the price
    ("under $10" of a $22.99 serum misleads) and states no price; any other bound states
    nothing."""
    if hedge == "denied":
        return c._replace(verdict="invented", said="not " + c.said) if c.verdict == "correct" else None
    if c.kind != "price" or c.verdict not in ("correct", "invented", "outdated"):
        return None
    truth, v = _money_truth(c.product, "price", market), c.value
    meets = any(t <= v + 0.006 for t in truth) if hedge == "below" else any(t >= v - 0.006 for t in truth)
    return c._replace(verdict="correct" if meets else "invented", dim="bound")


def _near(value: float, candidates, tolerance: float) -> bool:
    for c in candidates:
        if -tolerance <= value - c <= tolerance:
            return True
    return False


def _money_truth(pid: str, kind: str, market: Market) -> set[float]:
    """True money values of one attribute of one product now (memoised per market version)."""
    key = ("money", pid, kind)
    memo = market.memo
    if key in memo:
        return memo[key]
    p = market.catalog.by_id[pid]
    price = market.price(pid)
    coupons = market.coupons_for(pid)
    if kind == "list_price":
        truth = {p.list_price}
    elif kind == "shipping_fee":
        truth = {p.shipping.fee}
    elif kind == "coupon_value":
        truth = {c.value for c in coupons if c.kind != "percent_off"} | {c.threshold for c in coupons if c.threshold}
        if p.list_price > price:  # "save $10": also the saving against the list price (as in _discounts)
            truth.add(round(p.list_price - price, 2))
    elif kind == "price_after_coupon":
        truth = {round(apply_coupon(c, price), 2) for c in coupons} | {market.price_after_coupons(pid)}
    else:
        truth = {price}
    memo[key] = truth
    return truth


def _discounts(pid: str, market: Market) -> set[float]:
    key = ("discounts", pid)
    memo = market.memo
    if key not in memo:
        p = market.catalog.by_id[pid]
        price = market.price(pid)
        out = {c.value for c in market.coupons_for(pid) if c.kind == "percent_off"}
        if p.list_price > price:
            out.add(round((1 - price / p.list_price) * 100))
            out.add((1 - price / p.list_price) * 100)
        memo[key] = out
    return memo[key]


_RANK = re.compile(r"(?:TOP|NO|NR)\d{1,2}")
_AMOUNT_CODE = re.compile(r"(?:USD|RMB|CNY)\d+")  # USD24.99 is an amount (read as one), not a code
#: What writes a number as a rank: #1, No.1, 第1, top 1, number 1, T O P 1.
_RANK_BEFORE = re.compile(r"(?:#|第|(?<![a-z])(?:n ?o ?\.|t ?o ?p|number)) ?$")


def _code_claims(reply: str, r: Reading, market: Market, fallback: str) -> list[Claim]:
    claims = []
    tokens = r.index.tokens
    for code in dict.fromkeys(code_tokens(reply)):
        if code in tokens or not any(ch.isdigit() for ch in code) and code not in market.coupons \
                and code not in market.expired_codes or (_RANK.fullmatch(code) or _AMOUNT_CODE.fullmatch(code)) \
                and code not in market.coupons:
            continue  # TOP1 / NO1 is a rank (the compliance rules' business), USD24 an amount
        at = r.norm.find(code.lower())
        pid = r.product_at(at, fallback) if at >= 0 else fallback
        coupon = market.coupons.get(code)
        if coupon is not None:
            verdict = "correct" if not coupon.products or pid in coupon.products else "invented"
        else:
            verdict = "outdated" if code in market.expired_codes else "invented"
        claims.append(Claim("coupon", code, verdict, pid))
    return claims
