"""Rollout records: one JSON line per episode, grouped for GRPO, written crash-safely.

Schema (every line of a rollout file):

- ``group_id`` (int), ``sample_index`` (int), ``seed`` (int): the episode's place. All
  samples of a group share the seed, hence the initial state and viewer behaviour.
- ``env`` (str), ``policy`` (object, credentials stripped), ``group_size`` (int),
  ``normalize`` (str): what ran and how; ``provenance`` (object): the LiveRoom version,
  the spec's id and the digests of its files' content and of its reward configuration
  (:mod:`liveroom_sim.provenance`). ``--resume`` checks them all (the spec by its digest).
- ``messages`` (list): the trajectory in OpenAI chat format, tool calls and results
  included; ``turn_rewards`` (list): each step's kind and reward breakdown.
- ``return`` (float) and ``returns`` (component -> sum); ``advantage`` (float):
  group-relative, ``(R - group mean) / (group std + eps)`` by default.
- ``metrics``, ``accounting`` (LLM calls, tokens, time, errors), ``steps``,
  ``terminated``, ``truncated``, ``reason``; ``error`` (str or null) when the episode
  could not be played to its end (its transcript so far is kept); ``infra`` (bool) when
  the endpoint, not the policy, was the cause; ``policy_faults`` (turns the endpoint
  answered nothing usable, played as empty replies); ``waited_s`` (seconds paused for
  outages); ``invalid_code_points`` (how many lone surrogates the model's text held:
  the room heard each as U+FFFD, and so do the messages; any left elsewhere are stored
  as ``\\udXXX`` escapes, so the file is always valid UTF-8);
  ``decisions`` for learned policies; ``tokens`` (only when the policy logged them):
  one entry per step, see :mod:`liveroom_sim.rollout.tokens`.

Files: ``<out>`` holds whole groups only, each appended in one write and flushed (an
advantage needs the whole group). Finished episodes of an unfinished group wait in
``<out>.pending``; infrastructure failures go to ``<out>.failures`` (for inspection: they
are never part of a group). ``--resume`` (:mod:`liveroom_sim.rollout.resume`) cuts a torn
tail off into ``<out>.torn`` and plays what is missing.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from liveroom_sim.llm.client import safe_url, scrub
from liveroom_sim.rollout.advantages import group_advantages
from liveroom_sim.rollout.jsonl import RecordFileError, encode, json_line  # noqa: F401 (RecordFileError: public here too)

def episode_record(group_id: int, sample_index: int, seed: int, env_id: str, policy: dict, result=None,
                   error: str | None = None, infra: bool = False) -> dict:
    """A record without its advantage (set when the group completes)."""
    policy = {**policy, "base_url": safe_url(policy["base_url"])} if policy.get("base_url") else policy
    place = {"group_id": group_id, "sample_index": sample_index, "seed": seed, "env": env_id, "policy": policy}
    if result is None:
        return {**place, "messages": [], "turn_rewards": [], "return": None, "returns": {}, "advantage": None,
                "metrics": {}, "accounting": {}, "steps": 0, "terminated": False, "truncated": True,
                "reason": error, "error": scrub(error or "")[:500] or None, "infra": infra, "policy_faults": 0,
                "waited_s": 0.0, "decisions": []}
    tokens = {"tokens": result.tokens} if getattr(result, "tokens", None) else {}  # token-level records
    return {**place, "messages": result.messages, "turn_rewards": result.turn_rewards,
            "return": None if result.error else result.total, "returns": result.returns, "advantage": None,
            "metrics": result.metrics, "accounting": result.accounting, "steps": result.steps,
            "terminated": result.terminated, "truncated": result.truncated, "reason": result.reason,
            "error": result.error, "infra": result.infra, "policy_faults": result.policy_faults,
            "waited_s": result.waited_s, "decisions": [list(d) for d in result.decisions],
            "invalid_code_points": (result.accounting or {}).get("invalid_code_points", 0), **tokens}


def with_advantages(group: list[dict], normalize: str = "std", eps: float = 1e-6) -> list[dict]:
    """The group's records with ``advantage`` set (failed episodes get none)."""
    scored = [r for r in group if r["error"] is None]
    advantages = group_advantages([r["return"] for r in scored], normalize, eps) if scored else []
    for r, a in zip(scored, advantages):
        r["advantage"] = a
    return sorted(group, key=lambda r: r["sample_index"])


