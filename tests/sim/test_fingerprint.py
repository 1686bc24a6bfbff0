"""Behaviour fingerprints of the registered envs: speed work must not change what a
policy gets back.

Each case plays one whole episode of a registered env with a built-in avatar and hashes
everything a user reads after each step: the action, the observation, the reward, and
every ``info`` entry (messages, tools, reward breakdown and reasons, events, metrics,
turn, episode summary). The digests are compared with ``tests/fixtures/fingerprints.json``.

When a change is *meant* to alter behaviour (and the issue says so), regenerate the
file and commit it with the change, saying why::

    .venv/bin/python tests/sim/test_fingerprint.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fingerprints.json"
ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0", "LiveRoom-TaoLive-v0")
POLICIES = {"scripted": ScriptedAvatar, "naive": NaiveAvatar}
#: (env, avatar, seed, room): ``room`` is the env as registered (""), cut short by
#: ``stream.max_steps`` (``"cut"``: the room settles the stream it leaves, played out on
#: a copy of the crowd), or with a crowd of 200 from the start (``"crowd"``).
CASES = [(env_id, policy, seed, "") for env_id in ENVS for policy, seed in (("scripted", 0), ("scripted", 1), ("naive", 0))]
CASES += [(env_id, "scripted", 2, room) for env_id in ENVS for room in ("cut", "crowd")]


def _dump(value) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()


def make(env_id: str, room: str = ""):
    if not room:
        return gym.make(env_id)
    world = load_spec(ENVS_DIR / f"{env_id}.yaml")
    spec = world.spec
    if room == "cut":
        spec = spec.model_copy(update={"stream": spec.stream.model_copy(update={"max_steps": 120})})
    else:
        spec = spec.model_copy(update={"viewers": spec.viewers.model_copy(update={
            "initial": 200, "max_present": 200, "arrivals_per_min": 60.0})})
    return LiveRoomEnv(world.model_copy(update={"spec": spec}))


def fingerprint(env_id: str, policy: str, seed: int, room: str = "") -> dict:
    """Steps, return and digest of one episode (the policy reads ``info`` as LLM avatars do)."""
    env = make(env_id, room)
    avatar = POLICIES[policy]()
    digest = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    digest.update(_dump([obs, info]))
    steps, ret, done = 0, 0.0, False
    while not done and not (room == "crowd" and steps == 150):
        action = avatar(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        digest.update(_dump([action, obs, round(reward, 9), terminated, truncated, info]))
        steps, ret, done = steps + 1, ret + reward, terminated or truncated
    env.close()
    return {"steps": steps, "return": round(ret, 6), "digest": digest.hexdigest()}


def _key(env_id: str, policy: str, seed: int, room: str = "") -> str:
    return f"{env_id} {policy} seed {seed}" + (f" ({room})" if room else "")


@pytest.mark.parametrize("env_id,policy,seed,room", CASES)
def test_behaviour_is_unchanged(env_id, policy, seed, room):
    expected = json.loads(FIXTURE.read_text())[_key(env_id, policy, seed, room)]
    assert fingerprint(env_id, policy, seed, room) == expected, (
        f"{env_id} ({room or 'as registered'}) with the {policy} avatar (seed {seed}) no longer plays as recorded: returns, "
        "transcripts or info changed. If that is intended, regenerate the fixture (see the module docstring).")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    FIXTURE.write_text(json.dumps({_key(*case): fingerprint(*case) for case in CASES}, indent=1) + "\n")
    print(f"wrote {FIXTURE}")
