"""Serialisable policy specs: what to build on a worker, never a pickled client.

``PolicySpec.parse("scripted" | "naive" | "openai" | PATH | "module:factory")`` names a
policy; ``build`` makes it where the episode runs (a user's factory: see
:mod:`liveroom_sim.rollout.python_policy`). API keys are not part of a spec: workers read
``OPENAI_API_KEY`` from their own environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from liveroom_sim.world.datafile import Frozen


class PolicySpec(Frozen):
    """A policy by kind: ``scripted``, ``naive``, ``openai`` (model, base_url and
    sampling options), ``learned`` (a checkpoint written by ``liveroom train``) or
    ``python`` (``factory``: ``package.module:factory`` or ``path/file.py:factory``).
    ``temperature`` also samples the built-in hosts: the scripted host's wording, order
    and retries (0, the default, is the deterministic reference), the learned host's
    decisions (1 by default: as trained)."""

    kind: Literal["scripted", "naive", "openai", "learned", "python"]
    factory: str | None = None
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
        """``scripted``, ``naive``, ``openai`` (with ``model=``, ``base_url=``...), a
        checkpoint path, or a factory's import path (checked here: a bad one raises
        ``ValueError`` naming what is wrong)."""
        if text == "scripted":  # a temperature makes its samples differ (GRPO groups need that)
            return cls(kind=text, temperature=llm.get("temperature"))
        if text == "naive":
            return cls(kind=text)
        if text == "openai":
            if not llm.get("model"):
                raise ValueError("an openai policy needs --model")
            return cls(kind="openai", **{k: v for k, v in llm.items() if v is not None})
        from liveroom_sim.rollout.python_policy import is_import_path, load_factory

        if is_import_path(text):
            load_factory(text)
            return cls(kind="python", factory=text)
        path = Path(text)
        if path.is_dir():
            path = path / "policy.json"
        if not path.exists():
            raise ValueError(f"unknown policy {text!r}: expected scripted, naive, openai, a checkpoint path or a "
                             "factory (package.module:factory or path/file.py:factory)")
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
        if self.kind == "python":
            from liveroom_sim.rollout.python_policy import build_policy

            return build_policy(self.factory, sample_seed)
        if self.kind == "openai":
            options = self.model_dump(exclude={"kind", "checkpoint", "parameters", "factory"}, exclude_none=True)
            return make_policy("openai", seed=sample_seed, **options)
        if self.kind == "scripted":
            return make_policy("scripted", temperature=self.temperature or 0.0, seed=sample_seed)
        return make_policy(self.kind)

    def describe(self) -> dict:
        """The spec as recorded in rollout files (no parameters, no secrets)."""
        return self.model_dump(exclude={"parameters"}, exclude_none=True)
