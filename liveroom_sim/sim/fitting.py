"""Which viewer lines and intents fit a product: worked out once per spec, not per message.

Whether a line fits depends only on the line (its categories, needs and placeholders),
the product's category and attributes, how often the viewer was ignored and which slots
are filled; which fact intents a persona may ask of a product depends only on the
persona and the product. None of this changes during a stream, nor between the episodes
of a spec: a drawn catalog differs from its base only in prices, list prices and stock
(see ``Catalog.base``). So the answers are kept in a :class:`FitTable` per catalog base
and language, held by the phrasebook (``Phrasebook.fit_tables``) and shared by every
episode's writer: a viewer writes every few seconds, and nearly everything it would work
out an earlier viewer or episode already did.

Sharing among episodes is an optimisation that pays in Chinese rooms: bench_env's replay
(4 scripted episodes, one env, 6 rounds alternated in one process, loaded machine) of
LiveRoom-zh-v0, median 1.147 ms a step shared vs 1.284 per episode (11%); of LiveRoom-v0,
1.150 vs 1.162 (1%).
"""

from __future__ import annotations

import bisect
import itertools
import re

from liveroom_sim.world.derived import Same
from liveroom_sim.world.facts import intent_fits
from liveroom_sim.world.lines import Template
from liveroom_sim.world.personas import FACT_INTENTS, Persona, Phrasing
from liveroom_sim.world.phrasebook import Phrasebook

_FACTS = frozenset(FACT_INTENTS)


class _Weighted:
    """Draw keys by weight with one uniform number (cheaper than ``rng.choice``)."""

    __slots__ = ("keys", "cum")

    def __init__(self, weights: dict[str, float]):
        self.keys = list(weights)
        self.cum = list(itertools.accumulate(weights.values()))

    def draw(self, u: float) -> str:
        return self.keys[min(bisect.bisect_right(self.cum, u * self.cum[-1]), len(self.keys) - 1)]


def phrasing(persona: Persona, language: str) -> Phrasing:
    """The persona's phrasing in ``language`` (its first one when it has none)."""
    return persona.phrasing.get(language) or next(iter(persona.phrasing.values()))


class FitTable:
    """What fits, for one phrasebook, catalog base and language (see the module docstring).

    Keys hold products by id (one base catalog) and personas and lines by identity
    (:class:`~liveroom_sim.world.derived.Same`: a frozen model's value hash walks every field).
    """

    def __init__(self, book: Phrasebook, catalog, language: str):
        self.book, self.catalog, self.language = book, catalog, language
        self._lines: dict[tuple, tuple] = {}
        self._refit: dict[tuple, tuple] = {}
        self._second: dict[tuple, tuple] = {}
        self._extras: dict[tuple, tuple] = {}
        self._bare: dict[tuple, list[Template]] = {}
        self._parts: dict[tuple, list[Template]] = {}
        self._book_slots = frozenset(book.slots) | {"host"}

    def lines(self, persona: Persona, intent: str, item, strikes: int, slots: dict,
              traits: tuple[str, ...]) -> tuple[list[Template], list[Template]]:
        """``(the persona's own lines, the phrasebook's)`` for ``intent`` that fit ``item``
        (a product, or None), a viewer ignored ``strikes`` times and the ``slots`` at hand
        (a line needs each of its placeholders filled; when the host's words can be quoted,
        ``said``, the lines that quote them)."""
        filled = tuple([k for k, v in slots.items() if v])  # (slot values are text or None)
        key = (Same(persona), intent, item.id if item is not None else None, strikes, tuple(slots), filled, traits)
        found = self._lines.get(key)
        if found is None:
            have = (set(slots) | set(traits) | self._book_slots) - (set(slots) - set(filled))
            own = phrasing(persona, self.language).templates.get(intent, ())
            found = self._lines[key] = (_usable(own, item, strikes, have),
                                        _usable(self.book.viewer.get(intent, ()), item, strikes, have))
        return found

    def refit(self, persona: Persona, product) -> _Weighted | None:
        """The persona's fact intents that fit ``product``, by weight (None: none fits)."""
        key = (Same(persona), product.id)
        if key not in self._refit:
            fitting = {k: w for k, w in persona.topics.items()
                       if k in _FACTS and k != "order_status" and w > 0 and intent_fits(k, product)}
            self._refit[key] = _Weighted(fitting) if fitting else None
        return self._refit[key]

    def second(self, persona: Persona, product, first: str) -> tuple[_Weighted, dict[str, list[Template]]] | None:
        """The second asks the persona may add to ``first`` about ``product``: the intents
        by weight, and each intent's short lines that fit (None: no second ask fits)."""
        key = (Same(persona), product.id, first)
        if key not in self._second:
            second = self.book.second
            options = {k: w for k, w in persona.topics.items()
                       if k in _FACTS and k not in (first, "order_status") and w > 0 and intent_fits(k, product)
                       and any(t.fits(product) for t in second.get(k, ()))}
            found = None
            if options:
                found = (_Weighted(options), {k: [t for t in second[k] if t.fits(product)] for k in options})
            self._second[key] = found
        return self._second[key]

    def extras(self, opener: Template | None, closer: Template | None, intent: str) -> tuple:
        """For a viewer's opener and sign-off and a message of ``intent``, each one's
        ``(usable, suits, placeholders)`` (None: the viewer has none): whether it may be
        used at all (drawn for, then), whether it suits the intent once drawn (a
        "thanks!" does not close a complaint), and what it fills in."""
        key = (Same(opener), Same(closer), intent)
        checks = self._extras.get(key)
        if checks is None:
            checks = self._extras[key] = tuple(None if t is None else _extra_check(t, intent) for t in (opener, closer))
        return checks


    def bare(self, intent: str, product) -> list[Template]:
        """The phrasebook's short asks of ``intent`` that name no product ("price?",
        多少钱: its ``second`` lines) and fit ``product``."""
        key = (intent, product.id)
        hit = self._bare.get(key)
        if hit is None:
            hit = self._bare[key] = [t for t in self.book.second.get(intent, ()) if t.fits(product)]
        return hit

    def parts(self, kind: str, intent: str) -> list[Template]:
        """The room's ``openers`` or ``tails`` (``kind``) that suit ``intent``."""
        key = (kind, intent)
        hit = self._parts.get(key)
        if hit is None:
            hit = self._parts[key] = [t for t in getattr(self.book.chat, kind) if t.fits(intent=intent)]
        return hit


