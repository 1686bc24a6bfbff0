"""An optional LLM judge for engagement, through any OpenAI-compatible endpoint.

Off by default. When on (``reward.judge`` in the env spec, or ``RewardModel(judge=...)``),
it asks the model whether the reply helpfully answers the viewer, and blends its verdict
with the rule-based engagement score: ``0.5 * rules + 0.5 * (2 * verdict - 1)``.
Requests use temperature 0 and a fixed seed; verdicts are cached by request, so a
repeated turn costs no call. When the endpoint fails or answers something that is not a
verdict, the rule-based score stands, with the reason recorded, and the failure counted.
"""

from __future__ import annotations

import hashlib
import json
import re

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
    """Grades replies with a model; see the module docstring.

    Args:
        endpoint: Where the judge model is served.
        seed: Sent with every request, for servers that support deterministic sampling.

    Attributes:
        calls / failures / cache_hits: Counters, for reports.
    """

    def __init__(self, endpoint: Endpoint, seed: int = 0):
        self.endpoint, self.seed = endpoint, seed
        self._cache: dict[str, tuple[float, str]] = {}
        self.calls = self.failures = self.cache_hits = 0

    def __call__(self, ctx, rule_score: Score) -> Score:
        q = ctx.question
        if q is None or not ctx.reply.strip():
            return rule_score
        prompt = _PROMPT.format(asker=q.asker, question=q.text or q.intent, reply=ctx.reply[:4000],
                                facts=", ".join(f.label for f in q.facts) or "none (a polite answer)")
        key = hashlib.sha256(f"{self.endpoint.model}\0{prompt}".encode()).hexdigest()
        if key in self._cache:
            self.cache_hits += 1
            verdict, reason = self._cache[key]
        else:
            try:
                verdict, reason = self._ask(prompt)
            except Exception as exc:  # any endpoint failure falls back to the rules
                self.failures += 1
                why = redact(f"{type(exc).__name__}: {exc}", self.endpoint)[:200]
                return Score(rule_score.value, (*rule_score.reasons, f"judge unavailable ({why}); rule-based score kept"))
            self._cache[key] = (verdict, reason)
        value = _clamp(0.5 * rule_score.value + 0.5 * (2 * verdict - 1))
        return Score(value, (*rule_score.reasons, f"judge verdict {verdict:.2f}: {reason}"))

    def _ask(self, prompt: str) -> tuple[float, str]:
        self.calls += 1
        resp = self.endpoint.client().chat.completions.create(
            model=self.endpoint.model, messages=[{"role": "user", "content": prompt}],
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
