"""The veRL adapter, called the way veRL calls an interaction (veRL is not installed).

What veRL does, from its source and docs (``verl/interactions``, ``ToolAgentLoop``): the
interaction config YAML's ``class_name`` is imported and built as ``cls(config=config)``
with the entry's ``name`` added to ``config``; per rollout it awaits
``start_interaction(request_id, **interaction_kwargs)``, then after each assistant turn
``generate_response(request_id, messages, **interaction_kwargs)`` -> ``(should_terminate,
response, turn_score, additional_data)``, appending the response as a user message until
``should_terminate``; ``calculate_score`` and ``finalize_interaction`` close the instance.
"""

from __future__ import annotations

import asyncio
import doctest
import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import liveroom_sim
from liveroom_sim.integrations import verl as lr_verl
from liveroom_sim.integrations.verl import LiveRoomInteraction, compute_score, make_rows
from liveroom_sim.policies import ScriptedAvatar

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"

CONFIG_YAML = f"""
interaction:
  - name: liveroom
    class_name: liveroom_sim.integrations.verl.LiveRoomInteraction
    config:
      spec: {TINY}
      seed: 0
"""


@pytest.fixture(scope="module")
def tiny_id() -> str:
    return liveroom_sim.register_spec(TINY)


def load_interactions(text: str) -> dict:
    """veRL's ``initialize_interactions_from_config``, with yaml standing in for OmegaConf."""
    interactions = {}
    for item in yaml.safe_load(text)["interaction"]:
        module, _, cls_name = item["class_name"].rpartition(".")
        cls = getattr(importlib.import_module(module), cls_name)
        interactions[item["name"]] = cls(config={**item["config"], "name": item["name"]})
    return interactions


def assistant_message(action: str) -> dict:
    """A policy's action as the assistant message a rollout would carry (OpenAI format)."""
    try:
        message = json.loads(action)
    except json.JSONDecodeError:
        return {"role": "assistant", "content": action}
    return {"role": "assistant", "content": message.get("content"), "tool_calls": message["tool_calls"]}


async def run_episode(interaction, row: dict, yield_between_turns: bool = False) -> dict:
    """One rollout as veRL's tool agent loop drives it; a reference env checks every turn."""
    kwargs = row["extra_info"]["interaction_kwargs"]
    request_id = f"req-{kwargs['seed']}"
    assert await interaction.start_interaction(request_id, **kwargs) == request_id
    reference = gym.make(kwargs["env_id"])
    obs, info = reference.reset(seed=kwargs["seed"])
    policy = ScriptedAvatar()
    messages = list(row["prompt"])
    scores, done, turns = [], False, 0
    while not done:
        action = policy(obs, info)
        messages.append(assistant_message(action))
        done, response, score, extra = await interaction.generate_response(request_id, messages, **kwargs)
        obs, reward, terminated, truncated, info = reference.step(action)
        assert isinstance(score, float) and score == reward
        assert extra["reward_breakdown"] == info["reward_breakdown"]
        assert done == (terminated or truncated)
        messages.append({"role": "user", "content": response})
        scores.append(score)
        turns += 1
        assert turns <= 60, "the episode never ended"  # the tiny spec's max_steps
        if yield_between_turns:
            await asyncio.sleep(0)  # let the other rollouts in flight take their turn
    total = await interaction.calculate_score(request_id)
    assert total == pytest.approx(sum(scores)) and total == pytest.approx(info["episode"]["return"])
    await interaction.finalize_interaction(request_id, **kwargs)
    return {"scores": scores, "total": total, "last": messages[-1]["content"]}


def test_the_config_yaml_builds_the_interaction(tiny_id):
    interaction = load_interactions(CONFIG_YAML)["liveroom"]
    assert isinstance(interaction, LiveRoomInteraction) and interaction.name == "liveroom"
    assert asyncio.run(interaction.start_interaction(None, name="liveroom"))  # an id is made up
    assert interaction.env_id == tiny_id


def test_a_whole_episode_scores_each_turn_with_the_env_reward(tiny_id):
    interaction = load_interactions(CONFIG_YAML)["liveroom"]
    row = make_rows(tiny_id, n=1, seed=2)[0]
    assert row["extra_info"]["interaction_kwargs"] == {"name": "liveroom", "seed": 2, "env_id": tiny_id}
    result = asyncio.run(run_episode(interaction, row))
    assert result["last"].endswith("[The stream has ended.]")
    assert result["total"] > 0  # the scripted host is a decent host
    # veRL's reward manager hands the rollout's turn scores to the custom reward function
    extra_info = {**row["extra_info"], "turn_scores": result["scores"], "num_turns": 2 * len(result["scores"]) + 1}
    assert compute_score(row["data_source"], result["last"], row["reward_model"]["ground_truth"],
                         extra_info=extra_info) == pytest.approx(result["total"])
    with pytest.raises(ValueError, match="turn_scores"):
        compute_score(row["data_source"], result["last"], "", extra_info=row["extra_info"])
    with pytest.raises(KeyError, match="start_interaction"):
        asyncio.run(interaction.calculate_score("req-2"))  # finalized


