"""LiveRoom through verifiers v1: its own eval command (``vf-eval``) against the test server.

The tests marked ``verifiers`` need ``.[verifiers]`` (verifiers 0.4 pins openai < 3, so
``.ci/run`` gives it a venv of its own, with the Hub package
``examples/verifiers_env/liveroom_env`` installed) and run with ``pytest -m verifiers``.
The rest run in the main suite, without verifiers.
"""

from __future__ import annotations

import asyncio
import doctest
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import liveroom_sim.integrations.verifiers as lr_vf
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import OpenAICompatServer, policy_responder
from liveroom_sim.trajectory.segments import SegmentEnv

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs" / "serving" / "verifiers.md"
HUB_PACKAGE = ROOT / "examples" / "verifiers_env" / "liveroom_env"


# ------------------------------------------------------------ without verifiers
def test_docstring_examples_run():
    assert doctest.testmod(lr_vf).failed == 0


def test_an_unknown_env_or_a_bad_spec_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="LiveRoom-v0"):
        lr_vf.check_env("LiveRoom-v9")
    bad = tmp_path / "room.yaml"
    bad.write_text("id: Bad-v0\nstream: 3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="room.yaml"):
        lr_vf.check_env("Bad-v0", str(bad))


def test_a_trace_without_a_liveroom_episode_is_not_scored_as_zero():
    with pytest.raises(ValueError, match="no LiveRoom episode"):
        lr_vf.recorded_episode({"other": 1})


def test_an_episode_stopped_early_pays_the_rooms_settlement():
    env, info = lr_vf.open_room("LiveRoom-v0", None, seed=2)
    tally = lr_vf.EpisodeTally(env, seed=2)
    assert [m["role"] for m in tally.opening(info)] == ["system", "user"]
    _, _, _, _, info = env.step("Welcome in, everyone!")
    tally.add(info)
    episode = tally.result()  # the exchange stopped after one step: the rest is settled
    assert episode["steps"] == 1 and not episode["terminated"]
    assert episode["early_end"]["total"] < 0
    assert episode["returns"]["total"] == pytest.approx(info["reward_breakdown"]["total"] + episode["early_end"]["total"])
    assert set(episode["provenance"]) >= {"liveroom_version", "spec_id", "spec_digest", "reward_digest"}
    json.dumps(episode)  # the trace stores it as JSON


# ------------------------------------------------------------ with verifiers
def _replayed_return(env_id: str, seed: int, turns: int, actions: list[str], env_kwargs=None) -> float:
    """The LiveRoom return of ``actions`` on the same segment, played in this process."""
    env = SegmentEnv(gym.make(env_id, **(env_kwargs or {})), turns=turns)
    env.reset(seed=seed)
    total = 0.0
    for action in actions:
        _, reward, terminated, truncated, _ = env.step(action)
        total += reward
        if terminated or truncated:
            return total
    settled = env.unwrapped.room.settle()  # the exchange stopped early: as the env settles it
    return total + float(settled.total)


def _actions(trace: dict) -> list[str]:
    """The room actions of a trace's sampled assistant messages, in order."""
    from liveroom_sim.integrations.verl import action_from_message

    actions = []
    for node in trace["nodes"]:
        message = node["message"]
        if not node["sampled"]:
            continue
        calls = [{"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                 for c in message.get("tool_calls") or ()]
        actions.append(action_from_message({"role": "assistant", "content": message.get("content"),
                                            **({"tool_calls": calls} if calls else {})}))
    return actions


def _docs_command() -> list[str]:
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(r"<!-- vf-eval -->\s*```\w*\n(.*?)```", text, re.S)
    assert match, "docs/serving/verifiers.md has no block marked <!-- vf-eval -->"
    words = shlex.split(match.group(1).replace("\\\n", " "), comments=True)
    start = next(i for i, w in enumerate(words) if Path(w).name == "vf-eval")
    return words[start:]


@pytest.mark.verifiers
def test_vf_eval_plays_and_scores_liveroom_episodes(tmp_path):
    """The docs' ``vf-eval`` command, against the test server with the scripted host as the model."""
    pytest.importorskip("verifiers.v1")
    pytest.importorskip("liveroom_env", reason="the Hub package: pip install -e examples/verifiers_env/liveroom_env")
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        command = _docs_command()
        command[command.index("--client.base-url") + 1] = srv.base_url
        vf_eval = Path(sys.executable).with_name("vf-eval")
        run = subprocess.run([str(vf_eval), *command[1:], "--no-rich", "-o", str(tmp_path)], cwd=tmp_path,
                             env={**os.environ, "OPENAI_API_KEY": "test"}, capture_output=True, text=True, timeout=600)
        assert run.returncode == 0, run.stderr[-3000:]
        assert srv.request_count > 0
    (traces,) = tmp_path.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text(encoding="utf-8").splitlines()]
    n = int(command[command.index("-n") + 1])
    turns = int(command[command.index("--env.taskset.segment-turns") + 1])
    assert len(episodes) == n and all(e["ok"] for e in episodes)
    for episode in episodes:
        (trace,) = episode["traces"]
        data, played = trace["task"]["data"], trace["info"]["liveroom"]
        assert 0 < played["steps"] <= turns
        assert played["provenance"]["spec_id"] == "LiveRoom-v0"
        rewards = {k: v["score"] for k, v in trace["rewards"].items()}
        # Scored by LiveRoom: the return is what the room pays for these very actions.
        actions = _actions(trace)
        assert len(actions) >= played["steps"]
        assert rewards["liveroom_return"] == pytest.approx(
            _replayed_return(data["env_id"], data["seed"], turns, actions[: played["steps"]]))
        assert trace["rewards"]["liveroom_return"]["weight"] == 1.0
        # The model was offered the room's tools as named in this episode (HSA may rename them).
        _, info = lr_vf.open_room(data["env_id"], None, data["seed"], turns)
        offered = [[t["name"] for t in node["tools"]] for node in trace["nodes"] if node.get("tools")]
        assert offered and all(names == [t["function"]["name"] for t in info["tools"]] for names in offered)
        assert {k for k in rewards if k != "liveroom_return"} == {f"liveroom_{c}" for c in played["returns"] if c != "total"}


@pytest.mark.verifiers
def test_the_tools_offered_are_the_harness_tools_as_named_now_under_hsa():
    """In process (``load_environment`` + ``run_episode``): HSA renames reach the model."""
    vf = pytest.importorskip("verifiers.v1")
    kwargs = {"harness_augmentation": {"probability": 1.0}}
    env = lr_vf.load_environment("LiveRoom-v0", seed=1, num_tasks=1, segment_turns=2, env_kwargs=kwargs)
    (task,) = list(env.taskset)
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        ctx = vf.ModelContext(model="avatar", client=vf.EvalClientConfig(base_url=srv.base_url,
                                                                          api_key_var="LIVEROOM_TEST_KEY"))

        async def play():
            async with env.serving():
                return await env.run_episode(task, ctx)

        episode = asyncio.run(play())
        offered = [[t["function"]["name"] for t in r["tools"]] for r in srv.requests]
    _, info = lr_vf.open_room("LiveRoom-v0", None, 1, 2, kwargs)
    renamed = [t["function"]["name"] for t in info["tools"]]
    assert renamed != ["get_product", "get_price_stock", "get_promotions", "get_policy", "get_order_status"]
    assert offered and all(names == renamed for names in offered)
    (trace,) = episode.traces
    assert episode.ok and trace.info["liveroom"]["steps"] == 2
    assert trace.reward == pytest.approx(trace.info["liveroom"]["returns"]["total"])
