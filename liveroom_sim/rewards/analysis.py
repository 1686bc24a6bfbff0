"""Parse a reply once per turn: the claims it makes and whether each holds now.

Shared by the reward components and by the room (viewers react to the same reading
of a reply that the reward scores).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from liveroom_sim.rewards.reading import RuleReading, read_reply
from liveroom_sim.rewards.reading import obeyed as obeyed_by
from liveroom_sim.rewards.claim import FACT_VERDICTS, STATED_TOLERANCE, TRUE_VERDICTS, ClaimKind, Verdict
from liveroom_sim.rewards.claims import Claim, catalog_index, check_claims, read, trie_pattern
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.facts import Fact
from liveroom_sim.world.text import (
    Quantity,
    line_starts,
    mention_pattern,
    mentions,
    normalize,
)

__all__ = ["Analysis", "Claim", "TRUE_VERDICTS", "addresses", "analyze", "products_named", "trie_pattern"]


class Analysis(NamedTuple):
    """The reply as read: normalised text, products named, claims with verdicts, the
    facts asked for that it states and misses, mentions, refusals, obeyed payloads, and
    the compliance rules' reading of it (shared with the hooks)."""

    norm: str
    products: tuple[str, ...]
    claims: tuple[Claim, ...]
    stated: tuple[Fact, ...]
    missing: tuple[Fact, ...]
    mentions: tuple[str, ...]
    refusal: bool
    obeyed: tuple[str, ...]
    refusal_clauses: tuple[str, ...] = ()
    addressed: bool = False
    found: tuple[Quantity, ...] = ()
    rules: RuleReading | None = None
    subjects: tuple[str, ...] = ()  # the products it says something about (see subjects_of)

    @property
    def wrong(self) -> int:
        """Claims a viewer would be misled by (false, outdated, in the wrong currency or
        without a unit); an unsupported but true claim does not mislead."""
        return sum(c.verdict not in TRUE_VERDICTS for c in self.claims)

    @property
    def share(self) -> float:
        """The share of the facts asked for that the reply states (0 when none were asked)."""
        n = len(self.stated) + len(self.missing)
        return len(self.stated) / n if n else 0.0


def analyze(ctx) -> Analysis:
    """Read ``ctx.reply`` against the market as of now (see :class:`Analysis`)."""
    reply, market, q = ctx.reply, ctx.market, ctx.question
    norm = normalize(reply)
    # Viewer names are not claims: "@dealdiva_222" states no number, "@满减计算器" no coupon.
    fmt = ctx.harness.constraints.mention_format
    mark = _mention_mark(fmt)
    bare = heard = norm
    handles = []
    if mark in norm:
        handles = list(mention_pattern(fmt).finditer(norm))
        bare = _blanked(norm, [m.span() for m in handles])
        # The compliance reading blanks the asker's handle ("@企鹅要减肥" claims no slimming)
        # and the opening one, its addressee's whether or not that viewer still waits
        # ("<@小熊要减肥> 每日坚果现在117.90元" to a viewer answered before); any other
        # "@name" is read as said (a policy could hide a claim in one).
        asker = q.asker if q is not None else None
        kept = [m.span() for i, m in enumerate(handles) if m.group(1) == asker or i == 0 and not norm[:m.start()].strip()]
        heard = bare if len(kept) == len(handles) else _blanked(norm, kept)  # (most often the one mention, the asker's)
    reading = read(market.catalog, bare, line_starts(reply, norm))
    products = tuple(dict.fromkeys([pid for _, _, pid in reading.mentions])) if reading.mentions else ()
    claims, found = check_claims(reply, reading, market, q.product if q else None, q.order if q else None, ctx.words,
                                 ctx.lookups)
    facts = q.facts if q else ()
    stated = tuple([f for f in facts if _states(f, q, reading, claims)]) if facts else ()
    # (every mention holds the format's text before the name: a reply without it has none;
    # a reply that normalises to itself in lower case holds its mentions where its
    # normalised text does, and the pattern reads no case)
    if mark not in reply:
        said_to = ()
    elif reply.isascii() and norm == reply.lower():
        said_to = tuple([reply[m.start(1):m.end(1)] for m in handles])
    else:
        said_to = mentions(reply, fmt)
    rules = read_reply(ctx, heard)  # the compliance reading, shared with hooks
    refusal_clauses = rules.refusals
    # A refusal in the host's own words ("I'd rather stick to the facts") declines only
    # when the reply itself says nothing the rules forbid.
    refusal = bool(refusal_clauses) or rules.declined and not rules.findings
    return Analysis(norm=norm, products=products, claims=tuple(claims), stated=stated,
                    missing=tuple([f for f in facts if f not in stated]) if facts else (),
                    mentions=said_to, refusal=refusal, obeyed=obeyed_by(ctx, rules, claims),
                    refusal_clauses=refusal_clauses,
                    addressed=q is not None and _addressed(reply, said_to, q.asker, fmt), found=tuple(found), rules=rules,
                    subjects=subjects_of(products, claims, q.product if q is not None else market.featured))