class RecordFile:
    """Streams records to ``path``; memory holds only the groups still in play.

    Args:
        settings: ``env``, ``policy``, ``group_size``, ``seed``, ``normalize``, ``eps``:
            stamped on every record and checked by ``resume``.
        resume: Go on with an existing file (which must exist and match ``settings``).
        force: Replace an existing file; without it (or ``resume``) an existing file is
            an error, so a typo cannot wipe a finished run.
    """

    def __init__(self, path: str | Path, settings: dict, resume: bool = False, force: bool = False):
        from liveroom_sim.rollout.resume import Resumed, resume_files

        self.path = Path(path)
        self.settings, self.group_size = settings, settings["group_size"]
        self.pending_path = self.path.with_name(self.path.name + ".pending")
        self.failures_path = self.path.with_name(self.path.name + ".failures")
        self.pending: dict[int, dict[int, dict]] = {}
        self.dropped: set[int] = set()  # groups given up this run: their finished samples stay in .pending
        if resume:
            self.resumed = resume_files(self.path, settings)
            self.done, self.pending = self.resumed.done, self.resumed.pending
        else:
            if self.path.exists() and not force:
                raise RecordFileError(f"{self.path} exists: pass --resume to go on with it, or --force to replace it")
            if self.path.parent and not self.path.parent.is_dir():
                raise RecordFileError(f"no folder {self.path.parent} for {self.path.name}")
            self.resumed, self.done = Resumed(), set()
            with _naming(self.path):
                self.path.write_text("")
            for stale in (self.pending_path, self.failures_path):
                stale.unlink(missing_ok=True)
        with _naming(self.path):
            self._out = self.path.open("a", encoding="utf-8")
        with _naming(self.pending_path):
            self._pend = self.pending_path.open("a", encoding="utf-8")
            self._pending_bytes = self.pending_path.stat().st_size
        self._failures = None

    def has(self, group_id: int, sample_index: int) -> bool:
        return group_id in self.done or sample_index in self.pending.get(group_id, {})

    def stamp(self, record: dict) -> dict:
        record["group_size"], record["normalize"] = self.group_size, self.settings["normalize"]
        if self.settings.get("provenance"):
            record["provenance"] = self.settings["provenance"]
        return record

    def add(self, record: dict) -> list[dict] | None:
        """Keep ``record``; returns the group's records once the group is complete (then
        written to the file in one write)."""
        gid = self.stamp(record)["group_id"]
        if gid in self.dropped:
            self._keep_pending(record)
            return None
        group = self.pending.setdefault(gid, {})
        group[record["sample_index"]] = record
        if len(group) < self.group_size:
            self._keep_pending(record)
            return None
        records = with_advantages(list(self.pending.pop(gid).values()), self.settings["normalize"],
                                  self.settings["eps"])
        with _naming(self.path):
            self._out.write("".join(encode(r) for r in records))
            self._out.flush()
        self.done.add(gid)
        if self._pending_bytes > 64 * 2**20:
            self._compact_pending()
        return records

    def failed(self, record: dict) -> None:
        """Keep an infrastructure failure aside in ``<out>.failures`` (not in any group)."""
        with _naming(self.failures_path):
            if self._failures is None:
                self._failures = self.failures_path.open("a", encoding="utf-8")
            self._failures.write(encode(self.stamp(record)))
            self._failures.flush()

    def drop(self, group_id: int) -> None:
        """Give up ``group_id`` for this run: it is not written; ``--resume`` completes it."""
        self.dropped.add(group_id)
        self.pending.pop(group_id, None)  # its finished samples are in .pending already

    def _keep_pending(self, record: dict) -> None:
        line = encode(record)
        with _naming(self.pending_path):
            self._pend.write(line)
            self._pend.flush()
        self._pending_bytes += len(line)

    def _compact_pending(self) -> None:
        """Rewrite ``.pending`` without the records of groups written since (it would
        otherwise hold a second copy of the whole run)."""
        from liveroom_sim.rollout.resume import filter_lines

        self._pend.close()
        self._pending_bytes = filter_lines(self.pending_path, lambda r: r.get("group_id") not in self.done)
        self._pend = self.pending_path.open("a", encoding="utf-8")

    def close(self) -> None:
        with contextlib.suppress(OSError):  # a write that failed already raised, naming its file
            self._out.close()
        with contextlib.suppress(OSError):
            self._pend.close()
        if self._failures is not None:
            self._failures.close()
        if not self.pending and not self.dropped:
            self.pending_path.unlink(missing_ok=True)
        elif self._pending_bytes:
            self._compact_pending()
            self._pend.close()


@contextlib.contextmanager
def _naming(path: Path):
    """Turn an OS error (a full disk, a file size limit, no permission) into a
    :class:`RecordFileError` naming ``path``: the OS's own message names no file."""
    try:
        yield
    except OSError as exc:
        raise RecordFileError(f"cannot write {path}: {exc.strerror or exc}") from None
