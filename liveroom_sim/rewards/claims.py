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
from typing import NamedTuple

from liveroom_sim.rewards.catalog_index import (
    PHRASE,
    VOCAB,
    code_tokens,
    CatalogIndex,
    catalog_index,
    trie_pattern,
)
from liveroom_sim.rewards.cues import HOUR_CUES, cue, money_cue_before
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.facts import NEGATED_AFTER, NEGATION, occurrences
from liveroom_sim.world.market import Market, apply_coupon
from liveroom_sim.world.text import Quantity, iter_quantities

# Clause boundaries: sentence marks, and commas or full stops that are not inside a number.
_BOUNDARY = re.compile(r"[!?;\n！？；。]|[.,](?!\d)|(?<!\d)[.,]")
_MARK = re.compile(r"[!?;\n！？；。.,]")  # the same marks, by a class the engine skips to
_SENTENCE = re.compile(r"[!?;\n！？；。]|\.(?!\d)")
MAX_CLAIMS = 64

#: Which canonical tool returns each attribute (tool rationality and support).
TOOL_FOR = {
    "price": "get_price_stock", "list_price": "get_price_stock", "old_price": "get_price_stock", "price_after_coupon": "get_price_stock",
    "percent_off": "get_price_stock", "stock": "get_price_stock", "sold_out": "get_price_stock",
    "in_stock": "get_price_stock", "coupon": "get_promotions", "coupon_value": "get_promotions",
    "shipping_fee": "get_policy", "free_shipping": "get_policy", "ships_within": "get_policy",
    "returns": "get_policy", "warranty": "get_policy", "duration": "get_policy",
    "shelf_life": "get_product", "battery": "get_product", "size": "get_product",
    "allergen": "get_product", "ingredient": "get_product", "pregnancy": "get_product",
    "eta": "get_order_status",
}
# Attributes that more than one tool returns.
_ALSO = {"warranty": ("get_product",), "duration": ("get_product",), "coupon_value": ("get_price_stock",),
         "price_after_coupon": ("get_promotions",)}

#: Each attribute's tools: the main one, then the others that also return it.
_TOOLS = {kind: (main, *_ALSO.get(kind, ())) for kind, main in TOOL_FOR.items()}

_PAST_CUES = ("was", "used to be", "before", "之前", "原来", "以前是")
_DISCOUNT_CUES = (" off", "discount", "折", "优惠", "减")
_SIZE_CUES = ("size", "码", "尺码", "waist")
_CONTAINS_CUES = ("contain", "has ", "have ", "made with", "含", "有")
_CONTAINS = re.compile("|".join(map(re.escape, _CONTAINS_CUES)))  # any of them, in one search
# Every match of facts.NEGATION holds one of these: a text without any cannot negate (a
# search for them skips ahead; NEGATION, anchored at the end, is tried at every position).
_MAY_NEGATE = re.compile(r"no|never|isn't|aren't|doesn't|don't|without|zero|不|没|未|无|非")


class Claim(NamedTuple):
    """One checkable statement of a reply."""

    kind: str
    said: str
    verdict: str
    product: str | None = None
    value: float | None = None
    dim: str | None = None

    @property
    def tools(self) -> tuple[str, ...]:
        """The canonical tools whose result states this claim's attribute."""
        return _TOOLS.get(self.kind, ())


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
    order_eta = None
    if order is not None:
        days = market.catalog.order(order).eta_days
        order_eta = (order, days * 24.0) if days is not None else None
    norm = reading.norm
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
        c = _number_claim(q, reading, market, fallback, order_eta)
        if c is not None:
            claims.append(c)
    claims += _code_claims(reply, reading, market, fallback)
    claims += _term_claims(reading, market, fallback, words)
    if lookups is not None:
        claims = [_supported(c, lookups) for c in claims]
    return claims, found


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
                else None) or money_cue_before(before, s, r.norm, r.mentions) or "price"
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
        index = r.index
        discount = any(c in before + said + after for c in _DISCOUNT_CUES)  # 打2折 is a discount
        if not discount and v in index.percents[pid]:
            return Claim("size", said, "correct", pid, v, "size")
        return Claim("percent_off", said, "correct" if _near(v, _discounts(pid, market), 0.5) else "invented", pid, v,
                     "percent_off")
    if dim == "hours":
        kind = cue(before + " " + after, HOUR_CUES)
        if order_eta is not None and (kind in ("eta", None) or abs(v - order_eta[1]) < 0.01):
            return Claim("eta", said, "correct" if abs(v - order_eta[1]) < 0.01 else "invented", order_eta[0], v, "hours")
        index = r.index
        durations = index.durations[pid]
        truth = {durations[kind]} if kind in durations else (set() if kind else set(durations.values()))
        # The spec sheet's own wording ("8 h per charge") only backs a battery time or a
        # duration of no named attribute: a ship time, return window, warranty or shelf
        # life is one catalog field, so a spec number (12 h battery, 30 ml) is no proof.
        if _near(v, truth, 0.01) or (kind in (None, "battery") and _leading_number(said) in index.numbers[pid]):
            return Claim(kind or "duration", said, "correct", pid, v, "hours")  # or as the spec sheet says it
        return Claim(kind or "duration", said, "invented", pid, v, "hours")
    if dim == "count":
        truth = {float(market.stock[pid])}
        if pid in market.flash and market.flash[pid][1] is not None:
            truth.add(float(market.flash[pid][1]))
        return Claim("stock", said, "correct" if v in truth else "invented", pid, v, "count")
    numbers = r.index.numbers[pid]
    return Claim("size", said, "correct" if _near(v, numbers, 0.01) else "invented", pid, v, "size")


