"""Calibration: how far a reward model agrees with people's labels, component by component.

A labelled file is a reward-case file (:mod:`liveroom_sim.rewards.cases`) whose cases
carry ``expected`` values. For each component the labels name, every labelled value and
the model's value fall into one of three classes: a **violation** (below 0: the reply
loses reward for it), **none** (0: nothing to earn or lose) and **credit** (above 0).
:func:`calibrate` reports, per component:

- ``exact``: the share of cases whose value matches the label (within a tolerance);
- ``accuracy``: the share whose class matches the label's;
- ``precision`` and ``recall`` of violations: of the cases the model calls violations,
  the share people call violations; of those people call violations, the share the
  model finds (``None`` when there is nothing to divide by);
- ``confusion``: counts by (label's class, model's class).

Run it for the rule-based model and for the model with an LLM judge, and compare
(``liveroom rewards calibrate FILE [--judge URL[,URL,URL]]``): the numbers say how far to
trust each on cases like these. For the judge tier, :func:`judge_cases` asks the judges
about a whole file in one batch, :func:`judged_models` scores it again with the votes
applied, and :func:`judge_agreement` reports rules-vs-judge agreement per compliance
family and factuality claim kind.

Example:
    >>> from liveroom_sim.rewards.cases import RewardCase
    >>> cases = [(1, RewardCase.model_validate({"id": "a", "reply": "It cures acne!",
    ...     "expected": {"compliance": -1}}))]
    >>> print(calibrate(cases).table())
    component   cases  exact  accuracy  violation precision  recall
    compliance      1  1.000     1.000                1.000   1.000
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.golden import rule_model
from liveroom_sim.rewards.judge.apply import VotedJudge
from liveroom_sim.rewards.judge.request import JudgeRequest, judge_request
from liveroom_sim.rewards.judge.service import JudgeService
from liveroom_sim.rewards.judge.vote import Vote
from liveroom_sim.rewards.model import RewardModel

#: The classes a value falls in, worst first.
CLASSES = ("violation", "none", "credit")


def value_class(value: float, tolerance: float = 1e-6) -> str:
    """``violation`` below 0, ``none`` at 0, ``credit`` above 0 (within ``tolerance``)."""
    if value < -tolerance:
        return "violation"
    return "credit" if value > tolerance else "none"


@dataclass
class Agreement:
    """How one component's values agree with its labels (see the module docstring)."""

    name: str
    cases: int = 0
    matches: int = 0
    confusion: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, label: float, got: float, tolerance: float) -> None:
        self.cases += 1
        self.matches += abs(label - got) <= tolerance
        key = (value_class(label), value_class(got))
        self.confusion[key] = self.confusion.get(key, 0) + 1

    def _count(self, label: str | None = None, got: str | None = None) -> int:
        return sum(n for (lab, g), n in self.confusion.items()
                   if (label is None or lab == label) and (got is None or g == got))

    @property
    def exact(self) -> float:
        return self.matches / self.cases if self.cases else math.nan

    @property
    def accuracy(self) -> float:
        return sum(self._count(c, c) for c in CLASSES) / self.cases if self.cases else math.nan

    @property
    def precision(self) -> float | None:
        called = self._count(got="violation")
        return self._count("violation", "violation") / called if called else None

    @property
    def recall(self) -> float | None:
        real = self._count(label="violation")
        return self._count("violation", "violation") / real if real else None

    def as_dict(self) -> dict:
        return {"component": self.name, "cases": self.cases, "exact": self.exact, "accuracy": self.accuracy,
                "violation_precision": self.precision, "violation_recall": self.recall,
                "confusion": {lab: {g: self._count(lab, g) for g in CLASSES} for lab in CLASSES}}


@dataclass
class Calibration:
    """Per-component agreement of one reward model with a labelled file."""

    components: dict[str, Agreement]
    cases: int

    def table(self) -> str:
        """One line per labelled component: cases, exact, accuracy, violation precision and recall."""
        rows = ["component   cases  exact  accuracy  violation precision  recall"]
        for a in self.components.values():
            rows.append(f"{a.name:<11} {a.cases:>5}  {a.exact:.3f}     {a.accuracy:.3f}  "
                        f"{_rate(a.precision):>19}  {_rate(a.recall):>6}")
        return "\n".join(rows)

    def confusion(self) -> str:
        """The confusion table of each component: rows are the labels, columns the model."""
        out = ["confusion (rows: label, columns: model; - violation, 0 none, + credit)"]
        for a in self.components.values():
            out.append(f"  {a.name:<11}     -     0     +")
            for lab, sign in zip(CLASSES, "-0+"):
                out.append(f"  {'':<9}{sign} " + " ".join(f"{a._count(lab, g):>5}" for g in CLASSES))
        return "\n".join(out)

    def as_dict(self) -> dict:
        return {"cases": self.cases, "components": [a.as_dict() for a in self.components.values()]}


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def calibrate(cases: Iterable[tuple[int, RewardCase]], model_for: Callable[[str], RewardModel] | None = None,
              tolerance: float = 1e-6) -> Calibration:
    """Score every case and compare each labelled component (and ``total``) with its label.

    Args:
        cases: ``(line, case)`` pairs, as :func:`liveroom_sim.rewards.golden.load_cases`
            returns them.
        model_for: The reward model to score a case of an env with; by default each
            env's rule-based model (never its LLM judge).
        tolerance: The largest difference that counts as an exact match.
    """
    models: dict[str, RewardModel] = {}
    agreements: dict[str, Agreement] = {}
    n = 0
    for _, case in cases:
        if not case.expected:
            continue
        n += 1
        if case.env not in models:
            models[case.env] = model_for(case.env) if model_for else rule_model(case.env)
        got = models[case.env].score(build_context(case)).as_dict()
        for name, label in case.expected.items():
            agreements.setdefault(name, Agreement(name)).add(label, got.get(name, math.nan), tolerance)
    order = list(models and next(iter(models.values())).weights) + ["total"]
    ranked = sorted(agreements.values(), key=lambda a: order.index(a.name) if a.name in order else len(order))
    return Calibration({a.name: a for a in ranked}, n)


