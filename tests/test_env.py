"""The Gymnasium face of LiveRoom: registration, the env contract, vector envs,
info contents, rendering, episode end and determinism."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env, data_equivalence
from gymnasium.vector import AsyncVectorEnv, SyncVectorEnv

import liveroom_sim
from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.rewards.registry import COMPONENTS
from liveroom_sim.world.paths import ENVS_DIR

TINY = Path(__file__).parent / "fixtures" / "tiny" / "tiny-v0.yaml"
REGISTERED = ["LiveRoom-v0", "LiveRoom-zh-v0"]
COMPONENT_KEYS = {*(c.name for c in COMPONENTS if not c.optional), "total"}
METRIC_KEYS = {"viewers_present", "questions_answered", "questions_ignored", "purchases", "gmv", "latency_s"}
TOOL_CALL = json.dumps({"tool_calls": [{"id": "c0", "type": "function",
                                        "function": {"name": "get_promotions", "arguments": "{}"}}]})


def run(env, policy, seed: int, max_steps: int = 10_000):
    """Play one episode; returns the list of (obs, reward, terminated, truncated, info)."""
    obs, info = env.reset(seed=seed)
    out = [(obs, 0.0, False, False, info)]
    for _ in range(max_steps):
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        out.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            break
    return out


def walk_keys(value):
    """Every dict key anywhere inside ``value``."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from walk_keys(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from walk_keys(v)


# ------------------------------------------------------------------ registration
@pytest.mark.parametrize("env_id", REGISTERED)
def test_registered_ids_make_and_reset(env_id):
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    assert isinstance(obs, str) and obs.startswith("system: ")
    assert info["room"]["env_id"] == env_id
    env.close()


def test_namespaced_make_works_in_a_fresh_process():
    code = ("import gymnasium as gym\n"
            "env = gym.make('liveroom_sim:LiveRoom-v0')\n"
            "obs, info = env.reset(seed=0)\n"
            "print(type(env.unwrapped).__name__, info['room']['env_id'], len(info['tools']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LiveRoomEnv", "LiveRoom-v0", "5"]


@pytest.mark.parametrize("env_id", REGISTERED)
def test_gymnasium_check_env_passes(env_id):
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_unknown_render_mode_is_refused():
    with pytest.raises(ValueError, match="render_mode"):
        LiveRoomEnv(TINY, render_mode="rgb_array")


def test_step_before_reset_is_an_error():
    with pytest.raises(gym.error.ResetNeeded):
        LiveRoomEnv(TINY).step("hello")


# ------------------------------------------------------------------ vector envs
@pytest.mark.parametrize("vector", [SyncVectorEnv, AsyncVectorEnv])
def test_vector_envs_step_with_string_actions(vector):
    kwargs = {"shared_memory": False} if vector is AsyncVectorEnv else {}
    envs = vector([lambda: gym.make("LiveRoom-v0") for _ in range(2)], **kwargs)
    try:
        obs, infos = envs.reset(seed=[1, 2])
        assert len(obs) == 2 and all(isinstance(o, str) for o in obs)
        obs, rewards, terminated, truncated, infos = envs.step(("Welcome in, everyone!", TOOL_CALL))
        assert list(terminated) == [False, False] and list(truncated) == [False, False]
        assert list(infos["reward_breakdown"]["total"]) == pytest.approx(list(rewards))
        assert list(infos["turn"]["kind"]) == ["reply", "tool"]
        # per-env chat histories: env 0 spoke to the room, env 1 got a tool result
        assert infos["messages"][0][-1]["role"] == "user"
        assert infos["messages"][1][-1]["role"] == "tool"
        assert infos["messages"][1][-2]["tool_calls"][0]["function"]["name"] == "get_promotions"
    finally:
        envs.close()


