"""Rollout records: one JSON line per episode, grouped for GRPO.

Schema (every line of a rollout file):

- ``group_id`` (int), ``sample_index`` (int), ``seed`` (int): the episode's place. All
  samples of a group share the seed, hence the initial state and viewer behaviour.
- ``env`` (str), ``policy`` (object): what ran.
- ``messages`` (list): the trajectory in OpenAI chat format, tool calls and results
  included; ``turn_rewards`` (list): each step's kind and reward breakdown.
- ``return`` (float) and ``returns`` (component -> sum); ``advantage`` (float):
  group-relative, ``(R - group mean) / (group std + eps)`` by default.
- ``metrics``, ``accounting`` (LLM calls, tokens, time, errors), ``steps``,
  ``terminated``, ``truncated``, ``reason``; ``error`` (str or null) when the episode
  could not be played; ``decisions`` for learned policies.
- ``tokens`` (only when the policy logged them): one entry per step, see
  :mod:`liveroom_sim.rollout.tokens`.

Records of a group are written when the group is complete (advantages need the whole
group). Finished episodes of an unfinished group wait in ``<out>.pending`` so that
nothing finished is lost; ``resume`` reads both files.
"""

from __future__ import annotations

import json
from pathlib import Path

from liveroom_sim.rollout.advantages import group_advantages


def episode_record(group_id: int, sample_index: int, seed: int, env_id: str, policy: dict, result=None,
                   error: str | None = None) -> dict:
    """A record without its advantage (set when the group completes)."""
    if result is None:
        return {"group_id": group_id, "sample_index": sample_index, "seed": seed, "env": env_id, "policy": policy,
                "messages": [], "turn_rewards": [], "return": None, "returns": {}, "advantage": None,
                "metrics": {}, "accounting": {}, "steps": 0, "terminated": False, "truncated": True,
                "reason": error, "error": error, "decisions": []}
    tokens = {"tokens": result.tokens} if getattr(result, "tokens", None) else {}  # issue 15
    return {"group_id": group_id, "sample_index": sample_index, "seed": seed, "env": env_id, "policy": policy,
            "messages": result.messages, "turn_rewards": result.turn_rewards, "return": result.total,
            "returns": result.returns, "advantage": None, "metrics": result.metrics, "accounting": result.accounting,
            "steps": result.steps, "terminated": result.terminated, "truncated": result.truncated,
            "reason": result.reason, "error": None, "decisions": [list(d) for d in result.decisions], **tokens}


def with_advantages(group: list[dict], normalize: str = "std", eps: float = 1e-6) -> list[dict]:
    """The group's records with ``advantage`` set (failed episodes get none)."""
    scored = [r for r in group if r["error"] is None]
    advantages = group_advantages([r["return"] for r in scored], normalize, eps) if scored else []
    for r, a in zip(scored, advantages):
        r["advantage"] = a
    return sorted(group, key=lambda r: r["sample_index"])


class RecordFile:
    """Streams records to ``path``; keeps unfinished groups in ``path.pending``."""

    def __init__(self, path: str | Path, resume: bool = False):
        self.path = Path(path)
        self.pending_path = self.path.with_name(self.path.name + ".pending")
        self.done: dict[int, list[dict]] = {}
        self.pending: dict[int, dict[int, dict]] = {}
        if resume:
            for r in _read(self.path):
                self.done.setdefault(r["group_id"], []).append(r)
            for r in _read(self.pending_path):
                if r["group_id"] not in self.done:
                    self.pending.setdefault(r["group_id"], {})[r["sample_index"]] = r
        else:
            self.path.write_text("")
            self.pending_path.unlink(missing_ok=True)
        self._out = self.path.open("a", encoding="utf-8")
        self._pend = self.pending_path.open("a", encoding="utf-8")

    def has(self, group_id: int, sample_index: int) -> bool:
        return group_id in self.done or sample_index in self.pending.get(group_id, {})

    def add(self, record: dict, group_size: int, normalize: str, eps: float) -> list[dict] | None:
        """Keep ``record``; returns the group's records once the group is complete."""
        group = self.pending.setdefault(record["group_id"], {})
        group[record["sample_index"]] = record
        if len(group) < group_size:
            self._pend.write(json.dumps(record, ensure_ascii=False) + "\n")
            self._pend.flush()
            return None
        records = with_advantages(list(self.pending.pop(record["group_id"]).values()), normalize, eps)
        for r in records:
            self._out.write(json.dumps(r, ensure_ascii=False) + "\n")
        self._out.flush()
        self.done[record["group_id"]] = records
        return records

    def close(self) -> None:
        self._out.close()
        self._pend.close()
        if not self.pending:
            self.pending_path.unlink(missing_ok=True)


def _read(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line cut by a crash: that episode is played again
    return out
