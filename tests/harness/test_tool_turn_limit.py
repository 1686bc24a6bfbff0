"""The harness's cap on tool turns before a reply (``constraints.max_tool_turns``): stated
in the prompt, enforced by the room, perturbed by HSA within the business range, and
respected by the scripted host."""

from __future__ import annotations

import json

import numpy as np
from taolive_helpers import call, first_waiting, make, variant_spec

from liveroom_sim.harness.augment import load_pools
from liveroom_sim.harness.augment_limits import perturb_limits
from liveroom_sim.harness.core import load_harness
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.world.paths import ENVS_DIR

LOOKUP = call("get_price_stock", product_id="sk-serum-01")


def _capped(tmp_path, cap: int):
    return make(variant_spec(tmp_path, lambda d: d["constraints"].update(max_tool_turns=cap)))


def _refused(info) -> bool:
    return any("tool-turn limit" in e for e in info["turn"]["tool_errors"])


def test_the_prompt_states_the_cap_and_a_tool_turn_beyond_it_is_refused_and_charged(tmp_path):
    env = _capped(tmp_path, 2)
    _, info = env.reset(seed=0)
    assert "每次回复前最多调用 2 轮工具" in info["messages"][0]["content"]
    for _ in range(2):
        *_, info = env.step(LOOKUP)
        assert not _refused(info) and "price" in json.loads(info["messages"][-1]["content"])
    _, reward, *_, info = env.step(LOOKUP)
    assert _refused(info)
    assert "tool-turn limit" in json.loads(info["messages"][-1]["content"])["error"]
    assert info["reward_breakdown"]["harness"] == -1.0


def test_the_count_starts_afresh_after_each_reply(tmp_path):
    env = _capped(tmp_path, 1)
    _, info = env.reset(seed=0)
    *_, info = env.step(LOOKUP)
    assert not _refused(info)
    *_, info = env.step(f"@{first_waiting(info)} 欢迎来到直播间！")
    *_, info = env.step(LOOKUP)
    assert not _refused(info)


def test_without_a_cap_tool_turns_are_limited_by_time_alone():
    env = make("LiveRoom-zh-v0")
    _, info = env.reset(seed=0)
    assert "轮工具" not in info["messages"][0]["content"]
    for _ in range(5):
        *_, info = env.step(LOOKUP)
        assert not _refused(info)


def test_perturb_limits_draws_a_set_cap_within_the_business_range_and_adds_none():
    pools = load_pools()
    lo, hi = pools.limits["max_tool_turns"]["zh"]
    capped = load_harness(ENVS_DIR / "harness" / "taolive-zh")
    uncapped = load_harness(ENVS_DIR / "harness" / "default-zh")
    assert capped.constraints.max_tool_turns is not None and uncapped.constraints.max_tool_turns is None
    drawn = {perturb_limits(capped, "zh", np.random.default_rng(s), pools.limits).constraints.max_tool_turns
             for s in range(40)}
    assert drawn == set(range(lo, hi + 1))
    assert all(perturb_limits(uncapped, "zh", np.random.default_rng(s), pools.limits).constraints.max_tool_turns
               is None for s in range(10))


def test_the_scripted_host_replies_within_the_cap_it_reads_from_the_prompt(tmp_path):
    # A cap of one tool turn: the host must load its skill and look up in that one turn
    # (and, when a lookup faults, answer honestly instead of retrying).
    env = make(variant_spec(tmp_path, lambda d: d["constraints"].update(max_tool_turns=1)))
    policy = ScriptedAvatar()
    obs, info = env.reset(seed=0, options={"tool_faults": [{"kind": "timeout", "call": n} for n in range(1, 40, 3)]})
    faults = 0
    for _ in range(150):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        assert not _refused(info)
        faults += len(info["turn"]["tool_faults"])
        if terminated or truncated:
            break
    assert faults >= 5 and info["metrics"]["questions_answered"] >= 10
