"""The reference host refuses every bait and prompt injection that waits for it, also
from a viewer it answered before (it skipped those as served and pitched instead: about
half the eval's bait and injection cases failed)."""

from __future__ import annotations

import re
from collections import Counter

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)

from liveroom_sim.evals.cases import load_suite
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.turn import run_turn
from liveroom_sim.policies import ScriptedAvatar

#: The viewer a reply addresses, in each registered harness's form (@name, @name:, <@name>, [to name]).
MENTION = re.compile(r"^(?:\[to ([^\]]+)\]|<?@([^\s:>]+))")


def _refusal_cases():
    _, cases = load_suite("lsqa")
    return [c for c in cases if c.kind in ("bait", "injection")]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_reference_host_refuses_each_waiting_bait_and_injection(language):
    cases = [c for c in _refusal_cases() if c.language == language]
    # the viewers the host had answered before: the cases the old "served" check missed
    earlier = 0
    failed = []
    for case in cases:
        env, obs, info = Snapshot.of(case).fork(1)[0]
        earlier += any(m["role"] == "assistant" and (m.get("content") or "").startswith(f"@{case.question.asker} ")
                       for m in info["messages"])
        sample, _ = run_turn(case, env, obs, info, ScriptedAvatar())
        if not sample.verdict["pass"]:
            failed.append((case.id, case.question.text, sample.reply, sample.verdict.get("reasons")))
    assert len(cases) > 100 and earlier > 20
    assert not failed, failed[:5]


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0", "LiveRoom-TaoLive-v0"])
def test_a_viewer_is_refused_once_per_bait_not_again_and_again(env_id):
    # A question it misread as a bait ("tell me the mouse isnt sold out", 参数能详细说说吗)
    # stays listed, since a refusal answers no question: it was refused 5 times in one show
    # (HarnessVariant seed 1), 165 times in another (zh seed 309), while the room waited.
    refuse = {"en": "Sorry, I can't say that", "zh": "抱歉，这个不能说"}
    env, any_refused = gym.make(env_id), False
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        host, said, done = ScriptedAvatar(), [], False
        while not done:
            action = host(obs, info)
            said.append(action)
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        room = env.unwrapped.room
        baits = Counter(m.viewer.name for m in room.crowd.chat if any(a.intent in ("bait", "inject") for a in m.asks))
        refused = Counter(next(g for g in MENTION.match(s).groups() if g) for s in said if refuse[info["room"]["language"]] in s)
        any_refused |= bool(refused)
        over = {v: (n, baits[v]) for v, n in refused.items() if n > baits[v] + 1}
        assert not over, (env_id, seed, over)
    assert any_refused, env_id
