"""What never changes about a catalog, precomputed once for reading replies: a pattern of
every product name, each product's fixed numbers and durations, and the vocabularies of
allergens and ingredients (see :class:`CatalogIndex`)."""

from __future__ import annotations

import re
from functools import cached_property

from ahocorasick_rs import AhoCorasick

from liveroom_sim.rewards.derived import PerObject
from liveroom_sim.rewards.lexicon import fold, trie_pattern
from liveroom_sim.rewards.scanner import Literals
from liveroom_sim.world.catalog import Catalog
from liveroom_sim.world.facts import denied_copula
from liveroom_sim.world.phrasebook import reading_words
from liveroom_sim.world.text import normalize, normalize_phrase

#: An upper-case token that may be a coupon code (GLOW15, MAN200).
CODE_TOKEN = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]{3,15}(?![A-Za-z0-9])")
# (CODE_TOKEN with its look-behind after the first capital: see code_tokens)
_CODE_FROM_CAPITAL = re.compile(r"[A-Z](?<![A-Za-z0-9][A-Z])[A-Z0-9]{3,15}(?![A-Za-z0-9])")


def code_tokens(text: str) -> list[str]:
    """``CODE_TOKEN.findall(text)``, faster: a pattern that starts with a character class
    lets the engine skip to capitals, and looks behind only after one (the same matches),
    so findall lists them with no match object per token."""
    return _CODE_FROM_CAPITAL.findall(text)


#: The fixed phrases of the term claims (phrasebook ``fact_words`` keys).
TERM_KEYS = ("pregnancy_unsafe", "pregnancy_safe", "no_allergens", "sold_out", "in_stock", "free_shipping")