# ------------------------------------------------------------------ info contents
def test_reset_info_has_messages_tools_metrics_events():
    env = LiveRoomEnv(TINY)
    obs, info = env.reset(seed=0)
    assert {"messages", "tools", "metrics", "events"} <= set(info)
    assert info["messages"][0]["role"] == "system" and "Tiny Test Live" in info["messages"][0]["content"]
    assert info["messages"][-1]["role"] == "user" and "featured: Tinyglow Vitamin Serum" in info["messages"][-1]["content"]
    names = [t["function"]["name"] for t in info["tools"]]
    assert names == ["get_product", "get_price_stock", "get_promotions", "get_policy", "get_order_status"]
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in info["tools"])
    assert info["events"] == []  # the tiny campaign has nothing at time 0
    assert info["metrics"]["viewers_present"] == 3


def test_metrics_keys_and_types():
    env = LiveRoomEnv(TINY)
    env.reset(seed=0)
    _, _, _, _, info = env.step("Hello everyone, welcome to Tiny Test Live!")
    m = info["metrics"]
    assert METRIC_KEYS <= set(m)
    assert all(isinstance(m[k], int) for k in ("viewers_present", "questions_answered", "questions_ignored", "purchases"))
    assert isinstance(m["gmv"], float) and isinstance(m["latency_s"], float)
    assert m["latency_s"] > 0  # a reply takes simulated time


@pytest.mark.parametrize("action", ["Hello everyone!", TOOL_CALL, '{"tool_calls": [{"function": {"name": "nope"}}]}'])
def test_step_reward_breakdown_matches_reward(action):
    env = LiveRoomEnv(TINY)
    env.reset(seed=3)
    _, reward, _, _, info = env.step(action)
    assert set(info["reward_breakdown"]) == COMPONENT_KEYS
    assert info["reward_breakdown"]["total"] == reward
    assert isinstance(reward, float)


def test_episode_return_is_sum_of_step_totals():
    env = LiveRoomEnv(TINY)
    steps = run(env, ScriptedAvatar(), seed=4)
    final = steps[-1][4]
    assert final["episode"]["steps"] == len(steps) - 1
    assert final["episode"]["return"] == pytest.approx(sum(s[1] for s in steps[1:]))
    for key in COMPONENT_KEYS - {"total"}:
        assert final["episode"]["returns"][key] == pytest.approx(sum(s[4]["reward_breakdown"][key] for s in steps[1:]))


def test_events_fired_in_a_step_are_listed_once():
    env = LiveRoomEnv(TINY)
    steps = run(env, ScriptedAvatar(), seed=1)
    fired = [(i, e) for i, s in enumerate(steps[1:], start=1) for e in s[4]["events"]]
    price_changes = [(i, e) for i, e in fired if e["type"] == "price_change"]
    assert len(price_changes) == 1
    i, event = price_changes[0]
    assert event == {"type": "price_change", "note": "Serum price drops.", "product": "sk-serum-t", "price": 17.5, "at": 10.0}
    before, after = steps[i - 1][4]["metrics"]["clock_s"], steps[i][4]["metrics"]["clock_s"]
    assert before < 10.0 <= after
    # every event whose time has passed fired exactly once, in time order
    end = steps[-1][4]["metrics"]["clock_s"]
    assert end > 60
    assert [e["type"] for _, e in fired] == ["price_change", "coupon_start", "feature", "harness_change", "rule_update"]
    # the policy is told: the next room update carries the ops note
    assert "ops: Serum price drops." in steps[i][4]["messages"][-1]["content"]


def test_events_at_time_zero_are_reported_by_reset_only(tmp_path):
    shutil.copytree(TINY.parent, tmp_path / "tiny")
    spec = tmp_path / "tiny" / "tiny-v0.yaml"
    spec.write_text(spec.read_text().replace("../../../envs", str(ENVS_DIR)))
    campaign = tmp_path / "tiny" / "campaign.yaml"
    campaign.write_text(campaign.read_text().replace("  - at: 10\n", "  - at: 0\n"))
    env = LiveRoomEnv(spec)
    _, info = env.reset(seed=0)
    assert [e["type"] for e in info["events"]] == ["price_change"]
    assert "ops: Serum price drops." in info["messages"][-1]["content"]
    _, _, _, _, info = env.step("Hi!")
    assert info["events"] == []


