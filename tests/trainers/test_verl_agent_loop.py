"""veRL's own agent-loop worker drives the LiveRoom agent loop (veRL 0.9, CPU, no GPU).

The config is veRL's ``ppo_trainer`` composed with Hydra from the overrides of the launch
command in docs/integrations.md; the rows are ``make_rows`` written to parquet and read
by veRL's ``RLHFDataset``; ``AgentLoopWorker.generate_sequences`` instantiates the loop
from the agent loop config file and runs it. Only the LLM server is scripted: a stand-in
for veRL's ``LLMServerClient.generate`` that answers token ids from a script.
"""

from __future__ import annotations

import asyncio
import json

import gymnasium as gym
import pytest

from conftest import docs_block, launch_overrides
from liveroom_sim.integrations.verl import make_rows

pytestmark = pytest.mark.trainers
verl = pytest.importorskip("verl")

# Paths of the docs' command, pointed at this test's files; and the prompt budget: the
# tiny BPE trained on the room's text makes ~3x more tokens than Qwen's tokenizer does.
SUBSTITUTE = {"data.train_files", "data.val_files", "actor_rollout_ref.model.path",
              "actor_rollout_ref.rollout.agent.agent_loop_config_path", "data.max_prompt_length"}


class ScriptedServer:
    """veRL's ``LLMServerClient.generate``: answers each call of a request with that request's
    next scripted text, as ids (samples run concurrently, so the script is kept per request)."""

    def __init__(self, tokenizer, script: list[str]):
        self.tokenizer, self.script = tokenizer, script
        self.calls: list[dict] = []

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        turn = sum(c["request_id"] == request_id for c in self.calls)
        text = self.script[turn % len(self.script)]
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        logprobs = [-0.01 * (k + 1) for k in range(len(ids))]
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "ids": ids, "logprobs": logprobs})
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed")


def _script(env_id: str) -> list[str]:
    tools = {t["function"]["name"] for t in gym.make(env_id).reset(seed=0)[1]["tools"]}
    promotions = next(n for n in tools if "promo" in n)
    call = json.dumps({"name": promotions, "arguments": {}})
    return [f"<tool_call>\n{call}\n</tool_call><|im_end|>", "@all Welcome in, the lineup is live!<|im_end|>"]


def _run(tmp_path, tiny_model, rows):
    import pandas as pd
    from hydra import compose, initialize_config_dir
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker
    from verl.protocol import DataProto
    from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn

    from liveroom_sim.integrations.verl_agent_loop import write_agent_loop_config

    pd.DataFrame(rows).to_parquet(tmp_path / "liveroom_train.parquet")
    agent_yaml = write_agent_loop_config(tmp_path / "liveroom_agent_loop.yaml")
    overrides = [o for o in launch_overrides(docs_block("verl-launch")) if o.split("=")[0] not in SUBSTITUTE]
    overrides += [f"data.train_files={tmp_path}/liveroom_train.parquet", f"data.val_files={tmp_path}/liveroom_train.parquet",
                  f"actor_rollout_ref.model.path={tiny_model}", "data.max_prompt_length=16384",
                  f"actor_rollout_ref.rollout.agent.agent_loop_config_path={agent_yaml}"]
    with initialize_config_dir(str(__import__("pathlib").Path(verl.__file__).parent / "trainer" / "config"),
                               version_base=None):
        config = compose("ppo_trainer", overrides=overrides)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model)
    server = ScriptedServer(tokenizer, _script(rows[0]["extra_info"]["liveroom"]["env_id"]))
    worker = AgentLoopWorker(config, server)
    dataset = RLHFDataset(data_files=[str(tmp_path / "liveroom_train.parquet")], tokenizer=tokenizer,
                          config=config.data, processor=None)
    assert len(dataset) == len(rows), "veRL's dataset dropped rows (too long for data.max_prompt_length?)"
    batch = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(dataset))]))
    return asyncio.run(worker.generate_sequences(batch)), server, config


