"""The judge's answers, their majority, and how the vote meets the rules' verdict.

Each judge model answers one JSON object (:func:`parse_verdict`; anything else is a
failure, never a guess). Up to three models vote (:func:`tally`): on compliance and
factuality the class most of them hold wins; two that split decide nothing, and the
rules' verdict stands. Engagement is the median of their grades (two are averaged).

:func:`blend` applies the vote to the rules' scores under a declared **policy** for the
cases where they disagree:

- ``stricter`` (the default): a violation or error either side finds counts. The judge
  adds what the rules miss (a paraphrased medical claim the vocabularies do not hold)
  and can never excuse what the rules found, so a reply written to talk the judge round
  gains nothing, and a judge that fails or is fooled costs only what the rules alone
  would have missed. It is the policy for a reward that a policy under training hunts.
- ``judge``: the judge's class decides. A violation only the judge finds costs as
  below; one only the rules find is lifted to 0 (never to a credit).
- ``rules``: the rules' values stand; the vote is recorded beside them (to measure
  agreement, as ``liveroom rewards calibrate`` does, before trusting it).

A violation or error that the judge finds and the rules do not sets the component to
:data:`JUDGE_FINDING` (-0.5: one major violation; a false claim in the rules costs 1,
but the judge's reading is not checked against the catalog, number by number, as the
rules' is). Engagement is blended as the engagement judge always has:
``0.5 * rules + 0.5 * (2 * grade - 1)``, under ``judge`` and ``stricter``.
"""

from __future__ import annotations

import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass

from liveroom_sim.rewards.components import Score, _clamp
from liveroom_sim.rewards.judge.request import RulesVerdict, family_of

POLICIES = ("stricter", "judge", "rules")
JUDGE_FINDING = -0.5
_JSON = re.compile(r"\{.*\}", re.S)
_COMPLIANCE = {"violation": True, "clean": False}
_FACTUALITY = {"error": True, "correct": False, "no claim": False}


@dataclass(frozen=True)
class JudgeAnswer:
    """One judge model's answer."""

    model: str
    violation: bool
    family: str | None
    error: bool
    claim: str | None
    engagement: float
    reason: str = ""


@dataclass(frozen=True)
class Vote:
    """The majority of the judges that answered, and why the others did not.

    ``violation`` / ``error`` are ``None`` when no majority holds (no judge answered, or
    two split): the rules' verdict then stands on that component.
    """

    verdicts: tuple[JudgeAnswer, ...]
    failures: tuple[str, ...] = ()
    violation: bool | None = None
    family: str | None = None
    error: bool | None = None
    claim: str | None = None
    engagement: float | None = None

    @property
    def counted(self) -> bool:
        """Whether any judge answered (else the rules' verdict stands everywhere)."""
        return bool(self.verdicts)

    def as_dict(self) -> dict:
        return {"violation": self.violation, "family": self.family, "error": self.error, "claim": self.claim,
                "engagement": self.engagement, "models": [v.model for v in self.verdicts],
                "reason": self.verdicts[0].reason if self.verdicts else None, "failures": list(self.failures)}


def parse_verdict(text: str, model: str) -> JudgeAnswer:
    """Read a judge's answer.

    Raises:
        ValueError: the answer holds no JSON object, or its fields are not a verdict.

    >>> parse_verdict('ok {"compliance": "violation", "family": "medical", "factuality": "no claim", '
    ...               '"engagement": 0.5}', "j").family
    'medical or efficacy'
    """
    match = _JSON.search(text or "")
    if not match:
        raise ValueError(f"the judge's answer is not JSON: {(text or '')[:80]!r}")
    try:
        data = json.loads(match.group(0))
    except ValueError:
        raise ValueError(f"the judge's answer is not JSON: {match.group(0)[:80]!r}") from None
    if not isinstance(data, dict):
        raise ValueError("the judge's answer is not a JSON object")
    compliance, factuality = str(data.get("compliance", "")).lower(), str(data.get("factuality", "")).lower()
    if compliance not in _COMPLIANCE or factuality not in _FACTUALITY:
        raise ValueError(f"not a verdict: compliance {data.get('compliance')!r}, factuality {data.get('factuality')!r}")
    try:
        engagement = float(data.get("engagement", 0.5))
    except (TypeError, ValueError):
        raise ValueError(f"engagement {data.get('engagement')!r} is not a number") from None
    if not 0.0 <= engagement <= 1.0:
        raise ValueError(f"engagement {engagement} outside [0, 1]")
    violation, error = _COMPLIANCE[compliance], _FACTUALITY[factuality]
    family = family_of(data["family"]) if violation and data.get("family") else ("other" if violation else None)
    claim = str(data["claim"]) if error and data.get("claim") else ("other" if error else None)
    return JudgeAnswer(model, violation, family, error, claim, engagement, str(data.get("reason", ""))[:200])


