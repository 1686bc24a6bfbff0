"""The built-in hosts sample: at a temperature the scripted host's samples of one seed
differ (so a GRPO group carries signal), at 0 it is the deterministic reference, and a
group whose samples are all the same is reported as carrying no signal."""

from __future__ import annotations

import json
import warnings

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.rollout.advantages import NoSignalWarning, group_advantages, no_signal_groups
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def _actions(host, env_id="LiveRoom-v0", seed=0, steps=60) -> list[str]:
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        action = host(obs, info)
        out.append(action)
        obs, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
    return out


def test_the_reference_host_is_deterministic():
    assert _actions(ScriptedAvatar()) == _actions(ScriptedAvatar(temperature=0.0, seed=7))


def test_at_a_temperature_samples_of_one_seed_differ_and_a_sampling_seed_repeats():
    a, b = _actions(ScriptedAvatar(temperature=1.0, seed=1)), _actions(ScriptedAvatar(temperature=1.0, seed=2))
    assert a != b
    assert a == _actions(ScriptedAvatar(temperature=1.0, seed=1))
    replies = [x for x in a + b if not x.startswith("{")]
    reference = {x for x in _actions(ScriptedAvatar()) if not x.startswith("{")}
    assert set(replies) - reference  # wording the reference does not use


def test_a_bad_temperature_is_a_clear_error():
    with pytest.raises(ValueError, match="temperature must be at least 0"):
        ScriptedAvatar(temperature=-1.0)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_variant_of_a_line_fills_only_the_slots_of_the_first(language):
    lines = host_lines(language).lines
    for key, variants in lines.items():
        first = set(_slots(variants[0]))
        assert all(set(_slots(v)) <= first | {"it", "obj", "is", "has", "s"} for v in variants), key


def _slots(text: str) -> list[str]:
    import string

    return [f for _, f, _, _ in string.Formatter().parse(text) if f]


def test_a_rollout_of_the_sampling_scripted_host_has_non_zero_advantages(tmp_path):
    out = tmp_path / "r.jsonl"
    run_rollouts(RolloutConfig(env=TINY, policy=PolicySpec.parse("scripted", temperature=1.0), episodes=4,
                               group_size=4, out=out, record_messages=False, progress=False))
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(abs(r["advantage"]) > 0 for r in records)
    assert no_signal_groups(records) == []


def test_a_group_of_identical_samples_is_reported_as_carrying_no_signal(tmp_path):
    with pytest.warns(NoSignalWarning, match="carries no signal"):
        assert group_advantages([5.0, 5.0, 5.0]) == [0.0, 0.0, 0.0]
    out = tmp_path / "r.jsonl"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_rollouts(RolloutConfig(env=TINY, policy=PolicySpec.parse("scripted"), episodes=2, group_size=2, out=out,
                                   record_messages=False, progress=False))
    assert any(issubclass(w.category, NoSignalWarning) for w in caught)
    assert no_signal_groups([json.loads(line) for line in out.read_text().splitlines()]) == [0]
