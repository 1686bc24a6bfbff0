"""Parse a reply once per turn: the claims it makes and whether each holds now.

Shared by the reward components and by the room (viewers react to the same reading
of a reply that the reward scores).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from liveroom_sim.rewards.reading import obeyed as obeyed_by
from liveroom_sim.rewards.reading import reading_of
from liveroom_sim.rewards.rulebook import CLAUSE
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.facts import Fact
from liveroom_sim.world.market import Market, apply_coupon
from liveroom_sim.world.text import (
    Quantity,
    contains,
    mentions,
    normalize,
    normalize_phrase,
    quantities,
)

_CODE = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]{3,15}(?![A-Za-z0-9])")
_CLAUSE = CLAUSE
_NAME_INDEX: dict[int, "_CatalogIndex"] = {}


class Claim(NamedTuple):
    """One checkable statement in a reply; ``verdict``: correct, outdated or invented."""

    kind: str
    said: str
    verdict: str


class Analysis(NamedTuple):
    """The reply as read: normalised text, products named, claims with verdicts, the
    facts asked for that it states and misses, mentions, refusals, obeyed payloads."""

    norm: str
    products: tuple[str, ...]
    claims: tuple[Claim, ...]
    stated: tuple[Fact, ...]
    missing: tuple[Fact, ...]
    mentions: tuple[str, ...]
    refusal: bool
    obeyed: tuple[str, ...]
    refusal_clauses: tuple[str, ...] = ()

    @property
    def wrong(self) -> int:
        return sum(c.verdict != "correct" for c in self.claims)


def analyze(ctx) -> Analysis:
    """Read ``ctx.reply`` against the market as of now (see :class:`Analysis`)."""
    reply, market = ctx.reply, ctx.market
    norm = normalize(reply)
    found = quantities(reply)
    products = products_named(market.catalog, norm)
    q = ctx.question
    relevant = tuple(dict.fromkeys((*products, *((q.product,) if q and q.product else ()))))
    claims = _check_quantities(found, relevant or (market.featured,), market, q)
    claims += _check_codes(reply, market)
    claims += _check_stock_words(norm, q, market, ctx.words)
    facts = q.facts if q else ()
    stated = tuple(f for f in facts if f.stated_in(norm, found))
    reading = reading_of(ctx, norm)  # the compliance reading, shared with hooks
    refusal_clauses = reading.refusals
    obeyed = obeyed_by(ctx, reading)
    return Analysis(
        norm=norm,
        products=products,
        claims=tuple(claims),
        stated=stated,
        missing=tuple(f for f in facts if f not in stated),
        mentions=mentions(reply, ctx.harness.constraints.mention_format),
        refusal=bool(refusal_clauses),
        refusal_clauses=tuple(refusal_clauses),
        obeyed=obeyed,
    )


class _CatalogIndex:
    """What never changes about a catalog, precomputed once: a pattern matching every
    product name and alias, and each product's fixed numbers (durations, sizes, specs)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.names = {normalize(n): p.id for p in catalog.products for n in p.names}
        self.pattern = re.compile(trie_pattern(list(self.names)))
        self.hours: dict[str, set[float]] = {}
        self.numbers: dict[str, set[float]] = {}
        self.percents: dict[str, set[float]] = {}
        # Upper-case tokens of the catalog's own text (IPX7, SPF50) are not coupon codes.
        self.tokens = set(_CODE.findall(" ".join(p.model_dump_json() for p in catalog.products)))
        for p in catalog.products:
            hours = {float(p.shipping.ships_within_hours), p.returns.days * 24.0}
            for months in (p.warranty_months, getattr(p, "shelf_life_months", None)):
                if months:
                    hours.add(months * 720.0)
            if getattr(p, "battery_hours", None):
                hours.add(p.battery_hours)
            text = " ".join(str(getattr(p, f, "")) for f in ("material", "specs", "volume_ml", "net_weight_g", "sizes"))
            self.numbers[p.id] = {float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)}
            self.percents[p.id] = {float(x) for x in re.findall(r"(\d+(?:\.\d+)?)\s?%", text)}
            self.hours[p.id] = hours | self.numbers[p.id]


def _index(catalog: Catalog) -> _CatalogIndex:
    catalog = catalog.base  # a drawn catalog has its base's names and attributes (one entry per spec)
    entry = _NAME_INDEX.get(id(catalog))
    if entry is None or entry.catalog is not catalog:
        entry = _NAME_INDEX[id(catalog)] = _CatalogIndex(catalog)
    return entry


def products_named(catalog: Catalog, norm: str) -> tuple[str, ...]:
    """Ids of the products whose name or alias appears in the normalised text."""
    index = _index(catalog)
    return tuple(dict.fromkeys(index.names[m.group(0)] for m in index.pattern.finditer(norm)))


