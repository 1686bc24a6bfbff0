"""Evaluation cases and the frozen suite files that hold them.

A :class:`Case` is one turn of a room: how to rebuild the room as of that moment (the env,
the seed, the HSA operators of its harness, the reference host's actions before it, and
for ``robust`` the tool fault pinned on it), what the policy is shown then (its digest,
checked when the case is rebuilt, and the waiting question as the viewer wrote it), the
ground truth, and what a correct answer must and must not contain.

A suite file is gzip JSON lines: a header line ``{"suite", "version", "count", "sha256"}``
and one case per line. ``sha256`` is the hash of the case lines as stored (decompressed);
:func:`load_suite` recomputes it and also checks it against ``suites/MANIFEST.json``, the
hashes of the suites this release ships, so results stay comparable across releases.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path
from typing import Literal

from liveroom_sim.evals.asks import Answer
from liveroom_sim.world.datafile import Frozen

SUITES = ("lsqa", "hvqa", "robust", "follow")
SUITES_DIR = Path(__file__).parent / "suites"
MANIFEST = SUITES_DIR / "MANIFEST.json"
#: Every evaluation seed is at least this; training and rollouts count seeds from 0, so
#: the two never meet (a run would need nine million groups to reach these).
EVAL_SEED_BASE = 9_000_000


class SuiteError(ValueError):
    """A suite file that is missing, damaged, edited or of another release."""


class Question(Frozen):
    """The waiting message the case is about, as the viewer wrote it."""

    mid: int
    asker: str
    intent: str
    text: str
    product: str | None = None
    order: str | None = None
    asks: tuple[str, ...] = ()  # the intent of every ask (two-ask and merged requests)


class Fault(Frozen):
    """A tool fault pinned on the case: the turn's first call to ``tool`` (a canonical tool
    whose result the answer needs), or without a tool the ``call``-th tool call of the turn
    (0 first), answers ``kind`` (:data:`liveroom_sim.harness.faults.FAULT_KINDS`) instead
    of its result."""

    kind: Literal["timeout", "malformed", "truncated", "denied"]
    call: int = 0
    tool: str | None = None


class Check(Frozen):
    """One verifiable instruction of a ``follow`` case (see :mod:`liveroom_sim.evals.follow`)."""

    name: str
    value: str | int | None = None


class Case(Frozen):
    """One evaluation case (see the module docstring)."""

    id: str
    suite: Literal["lsqa", "hvqa", "robust", "follow"]
    env: str
    language: str
    seed: int
    operators: tuple[str, ...] = ()   # HSA operators of the case's harness (none: the original)
    mix: dict[str, float] | None = None  # the persona mix, when not the spec's (see generate)
    prefix: tuple[str, ...] = ()      # the reference host's actions before the case's turn
    digest: str                       # sha256 of the messages and tools the policy is shown
    kind: str                         # ask kind (see liveroom_sim.evals.kinds)
    question: Question
    answers: tuple[Answer, ...] = ()  # what each ask expects (liveroom_sim.evals.asks)
    must: tuple[str, ...] = ()        # facts a correct answer states in full (labels, as of now)
    must_not: tuple[str, ...] = ()    # what it must not say (outdated values, a bait's payload)
    market: dict = {}                 # the asked product as of now: price, stock, promotion
    twin: str | None = None           # hvqa: the lsqa case it varies
    fault: Fault | None = None        # robust: the tool fault
    perturbation: str | None = None   # robust: what else was perturbed (operators, limits)
    checks: tuple[Check, ...] = ()    # follow: the instructions to verify


def _digest_lines(lines: list[bytes]) -> str:
    h = hashlib.sha256()
    for line in lines:
        h.update(line)
        h.update(b"\n")
    return h.hexdigest()


def case_line(case: Case) -> bytes:
    """A case as its suite file stores it (one JSON line, keys sorted, defaults left out)."""
    return json.dumps(case.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False,
                      sort_keys=True).encode("utf-8")


def case_sha(case: Case) -> str:
    """sha256 of the case as stored: any change to it (question, answers, recipe) changes it."""
    return hashlib.sha256(case_line(case)).hexdigest()


def write_suite(path: Path, suite: str, version: str, cases: list[Case]) -> dict:
    """Write ``cases`` as a suite file; returns its header (with the hash)."""
    lines = [case_line(c) for c in cases]
    header = {"suite": suite, "version": version, "count": len(lines), "sha256": _digest_lines(lines)}
    path.parent.mkdir(parents=True, exist_ok=True)
    # mtime=0: the same cases give the same bytes, so regenerating changes nothing in git.
    with open(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
        f.write(json.dumps(header, sort_keys=True).encode() + b"\n")
        for line in lines:
            f.write(line + b"\n")
    return header


def suite_path(suite: str, folder: Path | None = None) -> Path:
    return (folder or SUITES_DIR) / f"{suite}.jsonl.gz"


def read_manifest(folder: Path | None = None) -> dict:
    path = (folder / "MANIFEST.json") if folder else MANIFEST
    if not path.exists():
        return {}
    return json.loads(path.read_text())


def load_suite(suite: str, folder: Path | None = None, check_manifest: bool = True) -> tuple[dict, list[Case]]:
    """The header and cases of a suite, after checking its hash (and the manifest's).

    Raises:
        SuiteError: unknown suite, missing or unreadable file, a hash that does not match.
    """
    if suite not in SUITES:
        from liveroom_sim.errors import did_you_mean

        raise SuiteError(f"unknown suite {suite!r}{did_you_mean(suite, SUITES)}; expected some of {', '.join(SUITES)}")
    path = suite_path(suite, folder)
    if not path.exists():
        raise SuiteError(f"the suite file {str(path)!r} does not exist; generate it with `liveroom eval-suites`")
    try:
        with gzip.open(path, "rb") as f:
            raw = f.read().split(b"\n")
        header = json.loads(raw[0])
        lines = [line for line in raw[1:] if line]
    except (OSError, EOFError, ValueError) as exc:
        raise SuiteError(f"the suite file {str(path)!r} is not a readable gzip JSON-lines suite: {exc}") from None
    if not isinstance(header, dict) or header.get("suite") != suite:
        raise SuiteError(f"{str(path)!r} is not the {suite} suite (its header: {str(header)[:120]})")
    found = _digest_lines(lines)
    if found != header.get("sha256") or len(lines) != header.get("count"):
        raise SuiteError(f"{str(path)!r} was changed after it was written: its cases hash to {found[:12]}, "
                         f"its header says {str(header.get('sha256'))[:12]} ({len(lines)} cases, header "
                         f"{header.get('count')})")
    if check_manifest:
        expected = read_manifest(folder).get(suite)
        if expected and expected.get("sha256") != found:
            raise SuiteError(f"{str(path)!r} is not the {suite} suite of this release (version "
                             f"{header.get('version')}, hash {found[:12]}; the manifest expects version "
                             f"{expected.get('version')}, hash {str(expected.get('sha256'))[:12]})")
    try:
        cases = [Case.model_validate_json(line) for line in lines]
    except ValueError as exc:
        raise SuiteError(f"{str(path)!r} holds a case that is not valid: {str(exc)[:300]}") from None
    return header, cases
