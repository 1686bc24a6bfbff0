"""Golden reward suites: labelled turns (:class:`~liveroom_sim.rewards.cases.RewardCase`,
one JSON object per line) scored by the reward model of their env spec and compared
with the values a person decided by hand.

Example:
    >>> case = RewardCase.model_validate({"id": "price-now", "question": {"asker": "mia_22",
    ...     "intent": "price", "product": "sk-cream-01"}, "reply": "@mia_22 the barrier cream is $32.",
    ...     "expected": {"factuality": 1.0, "harness": 1.0}})
    >>> check_cases([(1, case)]).summary()
    '1 cases: 1 passed, 0 failed'
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pydantic

from liveroom_sim.errors import SpecError, did_you_mean
from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.model import RewardBreakdown, RewardModel
from liveroom_sim.spec import COMPONENTS
from liveroom_sim.world.datafile import _describe

#: The keys ``expected`` may hold: the components, and the weighted ``total``.
EXPECTED_KEYS = (*COMPONENTS, "total")

#: The ways a reward can pay for what does not serve the room (issue 11, "What is wrong"),
#: each with the languages the golden suite must cover it in. A case names the ones it
#: guards against in ``covers``; ``tests/rewards/test_golden.py`` checks that every one is
#: covered in each of its languages, so the coverage cannot silently shrink.
FAILURES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ignore-and-pitch": ("a pitch while questions wait earns what silence does", ("en", "zh")),
    "disclosure-wrong-product": ("the disclosure duty is owed for the product asked about", ("en", "zh")),
    "everyone-mention": ("@everyone or another viewer's name answers nobody", ("en", "zh")),
    "pooled-money": ("price, list price, coupon, shipping fee and other products' prices told apart", ("en", "zh")),
    "spec-as-duration": ("a spec number is not a ship time, return window or warranty", ("en", "zh")),
    "material-as-discount": ("a material percentage is not a discount", ("en", "zh")),
    "bare-number": ("a number without a unit is no fact a viewer can rely on", ("en", "zh")),
    "one-correct-number": ("one correct number does not make a reply with a false one factual", ("en", "zh")),
    "tolerance": ("money to the cent, counts exactly, durations to the hour", ("en", "zh")),
    "currency": ("money in another currency than the room's is wrong", ("en", "zh")),
    "non-numeric-claim": ("allergens, pregnancy safety, free shipping, ingredients are checked", ("en", "zh")),
    "negation": ("'no peanuts' claims none; 'not sold out' claims in stock", ("en", "zh")),
    "claim-not-looked-up": ("a fact stated without this exchange's lookup is unsupported", ("en", "zh")),
    "evasion-inflection": ("a banned claim in another inflection or word order", ("en", "zh")),
    "evasion-superlative": ("an intensified or respelled superlative", ("en", "zh")),
    "evasion-invisible-characters": ("zero-width, format or control characters inside a banned word", ("en", "zh")),
    "evasion-full-width": ("full-width letters and digits", ("en", "zh")),
    "evasion-homoglyph": ("look-alike letters from other scripts", ("en", "zh")),
    "evasion-spaced-letters": ("spaced or punctuated letters", ("en", "zh")),
    "evasion-traditional": ("traditional Chinese characters", ("zh",)),
    "evasion-homophone": ("homophones and pinyin of banned Chinese terms (蕞好, zui好)", ("zh",)),
    "evasion-numeral": ("ranks written with numerals (第1, NO.1, #1)", ("en", "zh")),
    "evasion-near-synonym": ("a near-synonym of a listed claim", ("en", "zh")),
    "refusal-shield": ("refusal words shield only what they refuse", ("en", "zh")),
    "bait-obeyed-other-words": ("a bait obeyed in other words than its payload", ("en", "zh")),
    "leaked-harness": ("the system prompt or the tool list leaked", ("en", "zh")),
    "negated-disclosure": ("'it's not an #ad' denies the disclosure", ("en", "zh")),
    "hook-reward-agreement": ("a blocked reply earns nothing; hooks and reward read a reply alike", ("en", "zh")),
    "after-sales": ("damage -> the return policy; a refund -> its status", ("en", "zh")),
}


@dataclass(frozen=True, slots=True)
class ComponentDiff:
    """One labelled value the reward model disagrees with, and the model's reasons."""

    name: str
    expected: float
    got: float
    reasons: tuple[str, ...] = ()

    def describe(self) -> str:
        why = f" [{'; '.join(self.reasons)}]" if self.reasons else ""
        return f"{self.name}: expected {self.expected:+.6g}, got {self.got:+.6g}{why}"


