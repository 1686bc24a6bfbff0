"""An optional LLM judge for engagement alone, through any OpenAI-compatible endpoints
(the judge of every component is the rest of this package).

Off by default. When on (``reward.judge`` in the env spec, ``RewardModel(judge=...)``, or
``liveroom rewards calibrate --judge-model M``), it asks a model whether the reply
helpfully answers the viewer, and blends the verdict with the rule-based engagement
score: ``0.5 * rules + 0.5 * (2 * verdict - 1)``.

Up to three judge models vote, as in the TaoLive report: the verdict that counts is the
median of theirs, which with three judges is the verdict a majority holds (two judges at
or above it, two at or below); one judge decides alone and two are averaged. A judge
that fails is left out of the vote; when every judge fails or answers something that is
not a verdict, the rule-based score stands, with the reason recorded, and each failure
is counted. Requests use temperature 0 and a fixed seed; verdicts are cached per model
and request, so a repeated turn costs no call.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections.abc import Sequence

from liveroom_sim.llm.client import Endpoint, redact
from liveroom_sim.rewards.components import Score, _clamp

_PROMPT = (
    "You grade one reply of a live-shopping host. Viewer {asker} asked: {question!r}. "
    "Facts a correct answer contains: {facts}. The host replied: {reply!r}. "
    'Answer only JSON: {{"verdict": <number from 0 to 1: how well the reply answers the viewer, '
    'correct, brief and polite>, "reason": "<one sentence>"}}'
)
_JSON = re.compile(r"\{.*\}", re.S)


class LLMJudge:
    """Grades replies with one to three models that vote; see the module docstring.

    Args:
        endpoint: Where the judge model is served, or a sequence of up to three
            endpoints (one per judge model).
        seed: Sent with every request, for servers that support deterministic sampling.

    Attributes:
        calls / failures / cache_hits: Counters over every judge model, for reports.
        endpoints: The judge models, in voting order.

    Raises:
        ValueError: for no endpoint or more than three.
    """

    def __init__(self, endpoint: Endpoint | Sequence[Endpoint], seed: int = 0):
        self.endpoints = (endpoint,) if isinstance(endpoint, Endpoint) else tuple(endpoint)
        if not 1 <= len(self.endpoints) <= 3:
            raise ValueError(f"a judge votes with 1 to 3 models, got {len(self.endpoints)}")
        self.endpoint, self.seed = self.endpoints[0], seed
        self._cache: dict[str, tuple[float, str]] = {}
        self.calls = self.failures = self.cache_hits = 0

    def __call__(self, ctx, rule_score: Score) -> Score:
        q = ctx.question
        if q is None or not ctx.reply.strip():
            return rule_score
        prompt = _PROMPT.format(asker=q.asker, question=q.text or q.intent, reply=ctx.reply[:4000],
                                facts=", ".join(f.label for f in q.facts) or "none (a polite answer)")
        verdicts, failed = [], []
        for endpoint in self.endpoints:
            try:
                verdicts.append((endpoint, *self._verdict(endpoint, prompt)))
            except Exception as exc:  # any endpoint failure leaves this judge out of the vote
                self.failures += 1
                failed.append(f"{endpoint.model}: " + redact(f"{type(exc).__name__}: {exc}", endpoint)[:200])
        if not verdicts:
            why = failed[0] if len(failed) == 1 else "; ".join(failed)
            if len(self.endpoints) == 1:
                why = why.split(": ", 1)[1]
            return Score(rule_score.value, (*rule_score.reasons, f"judge unavailable ({why}); rule-based score kept"))
        verdict = statistics.median(v for _, v, _ in verdicts)
        value = _clamp(0.5 * rule_score.value + 0.5 * (2 * verdict - 1))
        if len(self.endpoints) == 1:
            return Score(value, (*rule_score.reasons, f"judge verdict {verdict:.2f}: {verdicts[0][2]}"))
        votes = ", ".join(f"{e.model} {v:.2f}" for e, v, _ in verdicts)
        left_out = f"; left out: {'; '.join(failed)}" if failed else ""
        closest = min(verdicts, key=lambda x: abs(x[1] - verdict))
        return Score(value, (*rule_score.reasons,
                             f"judge vote {verdict:.2f} ({votes}{left_out}): {closest[2]}"))

    def _verdict(self, endpoint: Endpoint, prompt: str) -> tuple[float, str]:
        key = hashlib.sha256(f"{endpoint.resolved_base_url()}\0{endpoint.model}\0{prompt}".encode()).hexdigest()
        if key in self._cache:
            self.cache_hits += 1
            return self._cache[key]
        self._cache[key] = found = self._ask(prompt, endpoint)
        return found

    def _ask(self, prompt: str, endpoint: Endpoint) -> tuple[float, str]:
        self.calls += 1
        resp = endpoint.client().chat.completions.create(
            model=endpoint.model, messages=[{"role": "user", "content": prompt}],
            temperature=0, seed=self.seed, max_tokens=200,
        )
        if not resp.choices:
            raise ValueError("the judge returned no choices")
        text = resp.choices[0].message.content or ""
        match = _JSON.search(text)
        if not match:
            raise ValueError(f"the judge's answer is not JSON: {text[:80]!r}")
        data = json.loads(match.group(0))
        verdict = float(data["verdict"])
        if not 0.0 <= verdict <= 1.0:
            raise ValueError(f"verdict {verdict} outside [0, 1]")
        return verdict, str(data.get("reason", ""))[:200]
