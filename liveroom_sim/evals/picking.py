"""Picking cases: balanced over ask kinds, from held-out seeds of the reference host's
play (shared by :mod:`~liveroom_sim.evals.generate` and :mod:`~liveroom_sim.evals.generate_more`)."""

from __future__ import annotations

from collections import defaultdict

from liveroom_sim.evals.cases import EVAL_SEED_BASE, Case
from liveroom_sim.evals.replay import world_for
from liveroom_sim.evals.snapshot import KINDS, Moment, kind_of, play_moments
from liveroom_sim.policies.scripted import ScriptedAvatar

LANGUAGES = {"en": "LiveRoom-v0", "zh": "LiveRoom-zh-v0"}
#: Where each suite's seeds start (per language, a further 1,000,000 apart): no two
#: suites, languages or groups of a suite share a seed.
SEED_OFFSETS = {"lsqa": 0, "robust": 2_000_000, "follow": 4_000_000}
#: Steps of reference play a case's prefix may have (replaying it is the case's cost).
MAX_PREFIX = 12
#: Cases one seed may give, so that no one stream dominates a suite.
PER_SEED = 4


def seeds(suite: str, language: str, count: int, shift: int = 0):
    base = EVAL_SEED_BASE + SEED_OFFSETS[suite] + 1_000_000 * list(LANGUAGES).index(language) + shift
    return range(base, base + count)


def case_from(moment: Moment, msg, suite: str, language: str, seed: int, operators=(), env: str | None = None,
              **extra) -> Case:
    return Case(id=f"{suite}-{language}-{seed}-{moment.step}-{msg.mid}", suite=suite, env=env or LANGUAGES[language],
                language=language, seed=seed, operators=tuple(operators), mix=moment.mix, prefix=moment.prefix,
                digest=moment.digest(), kind=kind_of(msg), question=moment.question(msg), answers=moment.answers(msg),
                must=moment.truth(msg),
                must_not=moment.must_not(msg), market=moment.market_view(msg), **extra)


def balanced_moments(suite: str, language: str, target: int, max_seeds: int = 3000, operators=(),
                     kinds: tuple[str, ...] = KINDS, seed_shift: int = 0, mix: dict | None = None,
                     when=None, max_prefix: int = MAX_PREFIX, env: str | None = None, fits=None):
    """``(moment, message, seed)`` picks balanced over ask kinds: each kind gets an equal
    share of ``target``, the kind most behind first; kinds that stay rare within
    ``max_seeds`` seeds leave their share to the others. ``when(moment)``, if given, must
    hold of a moment (a directive in force, say; such late moments are few, so they are
    taken as they come, unbalanced), and prefixes may then be up to ``max_prefix`` steps
    long. ``env``: the spec to play (default: the language's own, :data:`LANGUAGES`).
    Only messages whose every ask has a derivable answer are picked
    (:meth:`~liveroom_sim.evals.snapshot.Moment.derivable`), and, with ``fits(moment,
    message)``, those it accepts."""
    share = -(-target // len(kinds))
    taken: dict[str, int] = defaultdict(int)
    total, policy = 0, ScriptedAvatar()
    for n, seed in enumerate(seeds(suite, language, max_seeds, seed_shift)):
        picked: set[int] = set()
        # Past half the seeds, the common kinds may fill the shares the rare ones leave.
        cap = share if n < max_seeds // 2 and when is None else target
        for moment in play_moments(env or LANGUAGES[language], seed, operators, policy, max_prefix, mix):
            if when is not None and not when(moment):
                continue
            found = [m for m in moment.candidates() if m.mid not in picked and kind_of(m) in kinds
                     and moment.derivable(m) and (fits is None or fits(moment, m))]
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
                   seed_shift: int = 0, **where):
    """:func:`balanced_moments` over ``kinds``, the ``injection`` share drawn from a room
    with more prompt injectors (:func:`injector_mix`, recorded on each such case)."""
    common = tuple(k for k in kinds if k != "injection")
    share = target // len(kinds) if "injection" in kinds else 0
    yield from balanced_moments(suite, language, target - share, operators=operators, kinds=common,
                                seed_shift=seed_shift, **where)
    if share:
        yield from balanced_moments(suite, language, share, operators=operators, kinds=("injection",),
                                    seed_shift=seed_shift + 50_000,
                                    mix=injector_mix(where.get("env") or LANGUAGES[language]), **where)


