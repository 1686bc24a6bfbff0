"""Where a result comes from: the LiveRoom version, the spec and the reward configuration.

Every record, report, eval result and served session carries :func:`provenance` so that
results are comparable and a mismatch is caught (a resumed run, a report mixing runs, an
eval against another suite version). Digests are of *content*, never of paths or times:
the same spec files in another checkout give the same digest, an edited catalog a new one.

    >>> import liveroom_sim
    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> p = provenance(load_spec(ENVS_DIR / "LiveRoom-v0.yaml"))
    >>> sorted(p)
    ['liveroom_version', 'reward_digest', 'spec_digest', 'spec_id']
    >>> p["spec_id"], len(p["spec_digest"])
    ('LiveRoom-v0', 16)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from liveroom_sim.spec import World, spec_files

#: Hex digits kept of each sha256: 64 bits tell runs apart and stay readable in a report.
DIGEST_CHARS = 16


def provenance(world: World, *, suite_version: str | None = None) -> dict[str, str]:
    """The provenance of results made on ``world`` (and on an eval suite's version)."""
    out = {
        "liveroom_version": liveroom_version(),
        "spec_id": world.spec.id,
        "spec_digest": spec_digest(world),
        "reward_digest": reward_digest(world),
    }
    if suite_version is not None:
        out["suite_version"] = suite_version
    return out


def env_provenance(env_id: str) -> dict[str, str]:
    """:func:`provenance` of a registered env's spec (empty for an env registered without
    a spec file)."""
    import gymnasium as gym

    from liveroom_sim.spec import load_spec

    path = gym.registry[env_id].kwargs.get("spec")
    return provenance(load_spec(path)) if path else {}


def spec_digest(world: World) -> str:
    """A digest of the content of every file the spec reads (its bases, catalog,
    phrasebook, rules, campaign, harness and skills, personas, augmentation pools)."""
    return _files_digest(tuple(str(p) for p in spec_files(Path(world.path))))


def reward_digest(world: World) -> str:
    """A digest of what the reward pays for: the spec's reward configuration (weights,
    gate, penalty, judge), its reasoning budget and the rule set in force at the start."""
    blob = json.dumps({"reward": world.spec.reward.model_dump(mode="json"),
                       "reasoning": world.spec.reasoning.model_dump(mode="json") if world.spec.reasoning else None,
                       "rules": world.rules.model_dump(mode="json")}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:DIGEST_CHARS]


def liveroom_version() -> str:
    """The installed package's version."""
    from liveroom_sim import __version__

    return __version__


def _files_digest(paths: tuple[str, ...]) -> str:
    # Not cached (about 10 ms for the largest built-in spec: compute it once per run), since a cache
    # keyed by paths would go stale when a file is edited in place.
    h = hashlib.sha256()
    for path in paths:
        h.update(Path(path).name.encode() + b"\0")
        try:
            h.update(Path(path).read_bytes())
        except OSError:
            h.update(b"\0missing\0")
        h.update(b"\0")
    return h.hexdigest()[:DIGEST_CHARS]
