"""``info`` entries built on first read (messages, reward reasons) read exactly as an
eager ``dict`` would, whenever they are read: at the step, or after the room moved on."""

from __future__ import annotations

import copy
import json
import pickle

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.sim.lazy import Lazy, LazyDict


def _dump(info) -> str:
    return json.dumps(info, sort_keys=True, default=str, ensure_ascii=False)


def _actions(env_id: str, seed: int) -> list[str]:
    env = gym.make(env_id)
    policy = ScriptedAvatar()
    obs, info = env.reset(seed=seed)
    actions = []
    while True:
        actions.append(policy(obs, info))
        obs, _, term, trunc, info = env.step(actions[-1])
        if term or trunc:
            return actions


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0"])
def test_infos_read_late_equal_infos_read_at_their_step(env_id):
    actions = _actions(env_id, seed=3)
    env = gym.make(env_id)
    read_now = [_dump(env.reset(seed=3)[1])]
    for a in actions:
        read_now.append(_dump(env.step(a)[-1]))
    env = gym.make(env_id)
    kept = [env.reset(seed=3)[1]]
    kept += [env.step(a)[-1] for a in actions]  # nothing read until the episode is over
    assert len(kept) == len(read_now)
    for i, (late, now) in enumerate(zip(kept, read_now)):
        assert _dump(late) == now, f"info of step {i} read after the episode differs from the info read at it"


def test_an_info_behaves_as_a_dict_for_users_who_read_it():
    env = gym.make("LiveRoom-v0")
    env.reset(seed=0)
    info = env.step("Hi everyone, welcome in!")[-1]
    eager = json.loads(_dump(info))
    assert isinstance(info, dict)
    assert set(info) == set(eager) and "messages" in info and "reward_reasons" in info
    for copied in (dict(info), {**info}, copy.copy(info), copy.deepcopy(info), pickle.loads(pickle.dumps(info))):
        assert json.loads(_dump(copied)) == eager
    assert info == eager and eager == info
    assert info["messages"][0]["role"] == "system" and info["messages"][-1]["role"] == "user"
    assert info.get("nothing", 7) == 7


def test_a_lazy_entry_is_built_once_and_only_when_read():
    calls = []
    d = LazyDict({"a": 1, "b": Lazy(lambda: calls.append(1) or [1, 2])})
    assert len(d) == 2 and list(d) == ["a", "b"] and "b" in d and not calls
    assert d["b"] == [1, 2] and d.get("b") is d["b"] and calls == [1]
    d2 = LazyDict({"b": Lazy(lambda: 5)})
    d2["b"] = 6  # set before read: the builder is dropped
    assert dict(d2) == {"b": 6} and repr(d2) == "{'b': 6}"
    assert LazyDict({"b": Lazy(lambda: 5)}).pop("b") == 5
    assert list(LazyDict({"b": Lazy(lambda: 5)}).values()) == [5]


def test_a_lean_info_holds_the_rewards_of_the_same_episode():
    actions = _actions("LiveRoom-v0", seed=4)
    full, lean = gym.make("LiveRoom-v0"), gym.make("LiveRoom-v0", info="lean")
    assert set(lean.reset(seed=4)[1]) == {"events", "reward_breakdown"}
    full.reset(seed=4)
    for a in actions:
        obs_f, r_f, *_, info_f = full.step(a)
        obs_l, r_l, *_, info_l = lean.step(a)
        assert (obs_l, r_l) == (obs_f, r_f)
        assert info_l["reward_breakdown"] == info_f["reward_breakdown"] and info_l["events"] == info_f["events"]
    assert info_l["episode"] == info_f["episode"]
    with pytest.raises(ValueError, match="info must be"):
        gym.make("LiveRoom-v0", info="some")