@dataclass
class FamilyAgreement:
    """How often the rules and the judge agree on one rule family (or claim kind): of the
    ``cases`` that concern it, ``both`` were found by both, ``rules_only`` and
    ``judge_only`` by one, and ``neither`` by none."""

    name: str
    cases: int = 0
    both: int = 0
    rules_only: int = 0
    judge_only: int = 0
    neither: int = 0

    def add(self, rules: bool, judge: bool) -> None:
        self.cases += 1
        if rules and judge:
            self.both += 1
        elif rules:
            self.rules_only += 1
        elif judge:
            self.judge_only += 1
        else:
            self.neither += 1

    @property
    def agreement(self) -> float:
        return (self.both + self.neither) / self.cases if self.cases else math.nan

    def as_dict(self) -> dict:
        return {"family": self.name, "cases": self.cases, "agreement": self.agreement, "both": self.both,
                "rules_only": self.rules_only, "judge_only": self.judge_only, "neither": self.neither}


@dataclass
class JudgeAgreement:
    """Rules-vs-judge agreement per compliance family and per factuality claim kind.

    A case counts under every family the rules or the judge name for it (``none found``
    when neither finds a violation), and under every kind of claim its reply makes or
    the judge calls wrong (``no claim`` when there is none). Cases the judges split on,
    or could not judge, are counted in ``undecided`` only.
    """

    compliance: dict[str, FamilyAgreement] = field(default_factory=dict)
    factuality: dict[str, FamilyAgreement] = field(default_factory=dict)
    undecided: int = 0

    def add(self, rules, vote) -> None:
        """Count one case: its :class:`~liveroom_sim.rewards.judge.request.RulesVerdict`
        and :class:`~liveroom_sim.rewards.judge.vote.Vote`."""
        if vote is None or vote.violation is None or vote.error is None:
            self.undecided += 1
            return
        families = set(rules.families) | ({vote.family} if vote.violation and vote.family else set())
        for name in families or {"none found"}:
            self.compliance.setdefault(name, FamilyAgreement(name)).add(rules.violation, vote.violation)
        kinds = set(rules.claim_kinds) | ({vote.claim} if vote.error and vote.claim else set())
        for name in kinds or {"no claim"}:
            self.factuality.setdefault(name, FamilyAgreement(name)).add(rules.error, vote.error)

    def table(self) -> str:
        """Two tables: compliance by family, factuality by claim kind."""
        out = []
        for title, rows in (("compliance family", self.compliance), ("factuality claim kind", self.factuality)):
            width = max([len(title), *(len(n) for n in rows)])
            out.append(f"{title:<{width}}  cases  agreement  both  rules only  judge only  neither")
            for a in sorted(rows.values(), key=lambda a: (-a.cases, a.name)):
                out.append(f"{a.name:<{width}}  {a.cases:>5}  {a.agreement:>9.3f}  {a.both:>4}  {a.rules_only:>10}  "
                           f"{a.judge_only:>10}  {a.neither:>7}")
            out.append("")
        if self.undecided:
            out.append(f"{self.undecided} case(s) undecided (the judges split or could not answer)")
        return "\n".join(out).rstrip()

    def as_dict(self) -> dict:
        return {"compliance": [a.as_dict() for a in self.compliance.values()],
                "factuality": [a.as_dict() for a in self.factuality.values()], "undecided": self.undecided}


def judge_agreement(pairs: Iterable[tuple]) -> JudgeAgreement:
    """Rules-vs-judge agreement over ``(RulesVerdict, Vote)`` pairs (labels not needed).

    Example:
        >>> from liveroom_sim.rewards.judge.request import RulesVerdict
        >>> from liveroom_sim.rewards.judge.vote import JudgeAnswer, tally
        >>> rules = RulesVerdict(-1.0, 0.0, 0.0, True, False, ("medical or efficacy",))
        >>> vote = tally([JudgeAnswer("j", True, "medical or efficacy", False, None, 0.5)])
        >>> judge_agreement([(rules, vote)]).compliance["medical or efficacy"].agreement
        1.0
    """
    out = JudgeAgreement()
    for rules, vote in pairs:
        out.add(rules, vote)
    return out


@dataclass(frozen=True)
class JudgedCase:
    """A case, its judge request (``None``: nothing was said to judge) and the vote."""

    case: RewardCase
    request: JudgeRequest | None
    vote: Vote | None


def judge_cases(cases: Iterable[tuple[int, RewardCase]], service: JudgeService) -> list[JudgedCase]:
    """Ask the judges about every case at once; one :class:`JudgedCase` per case, in order."""
    models: dict[str, RewardModel] = {}
    pairs = []
    for _, case in cases:
        model = models.get(case.env) or models.setdefault(case.env, rule_model(case.env))
        ctx = build_context(case)
        pairs.append((case, judge_request(ctx, model.score(ctx).scores)))
    votes = service.vote_all(r for _, r in pairs)
    return [JudgedCase(case, req, vote) for (case, req), vote in zip(pairs, votes)]


def judged_models(judged: list[JudgedCase], policy: str) -> Callable[[str], RewardModel]:
    """``env -> RewardModel``: each env's rule-based model with these votes applied."""
    votes = {j.request.key: j.vote for j in judged if j.request is not None and j.vote is not None}
    judge = VotedJudge(votes, policy)
    return lambda env: RewardModel(rule_model(env).config, judge=judge)