def _leading_number(said: str) -> float | None:
    m = re.search(r"\d+(?:\.\d+)?", said)
    return float(m.group(0)) if m else None


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
#: What writes a number as a rank: #1, No.1, 第1, top 1, number 1, T O P 1.
_RANK_BEFORE = re.compile(r"(?:#|第|(?<![a-z])(?:n ?o ?\.|t ?o ?p|number)) ?$")


def _code_claims(reply: str, r: Reading, market: Market, fallback: str) -> list[Claim]:
    claims = []
    tokens = r.index.tokens
    for code in dict.fromkeys(code_tokens(reply)):
        if code in tokens or not any(ch.isdigit() for ch in code) and code not in market.coupons \
                and code not in market.expired_codes or _RANK.fullmatch(code) and code not in market.coupons:
            continue  # TOP1 / NO1 is a rank: the compliance rules' business
        at = r.norm.find(code.lower())
        pid = r.product_at(at, fallback) if at >= 0 else fallback
        coupon = market.coupons.get(code)
        if coupon is not None:
            verdict = "correct" if not coupon.products or pid in coupon.products else "invented"
        else:
            verdict = "outdated" if code in market.expired_codes else "invented"
        claims.append(Claim("coupon", code, verdict, pid))
    return claims


#: The term claims of fixed phrases: phrasebook key, claim kind, and whether it holds of a
#: product now. Longer, negative forms first, so that "not pregnancy-safe" is not also
#: read as "pregnancy-safe".
_TERMS = (
    ("pregnancy_unsafe", "pregnancy", lambda p, market: not getattr(p, "pregnancy_safe", True)),
    ("pregnancy_safe", "pregnancy", lambda p, market: bool(getattr(p, "pregnancy_safe", False))),
    ("no_allergens", "allergen", lambda p, market: not getattr(p, "allergens", None)),
    ("sold_out", "sold_out", lambda p, market: market.stock[p.id] == 0),
    ("in_stock", "in_stock", lambda p, market: market.stock[p.id] > 0),
    ("free_shipping", "free_shipping", lambda p, market: p.shipping.fee == 0),
)


def _term_claims(r: Reading, market: Market, fallback: str, words) -> list[Claim]:
    norm, claims = r.norm, []
    index = r.index
    # One scan tells which passes below can find anything (see CatalogIndex.terms):
    # most replies state no such fact.
    found = set().union(*index.terms(words).present(norm))
    if PHRASE not in found and VOCAB not in found:
        return claims
    taken: set[int] = set()  # positions already read as part of a claim

    def spans(key):
        for w in words.get(key, ()):
            for s, e, neg in occurrences(norm, w):
                if len(claims) >= MAX_CLAIMS:
                    return
                if s not in taken:
                    taken.update(range(s, e))
                    yield s, w, neg

    p = market.catalog.by_id
    for key, kind, truth in _TERMS if PHRASE in found else ():
        if key not in found:
            continue  # none of its phrases is in the text
        for s, w, neg in spans(key):
            pid = r.product_at(s, fallback)
            if key.startswith("pregnancy") and getattr(p[pid], "pregnancy_safe", None) is None:
                continue
            if key == "no_allergens" and not hasattr(p[pid], "allergens"):
                continue
            holds = truth(p[pid], market)
            said = ("not " if neg else "") + w
            claims.append(Claim(kind, said, "correct" if holds != neg else "invented", pid))
    if VOCAB not in found:
        return claims  # no allergen or ingredient named
    for vocab, attr, kind in ((index.allergen_words, index.allergens, "allergen"),
                              (index.ingredient_words, index.ingredients, "ingredient")):
        if vocab is None:
            continue
        for seen, m in enumerate(vocab.finditer(norm)):
            if len(claims) >= MAX_CLAIMS or seen >= 4 * MAX_CLAIMS:
                break  # a reply is read up to MAX_CLAIMS statements
            if m.start() in taken:
                continue
            before = norm[max(0, m.start() - 40):m.start()]
            cut = list(_SENTENCE.finditer(before))
            before = before[cut[-1].end():] if cut else before
            neg = bool(_MAY_NEGATE.search(before) and NEGATION.search(before)) or \
                bool(NEGATED_AFTER.match(norm[m.end():m.end() + 9]))
            if not neg and not _CONTAINS.search(before) and "," not in before[-3:]:
                continue  # named, not claimed ("for a nut allergy")
            pid = r.product_at(m.start(), fallback)
            if kind == "allergen" and not hasattr(p[pid], "allergens") or \
                    kind == "ingredient" and not hasattr(p[pid], "ingredients"):
                continue
            word = m.group(0)
            has = any(word == a or word in a or a in word for a in attr[pid])
            claims.append(Claim(kind, ("no " if neg else "") + word, "correct" if has != neg else "invented", pid))
            taken.update(range(m.start(), m.end()))
    return claims