def _replayed_return(row: dict, actions: list[str]) -> float:
    """The LiveRoom return of playing ``actions`` on the row's segment, without veRL,
    with what stopping there costs the room (the segment's settlement)."""
    from liveroom_sim.integrations.verl import action_from_message
    from liveroom_sim.trajectory.segments import fast_forward, settle_early_end

    room = row["extra_info"]["liveroom"]
    env = gym.make(room["env_id"])
    env.reset(seed=room["seed"])
    fast_forward(env, None, None, room["start_s"])
    total = 0.0
    for text in actions:
        _, reward, terminated, truncated, _ = env.step(action_from_message({"role": "assistant", "content": text}))
        total += reward
        if terminated or truncated:
            return total
    return total + settle_early_end(env.unwrapped.room).get("total", 0.0)


def test_verl_worker_plays_segments_token_in_token_out(tmp_path, tiny_model):
    turns = 4
    rows = make_rows("LiveRoom-v0", n=2, seed=0, agent_name="liveroom", segment_turns=turns)
    out, server, config = _run(tmp_path, tiny_model, rows)

    batch = out.batch
    assert {"prompts", "responses", "response_mask", "rollout_log_probs", "rm_scores"} <= set(batch.keys())
    assert len(server.calls) == 2 * turns  # K turns per segment, the docs' turn cap above K
    by_request: dict[str, list[dict]] = {}
    for call in server.calls:
        by_request.setdefault(call["request_id"], []).append(call)
    assert len(by_request) == 2
    prompt_width = batch["prompts"].shape[1]
    for i in range(len(rows)):
        # Samples run concurrently: find row i's request by its prompt (left-padded in the batch).
        prompt = [t for t, a in zip(batch["prompts"][i].tolist(), batch["attention_mask"][i, :prompt_width].tolist()) if a]
        calls = next(c for c in by_request.values() if c[0]["prompt_ids"] == prompt)
        # Each turn's prompt is the previous prompt, the sampled ids and the room's answer: no re-tokenising.
        for before, after in zip(calls, calls[1:]):
            assert after["prompt_ids"][: len(before["prompt_ids"]) + len(before["ids"])] == \
                before["prompt_ids"] + before["ids"]
        mask = batch["response_mask"][i].tolist()
        response = batch["responses"][i].tolist()
        model_ids = [t for t, m in zip(response, mask) if m == 1]
        assert model_ids == [t for c in calls for t in c["ids"]]  # exactly the sampled ids, mask 1
        first = len(calls[0]["ids"])
        assert mask[:first] == [1] * first and mask[first] == 0  # the room's answer follows, masked out
        logprobs = [lp for lp, m in zip(batch["rollout_log_probs"][i].tolist(), mask) if m == 1]
        assert logprobs == pytest.approx([lp for c in calls for lp in c["logprobs"]], abs=1e-6)

    extra = out.non_tensor_batch
    for i, row in enumerate(rows):
        steps = extra["liveroom"][i]["steps"]
        assert [s["segment"] for s in steps] == ["tool", "reply"] * (turns // 2)
        expected = _replayed_return(row, server.script * (turns // 2))
        assert float(batch["rm_scores"][i].sum()) == pytest.approx(expected, abs=1e-5)
        assert float(extra["liveroom/total"][i]) == pytest.approx(expected, abs=1e-5)
        assert sum(extra["turn_scores"][i]) == pytest.approx(expected, abs=1e-5)


def test_docs_launch_sets_lengths_turns_and_the_agent_loop():
    overrides = dict(o.split("=", 1) for o in launch_overrides(docs_block("verl-launch")))
    assert overrides["actor_rollout_ref.rollout.agent.default_agent_loop"] == "liveroom"
    assert int(overrides["data.max_prompt_length"]) >= 4096
    assert int(overrides["data.max_response_length"]) >= 8192
    assert "interaction_config_path" not in " ".join(overrides)  # gone in veRL 0.8