def link_number(catalog, product_id: str) -> int:
    """The product's link number in the room: its place in the lineup, from 1 (as the
    platform numbers the links under a stream: 3号链接, "link 3")."""
    return list(catalog.by_id).index(product_id) + 1  # (rare: only pointers ask)


def respell(text: str, keep: str, chat, chance: float, rng) -> str:
    """``text`` with each word that has respellings in ``chat.respell`` replaced by one of
    them with ``chance`` (one uniform number per such word, in the order they occur),
    except inside ``keep`` (the words naming the product: "the serum" stays findable).

    Words are looked up, not matched by one pattern of every respelling: a pattern of
    forty alternatives tried at each position costs a millisecond a message.
    """
    found: list[tuple[int, int, tuple[str, ...]]] = []
    words = chat.respell_words
    if words:
        for m in _WORD.finditer(text):
            alts = words.get(m.group(0).lower())
            if alts is not None:
                found.append((m.start(), m.end(), alts))
    for key, alts in chat.respell_others:
        at = text.find(key)
        while at >= 0:
            if not any(s < at + len(key) and at < e for s, e, _ in found):
                found.append((at, at + len(key), alts))
            at = text.find(key, at + len(key))
    if not found:
        return text
    lo = text.find(keep) if keep else -1
    hi = lo + len(keep)
    out, last = [], 0
    for s, e, alts in sorted(found):
        if lo >= 0 and s < hi and lo < e:
            continue  # inside the product's name
        if rng.random() < chance:
            alt = alts[int(rng.integers(len(alts)))]
            if alt.count(text[s:e]) > 1 and (text[s - 1:s].isalnum() or text[e:e + 1].isalnum()):
                continue  # a doubling stands alone ("可以可以"), never inside a phrase ("可以可以退不")
            out += (text[last:s], alt)
            last = e
    return "".join(out) + text[last:] if out else text


_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def _extra_check(t: Template, intent: str) -> tuple[bool, bool, frozenset[str]]:
    usable = bool(t.text) and t.fits(intent=intent)
    suits = not (intent in ("complaint", "follow_up") and intent not in t.intents)
    return usable, suits, t.fields


def _usable(lines, item, strikes: int, have: set[str]) -> list[Template]:
    found = [t for t in lines if t.fits(item, strikes=strikes) and t.fields <= have]
    quoting = [t for t in found if "said" in t.fields]
    return quoting if "said" in have and quoting else [t for t in found if "said" not in t.fields]


def fit_table(book: Phrasebook, catalog, language: str) -> FitTable:
    """The :class:`FitTable` of a phrasebook, a catalog (its base) and a language, held by
    the phrasebook and shared by the episodes of a spec (at most 64 kept)."""
    key = (Same(catalog.base), language)
    table = book.fit_tables.get(key)
    if table is None:
        table = book.fit_tables.keep(key, FitTable(book, catalog.base, language))
    return table