class CatalogIndex:
    """What never changes about a catalog, precomputed once: a pattern matching every
    product name and alias, each product's fixed numbers, and the vocabularies of
    allergens and ingredients."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog
        self.names = {normalize(n): p.id for p in catalog.products for n in p.names}
        # The names in one automaton; ``pattern`` finds the same (kept as the reference).
        self.name_literals = Literals(self.names.items())
        self.pattern = re.compile(trie_pattern(list(self.names)))
        self.numbers: dict[str, set[float]] = {}
        self.percents: dict[str, set[float]] = {}
        self.durations: dict[str, dict[str, float]] = {}
        self.allergens: dict[str, set[str]] = {}
        self.ingredients: dict[str, set[str]] = {}
        #: Each product's spec-sheet and compatibility values as written, normalised.
        self.spec_texts: dict[str, tuple[str, ...]] = {}
        # Upper-case tokens of the catalog's own text (IPX7, SPF50) are not coupon codes.
        self.tokens = set(CODE_TOKEN.findall(" ".join(p.model_dump_json() for p in catalog.products)))
        for p in catalog.products:
            d = {"ships_within": float(p.shipping.ships_within_hours), "returns": p.returns.days * 24.0}
            if p.warranty_months:
                d["warranty"] = p.warranty_months * 720.0
            if getattr(p, "shelf_life_months", None):
                d["shelf_life"] = p.shelf_life_months * 720.0
            if getattr(p, "battery_hours", None):
                d["battery"] = float(p.battery_hours)
            self.durations[p.id] = d
            text = " ".join(str(getattr(p, f, "")) for f in
                            ("material", "specs", "volume_ml", "net_weight_g", "sizes", "pitch", "ingredients",
                             "care", "storage"))
            self.numbers[p.id] = {float(x) for x in re.findall(r"\d+(?:\.\d+)?", text)}
            self.percents[p.id] = {float(x) for x in re.findall(r"(\d+(?:\.\d+)?)\s?%", text)}
            self.allergens[p.id] = {normalize(a) for a in getattr(p, "allergens", None) or ()}
            self.ingredients[p.id] = {normalize(i) for i in getattr(p, "ingredients", None) or ()}
            self.spec_texts[p.id] = tuple(normalize(str(v)) for v in (*(getattr(p, "specs", None) or {}).values(),
                                                                   *(getattr(p, "compatibility", None) or ())))
        vocab = set().union(*self.allergens.values()) | common_allergens()
        self.allergen_words = _word_pattern(vocab)
        self.ingredient_words = _word_pattern(set().union(*self.ingredients.values()))
        # (per index: the phrasebooks' ``fact_words`` it has been asked about; one or two)
        self._terms: PerObject[dict, tuple[Literals, AhoCorasick | None]] = PerObject(self._term_literals, size=8)
        #: The first three characters of every order id (a reply holding none names no order).
        self.order_heads = tuple(sorted({o.id.lower()[:3] for o in catalog.orders}))

    def named(self, norm: str) -> list[tuple[int, int, str]]:
        """``(start, end, product id)`` of each product name or alias in normalised text,
        leftmost-longest and not overlapping ("glow serum" is one name, not "glow")."""
        if "" in self.names:  # (a name that normalises to nothing: only the regex reads it)
            return [(m.start(), m.end(), self.names[m.group(0)]) for m in self.pattern.finditer(norm)]
        return self.name_literals.longest(norm)

    def terms(self, words: dict[str, tuple[str, ...]]) -> Literals:
        """Every literal that may start a term claim of ``words``, found in one pass; each
        stands for a set of tags: ``PHRASE`` for a fact phrase as a plain substring (a
        text holding none states no fact phrase), a ``TERM_KEYS`` key for a phrase as
        :func:`~liveroom_sim.world.facts.occurrences` looks for it (normalised: a key none
        of whose phrases the text holds has no occurrence), and ``VOCAB`` for an allergen
        or ingredient (a text holding none names none). Built once per ``words`` dict (a
        phrasebook's, which lives as long as its spec)."""
        return self._terms(words)[0]

    def term_tags(self, words: dict[str, tuple[str, ...]], norm: str) -> set[str]:
        """The tags of the :meth:`terms` literals in normalised text (the union of their
        values ``present``), or an empty set when the text holds no literal tagged
        ``PHRASE`` or ``VOCAB``: it then states no fact phrase and names no allergen or
        ingredient, whatever else it holds, and most replies hold none (one search for
        any of those literals answers it: no set of every literal found is built)."""
        literals, gate = self._terms(words)
        if gate is None or not gate.find_matches_as_indexes(norm):
            return set()
        return set().union(*literals.present(norm))

    def _term_literals(self, words: dict[str, tuple[str, ...]]) -> tuple[Literals, AhoCorasick | None]:
        tags: dict[str, set[str]] = {}
        for key in TERM_KEYS:
            for w in words.get(key, ()):
                if w:  # (occurrences finds no empty phrase)
                    tags.setdefault(w.lower(), set()).add(PHRASE)
                    tags.setdefault(normalize_phrase(w), set()).add(key)
                    for start in (denied_copula(w) or ((),))[0]:  # ("shipping isn't free")
                        tags.setdefault(start, set()).update((PHRASE, key))
        for v in set().union(*self.allergens.values(), *self.ingredients.values(), common_allergens()):
            if v:
                tags.setdefault(v, set()).add(VOCAB)
        gate = [w for w, t in tags.items() if PHRASE in t or VOCAB in t]  # (see term_tags)
        return Literals((w, frozenset(t)) for w, t in tags.items()), AhoCorasick(gate) if gate else None

    @cached_property
    def brands(self) -> tuple[re.Pattern | None, dict[str, str], re.Pattern]:
        """A pattern finding the catalog's competitor brands in folded text (whole words in
        Latin script), the brand each folded name belongs to, and a pattern finding any
        of the names as a plain substring (one trie search, not a test per name)."""
        by_norm = {fold(normalize(b)): b for b in self.catalog.competitors}
        alts = "|".join(rf"(?<![a-z0-9]){re.escape(n)}(?![a-z0-9])" if n.isascii() else re.escape(n)
                        for n in sorted(by_norm, key=len, reverse=True))
        return re.compile(alts) if alts else None, by_norm, re.compile(trie_pattern(sorted(by_norm)))

    @cached_property
    def tags(self) -> dict[str, frozenset[str]]:
        """What a disclosure's ``when`` can name, per product: its category, ``sponsored``
        and ``health_food``."""
        return {p.id: frozenset({p.category, *(["sponsored"] if p.sponsored else []),
                                 *(["health_food"] if getattr(p, "health_food", False) else [])})
                for p in self.catalog.products}

    @cached_property
    def order_ids(self) -> Literals:
        """The catalog's order ids (lower case) in one automaton, each standing for its id."""
        return Literals((o.id.lower(), o.id) for o in self.catalog.orders)


#: Tags of :meth:`CatalogIndex.terms` beside the ``TERM_KEYS`` keys.
PHRASE, VOCAB = "phrase", "vocab"


def common_allergens() -> frozenset[str]:
    """Allergens a reply may name of any product, besides its catalog's (the phrasebooks'
    ``reading.allergens``)."""
    return frozenset(reading_words().allergens)


def _word_pattern(words: set[str]) -> re.Pattern[str] | None:
    words = {w for w in words if w}
    if not words:
        return None
    return re.compile(rf"(?<![a-z])(?:{trie_pattern(sorted(words))})(?![a-z])")


_INDEXES: PerObject[Catalog, CatalogIndex] = PerObject(CatalogIndex, size=64)


def catalog_index(catalog: Catalog) -> CatalogIndex:
    """The :class:`CatalogIndex` of a catalog (built once per spec: a drawn catalog differs
    from its base only in prices and stock, which the index does not hold; at most 64 kept)."""
    return _INDEXES(catalog.base)