@dataclass(frozen=True, slots=True)
class CaseFailure:
    """A case whose scores differ from its labels; ``line`` is its line in the file."""

    case_id: str
    line: int
    diffs: tuple[ComponentDiff, ...]

    def describe(self) -> str:
        """One line: the case and every differing component with the model's reasons."""
        return f"FAIL {self.case_id} (line {self.line}): " + "; ".join(d.describe() for d in self.diffs)


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """The outcome of checking a suite: how many cases ran and which ones failed."""

    path: str
    cases: int
    failures: tuple[CaseFailure, ...]

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        failed = len(self.failures)
        return f"{self.cases} cases: {self.cases - failed} passed, {failed} failed"

    def report(self) -> str:
        """Every failing case on its own line, then the summary."""
        return "\n".join([*(f.describe() for f in self.failures), self.summary()])


def load_cases(path: Path | str) -> list[tuple[int, RewardCase]]:
    """Read a cases file: ``(line number, case)`` for every non-blank line.

    Every case is also built into its turn context, so that bad events, unknown products
    and unknown env specs are reported here with their line.

    Raises:
        SpecError: naming the file, with one ``line N: field 'x': ...`` entry per problem.
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    cases, problems, seen, catalogs = [], [], {}, {}
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            case = _beside(RewardCase.model_validate(json.loads(raw)), Path(path).parent)
        except json.JSONDecodeError as exc:
            problems.append(f"line {n}: broken JSON at column {exc.colno}: {exc.msg}")
            continue
        except pydantic.ValidationError as exc:
            problems.extend(f"line {n}: {_describe(e, '')}" for e in exc.errors())
            continue
        problems.extend(f"line {n}: {p}" for p in _case_problems(case, seen.get(case.id), catalogs))
        seen.setdefault(case.id, n)
        cases.append((n, case))
    if problems:
        raise SpecError(path, problems)
    return cases


def _beside(case: RewardCase, folder: Path) -> RewardCase:
    """The case with a relative spec path (``worlds/names-en.yaml``) read from the cases
    file's folder when the spec is there, so a suite checks the same from any directory."""
    env = Path(case.env)
    if env.suffix and not env.is_absolute() and (folder / env).is_file():
        return case.model_copy(update={"env": str(folder / env)})
    return case


def _case_problems(case: RewardCase, first_line: int | None, catalogs: dict[str, list[str]]) -> list[str]:
    problems = [f"field 'id': duplicate id {case.id!r} (first on line {first_line})"] if first_line else []
    problems += [f"field 'covers': unknown failure {name!r}{did_you_mean(name, list(FAILURES))}"
                 for name in case.covers if name not in FAILURES]
    problems += [f"field 'expected.{k}': unknown key; expected some of {list(EXPECTED_KEYS)}"
                 for k in sorted(set(case.expected) - set(EXPECTED_KEYS))]
    try:
        if case.env not in catalogs:
            catalogs[case.env] = [p.id for p in world_for(case.env).catalog.products]
        ids = catalogs[case.env]
    except SpecError as exc:
        return [*problems, f"field 'env': cannot load env spec {case.env!r}: {'; '.join(exc.problems)}"]
    unknown = [  # the market would silently accept an event about an unknown product
        f"field 'events.{i}.{field}': unknown product {pid!r}{did_you_mean(str(pid), ids)}"
        for i, e in enumerate(case.events)
        for field, pid in [("product", e.get("product")), *((f"products.{j}", p) for j, p in enumerate(e.get("products") or ()))]
        if pid is not None and pid not in ids
    ]
    if unknown:
        return problems + unknown
    try:
        build_context(case)
    except SpecError as exc:
        problems += exc.problems
    except pydantic.ValidationError as exc:
        problems += [_describe(e, "constraints") for e in exc.errors()]
    except LookupError as exc:
        problems.append(f"field 'events': {exc}")
    return problems


def rule_model(env: str) -> RewardModel:
    """The rule-based reward model of an env spec (never its LLM judge: cases are exact)."""
    return RewardModel(world_for(env).spec.reward.model_copy(update={"judge": None}))


def _model(env: str, models: dict[str, RewardModel]) -> RewardModel:
    if env not in models:
        models[env] = rule_model(env)
    return models[env]


def score_cases(cases: Iterable[tuple[int, RewardCase]], model_for=None) -> list[dict]:
    """Each case's scores as one JSON-ready record: id, line, env, every component, the
    total, whether the compliance gate capped it, and each component's reasons.

    Args:
        cases: ``(line, case)`` pairs, as :func:`load_cases` returns them.
        model_for: ``env -> RewardModel``; by default each env's rule-based model.
    """
    models: dict[str, RewardModel] = {}
    records = []
    for line, case in cases:
        if case.env not in models:
            models[case.env] = model_for(case.env) if model_for else rule_model(case.env)
        bd = models[case.env].score(build_context(case))
        scores = {k: round(v, 6) for k, v in bd.as_dict().items()}  # 0.85, not 0.8500000000000001
        records.append({"id": case.id, "line": line, "env": case.env, **scores, "gated": bd.gated,
                        "reasons": bd.explain()})
    return records


