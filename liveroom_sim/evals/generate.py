"""``liveroom eval-suites``: generate the four frozen suites from the specs.

Deterministic: the same release and arguments write byte-identical files. Cases come
from the reference (scripted) host playing held-out seeds (at least
:data:`~liveroom_sim.evals.cases.EVAL_SEED_BASE`), en and zh:

- ``lsqa``: a waiting question at the start of an exchange, balanced over ask kinds and
  languages (:data:`~liveroom_sim.evals.snapshot.KINDS`), waiting alone (so the case is
  unambiguous about whom the turn must serve).
- ``hvqa``: each ``lsqa`` case again, the same seed played to the same moment under a
  harness changed by one HSA operator (every operator in
  :data:`liveroom_sim.harness.augment.ALL_OPERATORS` in turn, and all of them at once);
  a twin is kept only when the same message waits there and what the policy is shown
  (prompt, chat, tools) differs from its ``lsqa`` case's: an operator that changes nothing
  the policy sees at that moment (a hook's retry, say, before any hook fired) makes no
  case, and the ``lsqa`` case tries the next operator in turn (up to
  :data:`TWIN_TRIES`). Operators added to the table are picked up by regenerating:
  ``liveroom eval-suites``.
- ``robust`` and ``follow``: see :mod:`liveroom_sim.evals.generate_more`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from liveroom_sim.evals import generate_more
from liveroom_sim.evals.cases import SUITES, SUITES_DIR, Case, suite_path, write_suite
from liveroom_sim.evals.picking import LANGUAGES, balanced_cases, case_from
from liveroom_sim.evals.snapshot import play_moments
from liveroom_sim.harness.augment import ALL_OPERATORS
from liveroom_sim.policies.scripted import ScriptedAvatar

#: Bump when what a suite means changes (new kinds, other rules of selection): results of
#: different versions are not comparable.
SUITE_VERSION = "9"
#: Operators an ``lsqa`` case tries, in turn, for a twin that differs from it.
TWIN_TRIES = 3
DEFAULT_COUNTS = {"lsqa": 1640, "robust": 720, "follow": 720}


def lsqa(target: int) -> list[Case]:
    out = []
    for language in LANGUAGES:
        for moment, msg, seed in balanced_cases("lsqa", language, target // len(LANGUAGES)):
            out.append(case_from(moment, msg, "lsqa", language, seed))
    return out


def operator_sets() -> list[tuple[str, ...]]:
    """Each HSA operator alone, then all at once (the ``hvqa`` variants, in turn): every
    operator of :data:`~liveroom_sim.harness.augment.ALL_OPERATORS`, the default set and
    the opt-in ones alike."""
    return [(op,) for op in ALL_OPERATORS] + [tuple(ALL_OPERATORS)]


def hvqa(lsqa_cases: list[Case]) -> list[Case]:
    """The ``lsqa`` cases under changed harnesses, one variant each, in turn; a twin is
    kept when the same seed, played by the reference host under the variant, reaches a
    moment at the same step where the same message waits, and the policy is shown there
    something other than in the ``lsqa`` case (else the case tries the next variant)."""
    sets = operator_sets()
    out: list[Case] = []
    pending = list(enumerate(lsqa_cases))
    for attempt in range(TWIN_TRIES):
        wanted: dict[tuple[int, tuple[str, ...]], list[Case]] = defaultdict(list)
        for i, case in pending:
            wanted[(case.seed, sets[(i + attempt) % len(sets)])].append(case)
        made = {}
        for (seed, ops), twins in sorted(wanted.items()):
            made.update(_twins(seed, ops, twins))
        out += made.values()
        pending = [(i, c) for i, c in pending if c.id not in made]
    order = {c.id: i for i, c in enumerate(lsqa_cases)}
    return sorted(out, key=lambda c: order[c.twin])


def _twins(seed: int, ops: tuple[str, ...], twins: list[Case]) -> dict[str, Case]:
    """The twins under ``ops`` of the ``lsqa`` cases of one seed, by ``lsqa`` id."""
    by_step = {len(c.prefix): c for c in twins}
    out = {}
    for moment in play_moments(twins[0].env, seed, ops, ScriptedAvatar(), max(by_step) + 1, twins[0].mix):
        twin = by_step.get(moment.step)
        if twin is None:
            continue
        msg = next((m for m in moment.candidates() if m.mid == twin.question.mid and m.text == twin.question.text), None)
        if msg is None or moment.digest() == twin.digest or not moment.derivable(msg):
            continue
        case = case_from(moment, msg, "hvqa", twin.language, seed, ops, twin=twin.id)
        out[twin.id] = case.model_copy(update={"id": f"hvqa-{'+'.join(ops) if len(ops) == 1 else 'all'}-"
                                                    f"{twin.id.removeprefix('lsqa-')}"})
    return out


def generate(out: Path | None = None, suites: tuple[str, ...] = SUITES, counts: dict | None = None,
             progress=None) -> dict:
    """Write the suites into ``out`` (default: the package's own ``suites/``) with their
    manifest; returns the manifest."""
    out = Path(out) if out is not None else SUITES_DIR
    counts = {**DEFAULT_COUNTS, **(counts or {})}
    manifest_path = out / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    say = progress or (lambda _msg: None)
    made: dict[str, list[Case]] = {}
    if "lsqa" in suites or "hvqa" in suites:
        made["lsqa"] = lsqa(counts["lsqa"])
        say(f"lsqa: {len(made['lsqa'])} cases")
    if "hvqa" in suites:
        made["hvqa"] = hvqa(made["lsqa"])
        say(f"hvqa: {len(made['hvqa'])} cases")
    if "robust" in suites:
        made["robust"] = generate_more.robust(counts["robust"])
        say(f"robust: {len(made['robust'])} cases")
    if "follow" in suites:
        made["follow"] = generate_more.follow(counts["follow"])
        say(f"follow: {len(made['follow'])} cases")
    for suite in suites:
        header = write_suite(suite_path(suite, out), suite, SUITE_VERSION, made[suite])
        manifest[suite] = {**header, "bytes": suite_path(suite, out).stat().st_size}
    manifest_path.write_text(json.dumps(dict(sorted(manifest.items())), indent=2) + "\n")
    return manifest
