"""Compliance rules as data: banned phrases, claim categories and required disclosures.

An env spec names a base rule file; campaign ``rule_update`` events add rules mid-stream,
which apply from the time they fire.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic

from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.derived import derived

Severity = Literal["minor", "major", "severe"]
SEVERITY_COST = {"minor": 0.25, "major": 0.5, "severe": 1.0}


class BannedPhrase(Frozen):
    """A phrase the host must not say.

    ``allow`` lists innocent words that contain the phrase (最近 "recently" contains 最
    "most"); an occurrence inside one of them is no violation. Latin-script phrases only
    match whole words, so "cure" does not fire inside "secure". ``forms``: other ways of
    saying the same thing that count as this one rule (最好 and 最低 for 最); Chinese
    forms of two characters or more also match by sound (蕞好, zui好).
    """

    phrase: str = pydantic.Field(min_length=1)
    category: str
    severity: Severity = "major"
    allow: tuple[str, ...] = ()
    forms: tuple[str, ...] = ()

    @pydantic.model_validator(mode="after")
    def _allow_holds_phrase(self):
        inside = [w for w in self.allow if self.phrase.lower() not in w.lower()]
        if inside:
            raise ValueError(f"allowed words {inside} do not contain the phrase {self.phrase!r}")
        return self


class ClaimRule(Frozen):
    """A family of claims that is banned for some product categories.

    Example: medical claims ("cures", "treats acne") for ordinary cosmetics and food.
    A claim is said when one of ``patterns`` is said, or when one of ``verbs`` comes
    within ``within`` characters of one of ``objects`` in the same clause, in either order
    ("clears up your acne", "acne? cured"). English words match in every inflection
    (cure, cures, cured, curing), checked with the Snowball stemmer. A claim under a
    negation ("it does not cure acne", 不能代替药物) is not made. ``categories`` empty
    means every product.
    """

    name: str
    patterns: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    objects: tuple[str, ...] = ()
    within: int = pydantic.Field(24, ge=0, le=80)
    categories: tuple[str, ...] = ()
    severity: Severity = "severe"

    @pydantic.model_validator(mode="after")
    def _says_something(self):
        if not self.patterns and not self.verbs:
            raise ValueError("a claim rule needs patterns, or verbs (with or without objects)")
        if self.objects and not self.verbs:
            raise ValueError("objects need verbs: a claim is a verb said of an object")
        if any(not w.strip() for w in (*self.patterns, *self.verbs, *self.objects)):
            raise ValueError("empty pattern, verb or object")
        return self


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
    refusal covers what it refuses (the words after the marker, up to the next comma,
    sentence end or "but"), and what it covers is quoted, not claimed; the rest of the
    reply is read like any reply. ``not_refusals``: phrases that begin with a marker
    but refuse nothing ("I can't say no to you"). ``negations``: words that, just
    before a claim or a disclosure in the same clause, negate it ("not", 不).
    ``concepts``: the concept file the rules are also read by (``en`` names
    ``envs/concepts/en.yaml``; see :mod:`liveroom_sim.world.concepts`): rule families
    as combinations of concepts, so that unseen wordings of a known concept are caught.
    """

    banned: tuple[BannedPhrase, ...] = ()
    claims: tuple[ClaimRule, ...] = ()
    disclosures: tuple[Disclosure, ...] = ()
    disparaging: tuple[str, ...] = ()
    refusal_markers: tuple[str, ...] = ()
    not_refusals: tuple[str, ...] = ()
    negations: tuple[str, ...] = ()
    concepts: str | None = None

    @pydantic.field_validator("concepts")
    @classmethod
    def _concepts_exist(cls, name):
        if name is not None and not concepts_path(name).is_file():
            raise ValueError(f"no concept file {str(concepts_path(name))!r}")
        return name

    def plus(self, other: "RuleSet") -> "RuleSet":
        """Return these rules with ``other``'s added (a mid-stream rule update).

        A rule restated by the update replaces the old one (same phrase, claim name, or
        disclosure target), so restating a rule never makes it cost twice.

        The same two rule sets give the same object back (rule sets are frozen): every
        episode of a spec applies the same updates, and the compiled reading of a rule
        set (:func:`liveroom_sim.rewards.rulebook.rulebook`) is kept per object, so it is
        built once per spec instead of once per episode.
        """
        merged = self._sums.get(other)  # (by value: rule sets are frozen and hashable)
        if merged is None:
            merged = self._sums[other] = self._plus(other)
        return merged

    @derived
    def _sums(self) -> dict["RuleSet", "RuleSet"]:
        """The rule sets :meth:`plus` made from this one, by the update added."""
        return {}

    def _plus(self, other: "RuleSet") -> "RuleSet":
        return RuleSet(
            banned=_union(self.banned, other.banned, lambda r: r.phrase),
            claims=_union(self.claims, other.claims, lambda r: r.name),
            disclosures=_union(self.disclosures, other.disclosures, lambda r: r.when),
            disparaging=tuple(dict.fromkeys(self.disparaging + other.disparaging)),
            refusal_markers=tuple(dict.fromkeys(self.refusal_markers + other.refusal_markers)),
            not_refusals=tuple(dict.fromkeys(self.not_refusals + other.not_refusals)),
            negations=tuple(dict.fromkeys(self.negations + other.negations)),
            concepts=other.concepts or self.concepts,
        )


def concepts_path(name: str) -> Path:
    """Where the concept file ``name`` is: a built-in name (``en``) or a path to a file."""
    path = Path(name)
    return path if path.suffix else ENVS_DIR / "concepts" / f"{name}.yaml"


def _union(old: tuple, new: tuple, key) -> tuple:
    merged = {key(r): r for r in old}
    merged.update((key(r), r) for r in new)
    return tuple(merged.values())