def test_several_rollouts_in_flight_keep_their_own_streams(tiny_id):
    rows = make_rows(tiny_id, n=3, seed=20)
    alone = [asyncio.run(run_episode(LiveRoomInteraction({"name": "liveroom"}), row)) for row in rows]

    async def together():
        interaction = LiveRoomInteraction({"name": "liveroom"})
        return await asyncio.gather(*(run_episode(interaction, row, yield_between_turns=True) for row in rows))

    assert asyncio.run(together()) == alone
    assert len({r["total"] for r in alone}) > 1  # different seeds, different streams


def test_opening_tool_calls_text_and_the_end(tiny_id):
    interaction = LiveRoomInteraction({"name": "liveroom", "env_id": tiny_id})

    async def drive():
        iid = await interaction.start_interaction("r", seed=1)
        opening = await interaction.generate_response(iid, [])  # nothing said yet: the opening
        hermes = await interaction.generate_response(iid, [{"role": "assistant", "content":
            '<think>price first</think><tool_call>{"name": "get_price_stock", "arguments": {"product_id": "sk-serum-t"}}'
            '</tool_call><|im_end|>'}])
        spoken = await interaction.generate_response(iid, [{"role": "assistant", "content":
            "<think>ok</think>Now featuring Tinyglow Vitamin Serum: $20 #ad<|im_end|>"}])
        last = spoken
        while not last[0]:
            last = await interaction.generate_response(iid, [{"role": "assistant", "content": "Tiny serum time!"}])
        after = await interaction.generate_response(iid, [{"role": "assistant", "content": "anyone there?"}])
        await interaction.finalize_interaction(iid)
        await interaction.finalize_interaction(iid)  # twice is harmless
        return opening, hermes, spoken, after

    opening, hermes, spoken, after = asyncio.run(drive())
    assert opening[:1] == (False,) and opening[1].startswith("[00:00] featured: Tinyglow") and opening[2] == 0.0
    done, text, score, extra = hermes
    assert extra["turn"] == "tool" and text.startswith("get_price_stock -> ")
    assert json.loads(text.split(" -> ", 1)[1])["price"] == 20.0
    done, text, score, extra = spoken
    assert extra["turn"] == "reply" and extra["reward_breakdown"]["factuality"] == 1.0
    assert after == (True, "[The stream has ended.]", 0.0, {})


def test_rows_teach_the_json_action_that_reaches_the_room(tiny_id):
    row = make_rows(tiny_id, n=1, seed=4)[0]
    assert "- get_price_stock(product_id): " in row["prompt"][-1]["content"]
    kwargs = row["extra_info"]["interaction_kwargs"]
    interaction = LiveRoomInteraction({"name": "liveroom"})
    action = '{"tool_calls": [{"function": {"name": "get_price_stock", "arguments": {"product_id": "ap-tee-t"}}}]}'

    async def drive():
        iid = await interaction.start_interaction("r", **kwargs)
        return await interaction.generate_response(iid, [*row["prompt"], {"role": "assistant", "content": action}],
                                                   **kwargs)

    done, text, score, extra = asyncio.run(drive())
    assert extra["turn"] == "tool" and json.loads(text.split(" -> ", 1)[1])["price"] == 15.0
    assert not done and extra["reward_breakdown"]["harness"] >= 0


def test_unknown_instances_are_a_clear_error():
    with pytest.raises(KeyError, match="start_interaction"):
        asyncio.run(LiveRoomInteraction({}).generate_response("nope", []))


def test_it_subclasses_verl_base_when_verl_has_loaded_it():
    code = textwrap.dedent("""
        import sys, types
        base = types.ModuleType("verl.interactions.base")
        class BaseInteraction:
            def __init__(self, config):
                self.config, self.name = config, config.get("name", "interaction_agent")
        base.BaseInteraction = BaseInteraction
        sys.modules["verl.interactions.base"] = base
        from liveroom_sim.integrations.verl import LiveRoomInteraction
        assert issubclass(LiveRoomInteraction, BaseInteraction)
        assert LiveRoomInteraction({"name": "x"}).name == "x"
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_importing_the_adapter_imports_no_trainer():
    code = ("import sys, liveroom_sim.integrations.verl as m; m.LiveRoomInteraction({'name': 'x'}); "
            "print([k for k in sys.modules if k.split('.')[0] in ('trl', 'verl', 'torch', 'ray')])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_docstring_examples_run():
    assert doctest.testmod(lr_verl).failed == 0