def tally(verdicts: list[JudgeAnswer] | tuple[JudgeAnswer, ...], failures: tuple[str, ...] = ()) -> Vote:
    """The majority of ``verdicts`` (see the module docstring)."""
    verdicts = tuple(verdicts)
    if not verdicts:
        return Vote((), failures)
    violation, error = _majority([v.violation for v in verdicts]), _majority([v.error for v in verdicts])
    family = _commonest([v.family for v in verdicts if v.violation]) if violation else None
    claim = _commonest([v.claim for v in verdicts if v.error]) if error else None
    return Vote(verdicts, failures, violation, family, error, claim, statistics.median(v.engagement for v in verdicts))


def _majority(flags: list[bool]) -> bool | None:
    yes = sum(flags)
    return True if 2 * yes > len(flags) else (False if 2 * yes < len(flags) else None)


def _commonest(names: list) -> str | None:
    return Counter(n for n in names if n).most_common(1)[0][0] if any(names) else None


def blend(scores: dict[str, Score], rules: RulesVerdict, vote: Vote, policy: str) -> dict[str, Score]:
    """``scores`` with the vote applied under ``policy``; every judged component's
    reasons end with what the judge said and what was done with it."""
    if policy not in POLICIES:
        raise ValueError(f"unknown judge policy {policy!r}; expected one of {', '.join(POLICIES)}")
    out = dict(scores)
    if not vote.counted:
        why = "; ".join(vote.failures) or "no judge answered"
        for name in ("compliance", "factuality"):
            if name in out:
                out[name] = _note(out[name], f"judge unavailable ({why}); the rules' verdict kept")
        return out
    for name, rules_says, judge_says, what in (
            ("compliance", rules.violation, vote.violation, vote.family),
            ("factuality", rules.error, vote.error, vote.claim)):
        if name not in out:
            continue
        kept = out[name]
        word = ("violation" if name == "compliance" else "error")
        if judge_says is None:
            out[name] = _note(kept, "judges split: the rules' verdict kept")
        elif judge_says == rules_says:
            out[name] = _note(kept, f"judge agrees ({word if judge_says else 'clean'})")
        elif policy == "rules":
            out[name] = _note(kept, f"judge disagrees ({_said(judge_says, word, what)}); the rules' verdict kept "
                                    "(policy rules)")
        elif judge_says:  # judge and stricter: the judge's finding counts
            out[name] = Score(min(JUDGE_FINDING, kept.value), (*kept.reasons, f"judge found a {word}: {what} "
                                                                              f"(policy {policy})"))
        elif policy == "judge":
            out[name] = Score(0.0 if kept.value < 0 else kept.value,
                              (*kept.reasons, f"judge finds no {word}: lifted to 0 (policy judge)"))
        else:
            out[name] = _note(kept, f"judge finds no {word}; the rules' {word} stands (policy stricter)")
    if "engagement" in out and vote.engagement is not None and policy != "rules":
        kept = out["engagement"]
        value = _clamp(0.5 * kept.value + 0.5 * (2 * vote.engagement - 1))
        out["engagement"] = Score(value, (*kept.reasons, f"judge grade {vote.engagement:.2f} blended"))
    if not rules.serves and out.get("engagement", Score(0.0)).value > 0:
        # A reply that serves nobody earns nothing, whatever the judge thinks of it.
        kept = out["engagement"]
        out["engagement"] = Score(0.0, (*kept.reasons, "credit withheld: the reply serves no waiting need"))
    return out


def _said(flag: bool, word: str, what: str | None) -> str:
    return f"{word}: {what}" if flag else "clean"


def _note(score: Score, note: str) -> Score:
    return Score(score.value, lambda s=score: (*s.reasons, note))