def test_editing_info_messages_does_not_change_the_env():
    env = LiveRoomEnv(TINY)
    _, info = env.reset(seed=0)
    for m in info["messages"]:
        m["content"] = "edited by the policy"
    obs, _, _, _, info = env.step("Hi!")
    assert "edited by the policy" not in obs


def test_ground_truth_never_reaches_the_policy():
    env = LiveRoomEnv(TINY)
    for obs, _, _, _, info in run(env, ScriptedAvatar(), seed=2, max_steps=40):
        assert set(info) <= {"messages", "tools", "metrics", "events", "room", "reward_breakdown",
                             "reward_reasons", "turn", "episode"}
        assert not {"truth", "facts", "intent", "ground_truth"} & set(walk_keys(info))
        json.dumps(info)  # plain data only: no Fact objects, no room internals
        assert "Fact(" not in obs


# ------------------------------------------------------------------ rendering
def test_render_ansi_shows_clock_viewers_chat_and_featured():
    env = LiveRoomEnv(TINY, render_mode="ansi")
    obs, info = env.reset(seed=0)
    assert env.render().splitlines()[0].startswith("== Tiny Test Live [00:00 / 02:00]  viewers 3")
    policy = ScriptedAvatar()
    for _ in range(12):
        obs, _, _, _, info = env.step(policy(obs, info))
    text = env.render()
    assert isinstance(text, str)
    room = env.unwrapped.room if hasattr(env, "unwrapped") else env.room
    mm, ss = divmod(int(room.clock), 60)
    assert f"[{mm:02d}:{ss:02d} / 02:00]" in text
    assert f"viewers {info['metrics']['viewers_present']}" in text
    assert "featured: Tinyglow Vitamin Serum" in text
    last_chat = room.crowd.chat[-1]
    assert f"{last_chat.viewer.name}: {last_chat.text}" in text
    assert "-- last turn:" in text


def test_render_human_prints(capsys):
    env = LiveRoomEnv(TINY, render_mode="human")
    env.reset(seed=0)
    printed = capsys.readouterr().out
    assert "Tiny Test Live" in printed and "featured: Tinyglow Vitamin Serum" in printed
    env.step("Hi all!")
    assert "-- last turn: reply" in capsys.readouterr().out
    assert env.render() is None
    assert "Tiny Test Live" in capsys.readouterr().out


@pytest.mark.parametrize("env_id", REGISTERED)
def test_render_of_registered_envs(env_id):
    env = gym.make(env_id, render_mode="ansi")
    env.reset(seed=0)
    env.step("hello")
    assert "featured:" in env.render()


# ------------------------------------------------------------------ episode end
def test_episode_terminates_when_the_stream_is_over():
    env = gym.make("LiveRoom-v0")
    steps = run(env, ScriptedAvatar(), seed=0)
    *_, (obs, _, terminated, truncated, info) = steps
    assert terminated is True and truncated is False
    assert info["metrics"]["clock_s"] >= 900
    assert not any(s[2] or s[3] for s in steps[:-1])


def test_long_replies_end_the_tiny_stream_before_the_step_limit():
    env = LiveRoomEnv(TINY)
    steps = run(env, lambda obs, info: "la " * 600, seed=0)
    *_, (_, _, terminated, truncated, info) = steps
    assert terminated is True and truncated is False
    assert len(steps) - 1 < 60 and info["metrics"]["clock_s"] >= 120


def test_episode_truncates_at_max_steps():
    env = LiveRoomEnv(TINY)
    steps = run(env, lambda obs, info: TOOL_CALL, seed=0)
    *_, (_, _, terminated, truncated, info) = steps
    assert len(steps) - 1 == 60
    assert truncated is True and terminated is False
    assert info["metrics"]["clock_s"] < 120
    assert info["episode"]["steps"] == 60


# ------------------------------------------------------------------ determinism
def _trace(env, seed: int, policy) -> list[str]:
    return [json.dumps([obs, reward, terminated, truncated, info], sort_keys=True)
            for obs, reward, terminated, truncated, info in run(env, policy, seed, max_steps=80)]


