"""The same room, the same numbers: a served episode equals the in-process one, for every registered env."""

from __future__ import annotations

import gymnasium as gym
import pytest
from openenv.core.generic_client import GenericEnvClient

import liveroom_sim  # noqa: F401
from liveroom_sim.provenance import provenance
from liveroom_sim.spec import load_spec

ENV_IDS = sorted(k for k in gym.registry if k.startswith("LiveRoom-") and k.endswith("-v0"))


def test_every_built_in_env_is_covered():
    assert {"LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0", "LiveRoom-TaoLive-v0"} <= set(ENV_IDS)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ENV_IDS)
def test_a_served_episode_equals_the_in_process_one(env_id, plan_of):
    """Observations, rewards, terminated/truncated and info (as JSON) match step by step,
    over OpenEnv's own client, for a whole episode (capped at 200 steps)."""
    from liveroom_sim.serve.app import create_app, serving

    seed = 7
    plan = plan_of(env_id, seed, steps=200)
    with serving(create_app(env_id, max_sessions=2)) as url, GenericEnvClient(base_url=url).sync() as room:
        first = room.reset(seed=seed).observation
        session = first["info"].pop("session")
        assert session["provenance"] == provenance(load_spec(gym.spec(env_id).kwargs["spec"]))
        assert (first["prompt"], first["info"]) == (plan[0][1], plan[0][5])
        for i, (action, obs, reward, terminated, truncated, info) in enumerate(plan[1:], start=1):
            result = room.step({"message": action})
            got = result.observation
            assert got["prompt"] == obs, f"step {i}: observation differs"
            assert result.reward == reward, f"step {i}: reward {result.reward} != {reward}"
            assert (got["terminated"], got["truncated"], result.done) == (terminated, truncated, terminated or truncated)
            assert got["info"] == info, f"step {i}: info differs in {[k for k in info if got['info'].get(k) != info[k]]}"


def test_sessions_never_share_a_generator(server, plan_of):
    """Two sessions stepped in turns play as two separate in-process envs: interleaving
    changes nothing, and the same seed gives the same stream in both."""
    url, _ = server
    plan_a, plan_b = plan_of("LiveRoom-v0", 1, steps=12), plan_of("LiveRoom-v0", 2, steps=12)
    with GenericEnvClient(base_url=url).sync() as a, GenericEnvClient(base_url=url).sync() as b, \
            GenericEnvClient(base_url=url).sync() as c:
        a.reset(seed=1)
        b.reset(seed=2)
        c.reset(seed=1)
        for (act_a, obs_a, r_a, *_), (act_b, obs_b, r_b, *_) in zip(plan_a[1:], plan_b[1:]):
            got_b = b.step({"message": act_b})
            got_a = a.step({"message": act_a})
            got_c = c.step({"message": act_a})
            assert (got_a.observation["prompt"], got_a.reward) == (obs_a, r_a)
            assert (got_b.observation["prompt"], got_b.reward) == (obs_b, r_b)
            assert (got_c.observation["prompt"], got_c.reward) == (obs_a, r_a)
