"""``--resume``: read a rollout file back in one streaming pass and repair what a crash tore.

A group is written in one write, so after a crash (kill -9, a full disk, a power cut) the
file is whole groups followed perhaps by a torn tail: a half-written line, or the first
lines of a group. Resuming:

1. checks that the file exists and that its records were written with this run's env
   (the content of its spec's files, by digest, not only its id), policy (model and sampling options; not the endpoint's address) and settings
   (group size, first seed, normalisation), or says which differ;
2. keeps every whole group, moves everything else (torn lines, partial or repeated
   groups) aside into ``<out>.torn`` and cuts it from the file, so the next group is
   never glued onto a torn line; the episodes of a partly written group are all played
   again;
3. reads ``<out>.pending`` (finished episodes of unfinished groups) the same way.

Memory holds the ids of the whole groups and the pending records, never the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from liveroom_sim.rollout.jsonl import RecordFileError, encode

_TRANSPORT = ("base_url", "timeout_s", "max_retries", "direct")  # may change between runs


@dataclass
class Resumed:
    """What a resumed file held: whole groups, pending records, what was torn."""

    done: set[int] = field(default_factory=set)
    pending: dict[int, dict[int, dict]] = field(default_factory=dict)
    records: int = 0
    torn_lines: int = 0
    torn_groups: set[int] = field(default_factory=set)

    def as_dict(self) -> dict:
        return {"torn_lines": self.torn_lines, "torn_groups": len(self.torn_groups)}


def resume_files(path: Path, settings: dict) -> Resumed:
    """Repair ``path`` (and its ``.pending``) in place and return what they hold.

    Raises:
        RecordFileError: When ``path`` does not exist, or its records were written with
            other settings (naming each difference).
    """
    if not path.is_file():
        raise RecordFileError(f"nothing to resume: {path} does not exist (run without --resume to start it)")
    resumed = Resumed()
    torn = path.with_name(path.name + ".torn")
    group_size = settings["group_size"]
    spans: list[tuple[int, int]] = []  # byte ranges to cut
    block: list[tuple[int, int, int, int]] = []  # the current group's lines: (start, end, group, sample)
    good_end = offset = 0
    checked = False

    def cut_block() -> None:
        spans.extend((s, e) for s, e, _, _ in block)
        resumed.torn_groups.update(g for _, _, g, _ in block)
        block.clear()

    with path.open("rb") as f:
        for raw in f:
            start, offset = offset, offset + len(raw)
            record = _parse(raw, group_size)
            if record is None:
                cut_block()
                spans.append((start, offset))
                resumed.torn_lines += 1
                continue
            if not checked:
                _check(path, record, settings)
                checked = True
            gid, index = record["group_id"], record["sample_index"]
            if block and block[0][2] != gid:
                cut_block()
            if gid in resumed.done or any(i == index for *_, i in block):
                spans.append((start, offset))  # a group, or a sample, written twice
                continue
            block.append((start, offset, gid, index))
            if len(block) == group_size:
                resumed.done.add(gid)
                resumed.records += group_size
                good_end = offset
                block.clear()
    cut_block()
    resumed.torn_groups -= resumed.done
    if spans:
        _cut(path, torn, spans, good_end)
    resumed.pending = _pending(path.with_name(path.name + ".pending"), torn, resumed, settings)
    return resumed


def filter_lines(path: Path, keep: Callable[[dict], bool], torn: Path | None = None) -> int:
    """Rewrite ``path`` with the whole, valid lines whose record ``keep`` accepts (the
    others go to ``torn`` when given); returns the new size in bytes."""
    tmp = path.with_name(path.name + ".tmp")
    size = 0
    with path.open("rb") as src, tmp.open("wb") as dst:
        for raw in src:
            record = _parse(raw, None)
            if record is not None and keep(record):
                dst.write(raw)
                size += len(raw)
            elif record is None and torn is not None:
                _append(torn, raw)
    os.replace(tmp, path)
    return size


def _parse(raw: bytes, group_size: int | None) -> dict | None:
    """The record on one line, or None for a torn or foreign line."""
    if not raw.endswith(b"\n"):
        return None  # the last line of a file cut in mid-write, even if it parses
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    gid, index = record.get("group_id"), record.get("sample_index")
    if not (isinstance(gid, int) and isinstance(index, int) and gid >= 0 and index >= 0):
        return None
    if group_size is not None and index >= group_size:
        return None
    return record


def _check(path: Path, record: dict, settings: dict) -> None:
    """Raise when ``record`` was written with other settings than ``settings``."""
    problems = []
    if record.get("env") != settings["env"]:
        problems.append(f"env {record.get('env')!r} (this run: {settings['env']!r})")
    for key in ("group_size", "normalize"):
        if key in record and record[key] != settings[key]:
            problems.append(f"{key} {record[key]!r} (this run: {settings[key]!r})")
    theirs_spec = (record.get("provenance") or {}).get("spec_digest")
    ours_spec = (settings.get("provenance") or {}).get("spec_digest")
    if ours_spec and theirs_spec != ours_spec:
        problems.append(f"another version of the spec of {settings['env']!r}: its files' content digest is "
                        f"{theirs_spec or '(none: written before LiveRoom recorded one)'} (this run: {ours_spec}); "
                        "groups of two worlds must not share a file")
    seed = record.get("seed", 0) - record["group_id"] if isinstance(record.get("seed"), int) else None
    if seed is not None and seed != settings["seed"]:
        problems.append(f"first seed {seed} (this run: {settings['seed']})")
    theirs = {k: v for k, v in (record.get("policy") or {}).items() if k not in _TRANSPORT}
    ours = {k: v for k, v in settings["policy"].items() if k not in _TRANSPORT}
    for key in sorted(set(theirs) | set(ours)):
        if theirs.get(key) != ours.get(key):
            problems.append(f"policy {key} {theirs.get(key)!r} (this run: {ours.get(key)!r})")
    if problems:
        raise RecordFileError(f"cannot resume {path}: it was written with " + "; ".join(problems)
                              + ". Resume with the same settings, or pass --force to start over.")


def _cut(path: Path, torn: Path, spans: list[tuple[int, int]], good_end: int) -> None:
    """Move the byte ranges ``spans`` of ``path`` to ``torn``."""
    if all(start >= good_end for start, _ in spans):  # the usual case: only the tail is torn
        with path.open("rb+") as f:
            f.seek(good_end)
            _append(torn, f.read())
            f.truncate(good_end)
        return
    cut = dict(spans)
    tmp = path.with_name(path.name + ".tmp")
    offset = 0
    with path.open("rb") as src, tmp.open("wb") as dst:
        for raw in src:
            if offset in cut:
                _append(torn, raw)
            else:
                dst.write(raw)
            offset += len(raw)
    os.replace(tmp, path)


def _pending(path: Path, torn: Path, resumed: Resumed, settings: dict) -> dict[int, dict[int, dict]]:
    """The finished episodes of unfinished groups, and ``path`` rewritten to hold just them."""
    pending: dict[int, dict[int, dict]] = {}
    if not path.exists():
        return pending
    skip = resumed.done | resumed.torn_groups  # a partly written group is played again whole
    with path.open("rb") as f:
        for raw in f:
            record = _parse(raw, settings["group_size"])
            if record is None:
                _append(torn, raw)
                resumed.torn_lines += 1
            elif record["group_id"] not in skip and not record.get("infra"):
                pending.setdefault(record["group_id"], {})[record["sample_index"]] = record
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for group in pending.values():
            out.write("".join(encode(r) for r in group.values()))
    os.replace(tmp, path)
    return pending


def _append(path: Path, data: bytes) -> None:
    if data:
        with path.open("ab") as f:
            f.write(data if data.endswith(b"\n") else data + b"\n")