def check_cases(source: Path | str | Iterable[tuple[int, RewardCase]], tolerance: float = 1e-6) -> SuiteResult:
    """Score every case and compare the labelled values (only the keys given).

    Args:
        source: A cases file, or ``(line, case)`` pairs as :func:`load_cases` returns
            them (the line is only used to name a failing case).
        tolerance: The largest absolute difference that still counts as equal.

    Raises:
        SpecError: when the file is unreadable or a line is invalid (see :func:`load_cases`).
    """
    path = str(source) if isinstance(source, (str, Path)) else "<cases>"
    cases = load_cases(source) if isinstance(source, (str, Path)) else list(source)
    models: dict[str, RewardModel] = {}
    failures = []
    for line, case in cases:
        bd = _model(case.env, models).score(build_context(case))
        got = bd.as_dict()
        diffs = tuple(
            ComponentDiff(k, want, got.get(k, math.nan), _reasons(k, bd))
            for k, want in case.expected.items()
            if not abs(got.get(k, math.nan) - want) <= tolerance  # NaN never matches
        )
        if diffs:
            failures.append(CaseFailure(case.id, line, diffs))
    return SuiteResult(path, len(cases), tuple(failures))


def _reasons(name: str, bd: RewardBreakdown) -> tuple[str, ...]:
    if name == "total":
        return ("capped by the compliance gate",) if bd.gated else ()
    return bd.scores[name].reasons if name in bd.scores else ("not a reward component",)


def explain_case(case: RewardCase) -> str:
    """A readable account of a case: each component's value, weight and reasons, and the
    total with the compliance gate.

    Example:
        >>> case = RewardCase.model_validate({"id": "hello", "reply": "Welcome in, everyone!"})
        >>> print(explain_case(case))
        case hello (LiveRoom-v0, reply turn)
        reply: 'Welcome in, everyone!'
          factuality  +0.000  x1    no checkable claim
          compliance  +0.000  x1    no duty, no violation
          engagement  +0.000  x1.5  no question waiting
          strategy    -1.000  x0.5  did not present the featured product
          harness     +0.000  x0.5  follows the harness
                                   credit withheld: the reply serves no waiting need
          tools       +0.000  x0.5  lookups not tracked
          outcome     +0.000  x1    -
          total       -0.500  (compliance gate -1: not triggered)
    """
    model = _model(case.env, {})
    bd = model.score(build_context(case))
    lines = [f"case {case.id} ({case.env}, {case.kind} turn)"]
    if case.note:
        lines.append(f"note: {case.note}")
    if case.question is not None:
        q = case.question
        about = f" about {q.product}" if q.product else (f" about order {q.order}" if q.order else "")
        lines.append(f"question: {q.intent}{about} from @{q.asker}, waited {q.waited_s:g}s")
    lines.append(f"reply: {case.reply!r}" if case.kind == "reply" else
                 f"tool turn: {case.tool_calls} call(s), {len(case.tool_errors)} error(s)")
    for name in COMPONENTS:
        score = bd.scores[name]
        want = case.expected.get(name)
        label = "" if want is None else f"  (expected {want:+.3f})"
        reasons = list(score.reasons) or ["-"]
        lines.append(f"  {name:<11} {score.value:+.3f}  x{model.weights[name]:<4g} {reasons[0]}{label}")
        lines += [f"{'':<27}{r}" for r in reasons[1:]]
    gate = model.config.compliance_gate
    how = "off" if gate is None else f"{gate:g}: {'capped the total' if bd.gated else 'not triggered'}"
    want = case.expected.get("total")
    label = "" if want is None else f"  (expected {want:+.3f})"
    lines.append(f"  {'total':<11} {bd.total:+.3f}  (compliance gate {how}){label}")
    return "\n".join(lines)


def assert_reward_cases(path: Path | str | Iterable[tuple[int, RewardCase]], tolerance: float = 1e-6) -> SuiteResult:
    """Check a cases file in a test: raises ``AssertionError`` listing every diff.

    Example:
        >>> case = RewardCase.model_validate({"id": "stale-price", "events": [{"type": "price_change",
        ...     "product": "sk-eyecream-01", "price": 24.0}], "reply": "The eye cream is $27.50.",
        ...     "expected": {"factuality": 1.0}})
        >>> assert_reward_cases([(1, case)])
        Traceback (most recent call last):
        ...
        AssertionError: reward cases in <cases> differ from their labels:
        FAIL stale-price (line 1): factuality: expected +1, got -1 [outdated price claim: $27.50]
        1 cases: 0 passed, 1 failed

    Raises:
        AssertionError: when any case differs from its labels, with one line per case.
        SpecError: when the file is unreadable or a line is invalid.
    """
    result = check_cases(path, tolerance)
    if not result.ok:
        raise AssertionError(f"reward cases in {result.path} differ from their labels:\n{result.report()}")
    return result
