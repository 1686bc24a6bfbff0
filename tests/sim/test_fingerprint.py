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
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fingerprints.json"
ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0")
POLICIES = {"scripted": ScriptedAvatar, "naive": NaiveAvatar}
CASES = [(env_id, policy, seed) for env_id in ENVS for policy, seed in (("scripted", 0), ("scripted", 1), ("naive", 0))]


def _dump(value) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()


def fingerprint(env_id: str, policy: str, seed: int) -> dict:
    """Steps, return and digest of one episode (the policy reads ``info`` as LLM avatars do)."""
    env = gym.make(env_id)
    avatar = POLICIES[policy]()
    digest = hashlib.sha256()
    obs, info = env.reset(seed=seed)
    digest.update(_dump([obs, info]))
    steps, ret, done = 0, 0.0, False
    while not done:
        action = avatar(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        digest.update(_dump([action, obs, round(reward, 9), terminated, truncated, info]))
        steps, ret, done = steps + 1, ret + reward, terminated or truncated
    env.close()
    return {"steps": steps, "return": round(ret, 6), "digest": digest.hexdigest()}


def _key(env_id: str, policy: str, seed: int) -> str:
    return f"{env_id} {policy} seed {seed}"


@pytest.mark.parametrize("env_id,policy,seed", CASES)
def test_behaviour_is_unchanged(env_id, policy, seed):
    expected = json.loads(FIXTURE.read_text())[_key(env_id, policy, seed)]
    assert fingerprint(env_id, policy, seed) == expected, (
        f"{env_id} with the {policy} avatar (seed {seed}) no longer plays as recorded: returns, "
        "transcripts or info changed. If that is intended, regenerate the fixture (see the module docstring).")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    FIXTURE.write_text(json.dumps({_key(*case): fingerprint(*case) for case in CASES}, indent=1) + "\n")
    print(f"wrote {FIXTURE}")