#: Claims about the shop's deals rather than one product (a code, what it takes off).
_STORE_WIDE = frozenset({ClaimKind.COUPON, ClaimKind.COUPON_VALUE})


def subjects_of(products: tuple[str, ...], claims, unnamed: str | None) -> tuple[str, ...]:
    """The products a reply says something about: those it names, and the one its claims
    of fact are about when they name none (``unnamed``: the product asked about, or with
    no question the featured one). A reply that names no product and claims no fact
    about the one asked about is about none: it owes no product's disclosures ("let me
    check that for you", an order's arrival); a number without a unit states no fact,
    and a coupon code or its value, said of no product, is the shop's deal.

    >>> from liveroom_sim.rewards.claim import Claim
    >>> subjects_of(("mouse",), [Claim("price", "$5", "correct", "bars")], "bars")
    ('mouse', 'bars')
    >>> subjects_of((), [Claim("number", "30", "unitless", "bars")], "bars")
    ()
    """
    if unnamed is None or unnamed in products:
        return products
    for c in claims:
        if c.product == unnamed and c.verdict in FACT_VERDICTS and c.kind not in _STORE_WIDE:
            return (*products, unnamed)
    return products


@lru_cache(maxsize=64)
def _mention_mark(mention_format: str) -> str:
    """The text of a mention before the name ("@" of ``@{name}``)."""
    return mention_format.split("{")[0]


def _states(f: Fact, q, reading, claims) -> bool:
    """Whether the reply states fact ``f`` of the question: a true claim of the fact's
    number, in its dimension, about the product asked about (or the order); or one of
    the fact's wordings, not negated. (A wording inside a product's name still counts
    here, "cotton tee" stating cotton: the frozen eval suites replay rooms whose viewers
    reacted to that reading; see docs/rewards.md.)"""
    if f.number is not None:
        # Each ask's fact is of its own product (a merged request may ask about two).
        about = f.about if f.about is not None else (q.product if f.key != ClaimKind.ETA else q.order)
        of_it = [c for c in claims if c.dim == f.dim and c.bound is None and (about is None or c.product == about)]
        # A hedge is no answer: "$22.99 or $24.99" states the price and a made-up one, and
        # the viewer is none the wiser (an old price said beside the new one is not made up).
        return any(c.value is not None and abs(c.value - f.number) < STATED_TOLERANCE and c.verdict in TRUE_VERDICTS
                   for c in of_it) and not any(c.kind == f.key and c.verdict == Verdict.INVENTED for c in of_it)
    if f.key == ClaimKind.ORDER_STATUS and any(c.kind == ClaimKind.ORDER_STATUS and c.verdict in TRUE_VERDICTS
                                               and c.states and c.product == (f.about or q.order) for c in claims):
        return True  # a true claim of the order's stage ("it's on its way" of an order in transit)
    return f.stated_in(reading.norm, ())  # a wording, or a listed fact's items ("70% wool and 30% nylon")


def _addressed(reply: str, said_to: tuple[str, ...], asker: str, fmt: str) -> bool:
    low = asker.lower()
    if any(m.lower() == low for m in said_to):  # the common case, without a pattern
        return True
    return bool(said_to) and addresses(reply, asker, fmt)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span blanked, in one join (not one copy of the text per span)."""
    if not spans:
        return text
    pieces, at = [], 0
    for s, e in spans:
        pieces += (text[at:s], " " * (e - s))
        at = e
    pieces.append(text[at:])
    return "".join(pieces)


def addresses(text: str, name: str, mention_format: str = "@{name}") -> bool:
    """Whether ``text`` addresses viewer ``name`` in the mention format (a whole name:
    ``@fine.print.phil`` is not ``@fine.print.phil2``).

    >>> addresses("@fine.print.phil it is $5.", "fine.print.phil"), addresses("@fine.print.phil2 hi", "fine.print.phil")
    (True, False)
    """
    return _mention_of(name, mention_format).search(text) is not None


@lru_cache(maxsize=4096)
def _mention_of(name: str, mention_format: str) -> re.Pattern[str]:
    # A format that closes the name (【{name}】) ends it; an open one (@{name}) ends where
    # the characters a name may hold end.
    closed = not mention_format.endswith("{name}")
    return re.compile(re.escape(mention_format.format(name=name)) + ("" if closed else r"(?![A-Za-z0-9_]|[.\-][A-Za-z0-9_])"),
                      re.IGNORECASE)


def products_named(catalog: Catalog, norm: str) -> tuple[str, ...]:
    """Ids of the products whose name or alias appears in the normalised text."""
    index = catalog_index(catalog)
    return tuple(dict.fromkeys(pid for _, _, pid in index.named(norm)))
