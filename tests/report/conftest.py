"""A small rollout file for report tests: two groups of two episodes of the untrained
learned avatar (stochastic, so a group's samples differ and get advantages), and one
episode whose host calls an unknown tool and says a banned phrase (a tool fault and a
hook block)."""

from __future__ import annotations

import json

import gymnasium as gym
import pytest

from liveroom_sim import resolve_env_id
from liveroom_sim.episode import play
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.policies.learned import initial_parameters
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.records import episode_record
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


class Clumsy:
    """A bad tool call, then a banned claim, then the scripted host."""

    def __init__(self):
        self.turn, self.scripted = 0, ScriptedAvatar()

    def __call__(self, obs, info):
        self.turn += 1
        if self.turn == 1:
            return json.dumps({"content": None, "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "no_such_tool", "arguments": "{}"}}]})
        if self.turn == 2:
            return "Trust me, it's the best, grab it now!"
        return self.scripted(obs, info)


@pytest.fixture(scope="session")
def rollout_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "rollouts.jsonl"
    run_rollouts(RolloutConfig(env=TINY, policy=PolicySpec(kind="learned", parameters=initial_parameters()), episodes=4, group_size=2, out=path,
                               progress=False))
    env_id = resolve_env_id(TINY)
    result = play(gym.make(env_id), Clumsy(), 7, record=True)
    record = episode_record(2, 0, 7, env_id, {"kind": "clumsy"}, result)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(record) + "\n")
    return path
