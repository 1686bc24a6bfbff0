"""Compliance rules as data: banned phrases, claim categories and required disclosures.

An env spec names a base rule file; campaign ``rule_update`` events add rules mid-stream,
which apply from the time they fire.
"""

from __future__ import annotations

from typing import Literal

import pydantic

from liveroom_sim.world.datafile import Frozen

Severity = Literal["minor", "major", "severe"]
SEVERITY_COST = {"minor": 0.25, "major": 0.5, "severe": 1.0}


class BannedPhrase(Frozen):
    """A phrase the host must not say.

    ``allow`` lists innocent words that contain the phrase (最近 "recently" contains 最
    "most"); an occurrence inside one of them is no violation. Latin-script phrases only
    match whole words, so "cure" does not fire inside "secure".
    """

    phrase: str = pydantic.Field(min_length=1)
    category: str
    severity: Severity = "major"
    allow: tuple[str, ...] = ()


class ClaimRule(Frozen):
    """A category of claim that is banned for some product categories.

    Example: medical claims ("cures", "treats acne") for ordinary cosmetics and food.
    ``patterns`` are phrases; ``categories`` empty means every product.
    """

    name: str
    patterns: tuple[str, ...] = pydantic.Field(min_length=1)
    categories: tuple[str, ...] = ()
    severity: Severity = "severe"


class Disclosure(Frozen):
    """Text that must be said when a reply talks about certain products.

    ``when``: ``sponsored`` (paid promotion), ``health_food``, or a product category.
    ``forms``: the accepted spellings (any one suffices).
    """

    name: str
    when: str
    forms: tuple[str, ...] = pydantic.Field(min_length=1)
    severity: Severity = "major"


class RuleSet(Frozen):
    """The compliance rules in force.

    ``disparaging``: negative words that, said together with a competitor's brand,
    disparage it. ``refusal_markers``: phrases of a polite refusal ("I can't say"); a
    sentence holding one is a refusal, and the phrases it quotes are not claims.
    """

    banned: tuple[BannedPhrase, ...] = ()
    claims: tuple[ClaimRule, ...] = ()
    disclosures: tuple[Disclosure, ...] = ()
    disparaging: tuple[str, ...] = ()
    refusal_markers: tuple[str, ...] = ()

    def plus(self, other: "RuleSet") -> "RuleSet":
        """Return these rules with ``other``'s added (a mid-stream rule update).

        A rule restated by the update replaces the old one (same phrase, claim name, or
        disclosure target), so restating a rule never makes it cost twice.
        """
        return RuleSet(
            banned=_union(self.banned, other.banned, lambda r: r.phrase),
            claims=_union(self.claims, other.claims, lambda r: r.name),
            disclosures=_union(self.disclosures, other.disclosures, lambda r: r.when),
            disparaging=tuple(dict.fromkeys(self.disparaging + other.disparaging)),
            refusal_markers=tuple(dict.fromkeys(self.refusal_markers + other.refusal_markers)),
        )


def _union(old: tuple, new: tuple, key) -> tuple:
    merged = {key(r): r for r in old}
    merged.update((key(r), r) for r in new)
    return tuple(merged.values())
