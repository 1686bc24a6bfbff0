"""``liveroom eval-suites``: generate the four frozen suites from the specs.

Deterministic: the same release and arguments write byte-identical files. Cases come
from the reference (scripted) host playing held-out seeds (at least
:data:`~liveroom_sim.evals.cases.EVAL_SEED_BASE`), en and zh:

- ``lsqa``: a waiting question at the start of an exchange, balanced over ask kinds and
  languages (:data:`~liveroom_sim.evals.snapshot.KINDS`), waiting alone (so the case is
  unambiguous about whom the turn must serve).
- ``hvqa``: each ``lsqa`` case again, the same seed played to the same moment under a
  harness changed by one HSA operator (every operator in
  :data:`liveroom_sim.harness.augment.OPERATORS` in turn, and all of them at once); only a
  twin whose question is the same message is kept. Operators added to ``OPERATORS`` are
  picked up by regenerating: ``liveroom eval-suites``.
- ``robust`` and ``follow``: see :mod:`liveroom_sim.evals.generate_more`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from liveroom_sim.evals.cases import EVAL_SEED_BASE, SUITES, SUITES_DIR, Case, suite_path, write_suite
from liveroom_sim.evals.replay import world_for
from liveroom_sim.evals.snapshot import KINDS, Moment, kind_of, play_moments
from liveroom_sim.harness.augment import OPERATORS
from liveroom_sim.policies.scripted import ScriptedAvatar

#: Bump when what a suite means changes (new kinds, other rules of selection): results of
#: different versions are not comparable.
SUITE_VERSION = "1"
LANGUAGES = {"en": "LiveRoom-v0", "zh": "LiveRoom-zh-v0"}
#: Where each suite's seeds start (per language, a further 1,000,000 apart): no two
#: suites, languages or groups of a suite share a seed.
SEED_OFFSETS = {"lsqa": 0, "robust": 2_000_000, "follow": 4_000_000}
#: Steps of reference play a case's prefix may have (replaying it is the case's cost).
MAX_PREFIX = 12
#: Cases one seed may give, so that no one stream dominates a suite.
PER_SEED = 4
DEFAULT_COUNTS = {"lsqa": 1640, "robust": 720, "follow": 720}


def seeds(suite: str, language: str, count: int, shift: int = 0):
    base = EVAL_SEED_BASE + SEED_OFFSETS[suite] + 1_000_000 * list(LANGUAGES).index(language) + shift
    return range(base, base + count)


def case_from(moment: Moment, msg, suite: str, language: str, seed: int, operators=(), **extra) -> Case:
    return Case(id=f"{suite}-{language}-{seed}-{moment.step}-{msg.mid}", suite=suite, env=LANGUAGES[language],
                language=language, seed=seed, operators=tuple(operators), mix=moment.mix, prefix=moment.prefix,
                digest=moment.digest(), kind=kind_of(msg), question=moment.question(msg), must=moment.truth(msg),
                must_not=moment.must_not(msg), market=moment.market_view(msg), **extra)


def balanced_moments(suite: str, language: str, target: int, max_seeds: int = 3000, operators=(),
                     kinds: tuple[str, ...] = KINDS, seed_shift: int = 0, mix: dict | None = None):
    """``(moment, message, seed)`` picks balanced over ask kinds: each kind gets an equal
    share of ``target``, the kind most behind first; kinds that stay rare within
    ``max_seeds`` seeds leave their share to the others."""
    share = -(-target // len(kinds))
    taken: dict[str, int] = defaultdict(int)
    total, policy = 0, ScriptedAvatar()
    for n, seed in enumerate(seeds(suite, language, max_seeds, seed_shift)):
        picked: set[int] = set()
        # Past half the seeds, the common kinds may fill the shares the rare ones leave.
        cap = share if n < max_seeds // 2 else target
        for moment in play_moments(LANGUAGES[language], seed, operators, policy, MAX_PREFIX, mix):
            found = [m for m in moment.candidates() if m.mid not in picked and kind_of(m) in kinds]
            if not found:
                continue
            msg = found[0]
            kind = kind_of(msg)
            if taken[kind] >= cap:
                continue
            yield moment, msg, seed
            picked.add(msg.mid)
            taken[kind] += 1
            total += 1
            if total >= target:
                return
            if len(picked) >= PER_SEED:
                break


def injector_mix(env_id: str) -> dict[str, float]:
    """The spec's persona mix with prompt injectors as common as the commonest persona:
    injections are rare in the spec's room (a few in a thousand messages), too rare to
    fill their share of a suite from it."""
    mix = dict(world_for(env_id).spec.viewers.mix)
    mix["prompt_injector"] = max(mix.values())
    return mix


def balanced_cases(suite: str, language: str, target: int, operators=(), kinds: tuple[str, ...] = KINDS,
                   seed_shift: int = 0):
    """:func:`balanced_moments` over ``kinds``, the ``injection`` share drawn from a room
    with more prompt injectors (:func:`injector_mix`, recorded on each such case)."""
    common = tuple(k for k in kinds if k != "injection")
    share = target // len(kinds) if "injection" in kinds else 0
    yield from balanced_moments(suite, language, target - share, operators=operators, kinds=common,
                                seed_shift=seed_shift)
    if share:
        yield from balanced_moments(suite, language, share, operators=operators, kinds=("injection",),
                                    seed_shift=seed_shift + 50_000, mix=injector_mix(LANGUAGES[language]))


def lsqa(target: int) -> list[Case]:
    out = []
    for language in LANGUAGES:
        for moment, msg, seed in balanced_cases("lsqa", language, target // len(LANGUAGES)):
            out.append(case_from(moment, msg, "lsqa", language, seed))
    return out


def operator_sets() -> list[tuple[str, ...]]:
    """Each HSA operator alone, then all at once (the ``hvqa`` variants, in turn)."""
    return [(op,) for op in OPERATORS] + [tuple(OPERATORS)]


def hvqa(lsqa_cases: list[Case]) -> list[Case]:
    """The ``lsqa`` cases under changed harnesses, one variant each, in turn; a twin is
    kept when the same seed, played by the reference host under the variant, reaches a
    moment at the same step where the same message waits."""
    sets = operator_sets()
    wanted: dict[tuple[int, tuple[str, ...]], list[Case]] = defaultdict(list)
    for i, case in enumerate(lsqa_cases):
        wanted[(case.seed, sets[i % len(sets)])].append(case)
    out, policy = [], ScriptedAvatar()
    for (seed, ops), twins in sorted(wanted.items()):
        by_step = {len(c.prefix): c for c in twins}
        env_id = twins[0].env
        for moment in play_moments(env_id, seed, ops, policy, max(by_step) + 1, twins[0].mix):
            twin = by_step.get(moment.step)
            if twin is None:
                continue
            msg = next((m for m in moment.candidates() if m.mid == twin.question.mid
                        and m.text == twin.question.text), None)
            if msg is None:
                continue
            case = case_from(moment, msg, "hvqa", twin.language, seed, ops, twin=twin.id)
            out.append(case.model_copy(update={"id": f"hvqa-{'+'.join(ops) if len(ops) == 1 else 'all'}-"
                                                     f"{twin.id.removeprefix('lsqa-')}"}))
    order = {c.id: i for i, c in enumerate(lsqa_cases)}
    return sorted(out, key=lambda c: order[c.twin])


def generate(out: Path | None = None, suites: tuple[str, ...] = SUITES, counts: dict | None = None,
             progress=None) -> dict:
    """Write the suites into ``out`` (default: the package's own ``suites/``) with their
    manifest; returns the manifest."""
    from liveroom_sim.evals import generate_more

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