@pytest.mark.parametrize("spec", [TINY, "LiveRoom-zh-v0"])
def test_same_seed_same_actions_same_everything(spec):
    make = (lambda: LiveRoomEnv(spec)) if isinstance(spec, Path) else (lambda: gym.make(spec).unwrapped)
    a = _trace(make(), 11, ScriptedAvatar())
    b = _trace(make(), 11, ScriptedAvatar())
    assert a == b
    env = make()  # resetting the same env again also replays
    _trace(env, 5, NaiveAvatar())
    assert _trace(env, 11, ScriptedAvatar()) == a


@pytest.mark.parametrize("env_id", sorted(k for k in gym.registry if k.startswith("LiveRoom")))
def test_two_envs_in_lockstep_agree_at_every_step(env_id):
    # Gymnasium's check_env manner (check_reset_seed_determinism, check_step_determinism):
    # two envs, the same seed and the same actions give equal observations, rewards, ends
    # and infos at every step, compared with gymnasium's own data_equivalence. A third
    # env of another seed steps in between, so state shared between rooms (caches kept
    # for every room of a process) would show as a difference here.
    a, b, other = (gym.make(env_id).unwrapped for _ in range(3))
    policy, noise = ScriptedAvatar(), NaiveAvatar()
    first_a, first_b = a.reset(seed=13), b.reset(seed=13)
    assert data_equivalence(first_a, first_b, exact=True)
    obs, info = first_a
    other_obs, other_info = other.reset(seed=14)
    for step in range(60):
        action = policy(obs, info)
        out_a = a.step(action)
        other_obs, *_, other_info = other.step(noise(other_obs, other_info))
        out_b = b.step(action)
        for name, x, y in zip(("obs", "reward", "terminated", "truncated", "info"), out_a, out_b):
            assert data_equivalence(x, y, exact=True), f"step {step}: {name} differs"
        obs, _, terminated, truncated, info = out_a
        if terminated or truncated:
            break


def test_different_seeds_differ():
    env = LiveRoomEnv(TINY)
    a = _trace(env, 1, ScriptedAvatar())
    b = _trace(env, 2, ScriptedAvatar())
    assert a != b


_DIGEST = """
import hashlib, json, sys
import gymnasium as gym, liveroom_sim
from liveroom_sim.policies import ScriptedAvatar
env, policy, h = gym.make("LiveRoom-v0"), ScriptedAvatar(), hashlib.sha256()
obs, info = env.reset(seed=21)
for _ in range(120):
    obs, reward, term, trunc, info = env.step(policy(obs, info))
    h.update(json.dumps([obs, reward, term, trunc, info], sort_keys=True).encode())
print(h.hexdigest(), info["metrics"]["clock_s"])
"""


def test_determinism_across_processes_and_hash_seeds():
    outs = []
    for hash_seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        done = subprocess.run([sys.executable, "-c", _DIGEST], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.strip())
    assert outs[0] == outs[1]
    assert float(outs[0].split()[1]) > 0


def test_package_exports():
    assert liveroom_sim.__version__
    assert set(liveroom_sim.register_envs()) >= set(REGISTERED)


@pytest.mark.parametrize("env_id", sorted(k for k in gym.registry if k.startswith("LiveRoom")))
def test_a_room_mid_episode_pickles_and_the_copy_plays_on_the_same(env_id):
    # Ray workers and the eval's case forks copy rooms by pickling them.
    import pickle

    env = gym.make(env_id).unwrapped
    policy = ScriptedAvatar()
    obs, info = env.reset(seed=3)
    for _ in range(8):
        obs, *_, info = env.step(policy(obs, info))
    copy = pickle.loads(pickle.dumps(env))
    a, b = env.step(policy(obs, info)), copy.step(ScriptedAvatar()(obs, info))
    assert a[0] == b[0] and a[1] == b[1] and a[4]["reward_breakdown"] == b[4]["reward_breakdown"]
