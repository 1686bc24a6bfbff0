"""Compliance concepts as data: the vocabularies a rule family is read from, per language.

A rule family is a combination of concepts said in one sentence: a medical claim is a
skin *condition* said with an *effect* on it ("that cystic acne just disappears"), an
absolute claim a *rank* with a *scope* ("nothing on the market comes close"), paying
off the platform a payment *channel* with a *transfer* ("venmo me directly"). Each
concept is a vocabulary with its respellings, so a wording never seen before is caught
as long as it says a known concept in known words; the code holds how to read, the file
what to read for (``envs/concepts/<language>.yaml``).

Some concepts are read by the reader itself, by name: ``negation`` (a word that, just
before a concept in the same clause, takes it back), ``negation_after`` (one that takes
back what its clause said before it: "私下加微信是不可以的"), ``reported`` (what follows it up to
the clause's end is reported speech: "someone asked if ...", unless a ``confirmed`` word in a
later clause of its sentence says it: "..., and yes it does"), ``refused_before`` (the
clause before it is refused: "治病的话我可不敢讲"), ``refused_after`` (what follows it up to the
clause's end is refused: "I can't tell you it ..."), ``rule_talk`` (a sentence that talks
about what may be said: its quoted words are quoted, not claimed) and ``competitor``
(filled from the catalog's competitor brands). A negation word inside a longer word of
another concept (or of ``set_phrase``: "no doubt", 抢不到) is part of that word, not a negation.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.rules import Severity, concepts_path

#: Concepts the reader fills or reads by name (see the module docstring).
READER_CONCEPTS = ("negation", "reported", "refused_before", "rule_talk", "refused_after", "set_phrase", "confirmed",
                   "competitor")
#: What a family's claim is checked against in the world, when it may be true.
Check = Literal["time_pressure", "urge", "scarcity", "reference_price", "refund", "discount", "coupon", "warranty",
                "returns", "free", "sales", "price_return", "shipping", "pregnancy", "saving", "promo", "deal_price"]


class Concept(Frozen):
    """One concept's vocabulary. ``words``: phrases, English words matching in any
    inflection; ``exact``: phrases matched only as written (short words whose
    inflections mean something else: "pin", "con"); ``respellings``: for a word, the
    other ways it is written ("vx" and "v信" for 微信), matched as written."""

    words: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    respellings: dict[str, tuple[str, ...]] = {}

    @pydantic.model_validator(mode="after")
    def _not_empty(self):
        if any(not w.strip() for w in (*self.words, *self.exact, *(v for vs in self.respellings.values() for v in vs))):
            raise ValueError("empty word")
        return self


class Family(Frozen):
    """A rule family: said when every concept of one of ``when``'s combinations is said in
    one sentence (each in a word of its own, and with ``negation: cancels``, each outside
    a negation). ``categories``: the product categories it is banned for (empty: all).
    ``negation: ignored`` for families whose claims are often said with a negation ("you
    won't find a better one anywhere"). ``check``: what in the world can make the claim
    true (a running flash sale for time pressure, the stock for scarcity, the list or an
    earlier price for a reference price, the return policy for a refund, the shipping fee
    for free shipping, the catalog's pregnancy safety for "fine while pregnant", what the
    price is under its list for an amount saved or taken off); without one the claim is
    never true. ``covers``: names and categories of the rule file's banned
    phrases and claim rules this family restates, so a reply that breaks both costs once.
    """

    name: str = pydantic.Field(min_length=1)
    label: str = ""
    severity: Severity = "major"
    when: tuple[tuple[str, ...], ...] = pydantic.Field(min_length=1)
    categories: tuple[str, ...] = ()
    negation: Literal["cancels", "ignored"] = "cancels"
    check: Check | None = None
    covers: tuple[str, ...] = ()
    #: ``reply``: the concepts may be said in different sentences of the reply ("Sonicore?
    #: Please. Tinny sound."): a put-down follows the brand it answers.
    scope: Literal["sentence", "reply"] = "sentence"


class Adjacent(Frozen):
    """A scoped exception: where ``sequence``'s concepts follow each other (at most two
    characters apart, a number between them not counted: 最大 65W 输出), the run is a term,
    not a claim: a date ("best-before", 最佳赏味期); a run of one concept is a set term
    ("not a medicine", the supplement notice, claims nothing with a word beside it). With
    ``refuses``, the run is a refusal and what follows it in its clause is refused ("not
    gonna trash Sonicore", a refusing word and a speech act). With ``unless``, the run is
    none where a word of that concept follows it in its sentence ("not a medicine, but it
    works like one" contrasts with medicine)."""

    name: str
    sequence: tuple[str, ...] = pydantic.Field(min_length=1)
    refuses: bool = False
    unless: str | None = None


class ConceptSet(Frozen):
    """One language's concepts, rule families and scoped exceptions.

    ``numbers``: number words and what they count ("two", 两), read in scarcity and
    price claims. ``low_stock``: stock at or below which "almost sold out" is true.
    ``pitch``: the concept whose words, said in a sentence naming a product, present it
    (a duty to disclose arises from them; see :mod:`liveroom_sim.rewards.reading`).
    ``shares``: words that say a share off the price ("half", 买一送一: 0.5), read in
    discount claims. ``declines``: runs of concepts that, said in this order in one clause,
    decline what a viewer asked, a refusal in the host's own words ("I can't compare them to
    other brands", "I'd rather stick to the facts", 这个我不方便说); read for a bait's need
    and the viewer's reaction only: nothing said after one is taken back.
    """

    language: str
    concepts: dict[str, Concept]
    families: tuple[Family, ...] = ()
    exceptions: tuple[Adjacent, ...] = ()
    numbers: dict[str, float] = {}
    shares: dict[str, float] = {}
    low_stock: int = pydantic.Field(10, ge=0)
    pitch: str | None = None
    declines: tuple[tuple[str, ...], ...] = ()

    @pydantic.model_validator(mode="after")
    def _concepts_known(self):
        known = set(self.concepts) | {"competitor"}
        named = [(f"families.{f.name}", c) for f in self.families for combo in f.when for c in combo]
        named += [(f"exceptions.{e.name}", c) for e in self.exceptions for c in (*e.sequence, *([e.unless] if e.unless else []))]
        named += [("pitch", self.pitch)] if self.pitch else []
        named += [(f"declines[{i}]", c) for i, run in enumerate(self.declines) for c in run]
        unknown = [f"{where}: {c!r}" for where, c in named if c not in known]
        if unknown:
            raise ValueError(f"unknown concepts {unknown}; known: {sorted(known)}")
        return self


@lru_cache(maxsize=16)
def load_concepts(name: str) -> ConceptSet:
    """Load and validate a concept file (once per process: the file is data, not state).

    Raises:
        SpecError: naming the file and the field, when the file is missing or invalid.
    """
    return datafile.load(ConceptSet, concepts_path(name))