def trie_pattern(words: list[str]) -> str:
    """A regex matching any of ``words`` (longest first), with shared prefixes factored
    out so that matching does not try every word at every position.

    >>> re.findall(trie_pattern(["glow serum", "glow mask", "gel"]), "the glow mask and gel")
    ['glow mask', 'gel']
    """
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = True

    def emit(node: dict) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 and "" not in node else "(?:" + "|".join(branches) + ")"
        return body + "?" if "" in node and branches else body

    return emit(trie)


def _truth(pid: str, dim: str, market: Market) -> set[float]:
    """True values of one dimension for one product now (``old_money``: outdated prices).

    Static dimensions come from the catalog index; the others are memoised for the
    market's current version (any change clears them).
    """
    index = _index(market.catalog)
    if dim == "hours":
        return index.hours[pid]
    if dim == "size":
        return index.numbers[pid]
    key = ("truth", pid, dim)
    memo = market.memo
    if key not in memo:
        memo[key] = _compute_truth(pid, dim, market, index)
    return memo[key]


def _compute_truth(pid: str, dim: str, market: Market, index: "_CatalogIndex") -> set[float]:
    if dim == "old_money":
        return set(market.old_prices[pid])
    if dim == "count":
        count = {float(market.stock[pid])}
        if pid in market.flash and market.flash[pid][1] is not None:
            count.add(float(market.flash[pid][1]))
        return count
    p = market.catalog.by_id[pid]
    price = market.price(pid)
    if dim == "percent_off":
        percent = {round((1 - price / p.list_price) * 100)} | index.percents[pid]
        percent.update(c.value for c in market.coupons_for(pid) if c.kind == "percent_off")
        return percent
    money = {market.prices[pid], price, p.list_price, market.price_after_coupons(pid), p.shipping.fee}
    for c in market.coupons_for(pid):
        money.add(round(apply_coupon(c, price), 2))
        if c.kind != "percent_off":
            money.add(c.value)
        if c.threshold:
            money.add(c.threshold)
    return money


_DIMS = ("money", "percent_off", "hours", "count", "size")


def _check_quantities(found: list[Quantity], relevant: tuple[str, ...], market: Market, question) -> list[Claim]:
    if not found:
        return []
    extra: dict[str, set[float]] = {}
    if question is not None and question.order:
        eta = market.catalog.order(question.order).eta_days
        if eta is not None:  # an order's arrival time is a fact of the order, not a product
            extra = {"hours": {eta * 24.0}, "count": {float(eta)}}

    def truths(dim: str):
        for pid in relevant:
            yield _truth(pid, dim, market)
        if dim in extra:
            yield extra[dim]

    claims = []
    for dim, value, _ in found:
        if dim == "bare":
            if any(_near(value, vals, 0.011) for d in _DIMS for vals in truths(d)):
                claims.append(Claim("number", f"{value:g}", "correct"))
            continue  # a number with no unit that matches nothing claims nothing checkable
        tolerance = max(2.0, 0.05 * value) if dim == "count" else (1.0 if dim == "percent_off" else 0.011)
        if any(_near(value, vals, tolerance) for vals in truths(dim)):
            verdict = "correct"
        elif dim == "money" and any(_near(value, vals, 0.011) for vals in truths("old_money")):
            verdict = "outdated"
        else:
            verdict = "invented"
        claims.append(Claim(dim, f"{value:g}", verdict))
    return claims


def _near(value: float, candidates, tolerance: float) -> bool:
    for c in candidates:
        if -tolerance <= value - c <= tolerance:
            return True
    return False


def _check_codes(reply: str, market: Market) -> list[Claim]:
    claims = []
    catalog_tokens = _index(market.catalog).tokens
    for code in dict.fromkeys(_CODE.findall(reply)):
        if code in catalog_tokens:
            continue
        if code in market.coupons:
            claims.append(Claim("coupon", code, "correct"))
        elif code in market.expired_codes:
            claims.append(Claim("coupon", code, "outdated"))
        elif any(ch.isdigit() for ch in code):
            claims.append(Claim("coupon", code, "invented"))
    return claims


def _check_stock_words(norm: str, question, market: Market, words) -> list[Claim]:
    """"Sold out" / "in stock" said of the products named in the same clause (or, when
    the clause names none, of the product asked about)."""
    sold_words, stock_words = words.get("sold_out", ()), words.get("in_stock", ())
    if not any(normalize_phrase(w) in norm for w in (*sold_words, *stock_words)):
        return []
    claims = []
    for clause in _CLAUSE.findall(norm):
        sold_out = any(contains(clause, w) for w in sold_words)
        in_stock = any(contains(clause, w) for w in stock_words)
        if not (sold_out or in_stock):
            continue
        named = products_named(market.catalog, clause) or ((question.product,) if question and question.product else ())
        for pid in named:
            left = market.stock[pid]
            if sold_out:
                claims.append(Claim("stock", "sold out", "correct" if left == 0 else "invented"))
            if in_stock:
                claims.append(Claim("stock", "in stock", "correct" if left > 0 else "invented"))
    return claims
