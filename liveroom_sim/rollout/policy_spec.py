"""Serialisable policy specs: what to build on a worker, never a pickled client.

``PolicySpec.parse("scripted" | "naive" | "openai" | PATH)`` names a policy; ``build``
makes it where the episode runs. API keys are not part of a spec: workers read
``OPENAI_API_KEY`` from their own environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from liveroom_sim.world.datafile import Frozen


class PolicySpec(Frozen):
    """A policy by kind: ``scripted``, ``naive``, ``openai`` (model, base_url and
    sampling options) or ``learned`` (a checkpoint written by ``liveroom train``).
    ``temperature`` also samples the built-in hosts: the scripted host's wording, order
    and retries (0, the default, is the deterministic reference), the learned host's
    decisions (1 by default: as trained)."""

    kind: Literal["scripted", "naive", "openai", "learned"]
    model: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    extra_body: dict[str, Any] | None = None
    timeout_s: float | None = None
    max_retries: int | None = None
    direct: bool | None = None
    tokens: bool | None = None  # ask the endpoint for sampled token ids and logprobs (liveroom_sim.llm.tokens)
    checkpoint: str | None = None
    parameters: dict | None = None

    @classmethod
    def parse(cls, text: str, **llm: Any) -> "PolicySpec":
        """``scripted``, ``naive``, ``openai`` (with ``model=``, ``base_url=``...) or a
        checkpoint path."""
        if text == "scripted":  # a temperature makes its samples differ (GRPO groups need that)
            return cls(kind=text, temperature=llm.get("temperature"))
        if text == "naive":
            return cls(kind=text)
        if text == "openai":
            if not llm.get("model"):
                raise ValueError("an openai policy needs --model")
            return cls(kind="openai", **{k: v for k, v in llm.items() if v is not None})
        path = Path(text)
        if path.is_dir():
            path = path / "policy.json"
        if not path.exists():
            raise ValueError(f"unknown policy {text!r}: expected scripted, naive, openai or a checkpoint path")
        return cls(kind="learned", checkpoint=str(path.resolve()), temperature=llm.get("temperature"))

    def build(self, sample_seed: int = 0):
        """The policy for one episode; ``sample_seed`` makes a group's samples independent."""
        from liveroom_sim.policies.factory import make_policy

        if self.kind == "learned":
            from liveroom_sim.policies.learned import LearnedAvatar

            t = 1.0 if self.temperature is None else self.temperature
            if self.parameters is not None:
                return LearnedAvatar(self.parameters, sample_seed, temperature=t)
            return LearnedAvatar.load(self.checkpoint, seed=sample_seed, temperature=t)
        if self.kind == "openai":
            options = self.model_dump(exclude={"kind", "checkpoint", "parameters"}, exclude_none=True)
            return make_policy("openai", seed=sample_seed, **options)
        if self.kind == "scripted":
            return make_policy("scripted", temperature=self.temperature or 0.0, seed=sample_seed)
        return make_policy(self.kind)

    def describe(self) -> dict:
        """The spec as recorded in rollout files (no parameters, no secrets)."""
        return self.model_dump(exclude={"parameters"}, exclude_none=True)
