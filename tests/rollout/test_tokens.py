"""Token-level records: captured from a real endpoint, stored compactly, rebuilt exactly.

The test server speaks tokens the way vLLM does (``return_token_ids``, ``logprobs``,
``return_tokens_as_token_ids``) with its toy tokenizer, so the whole path runs without a
GPU: request -> avatar's token log -> episode result -> rollout record (JSON) -> rows ->
padded arrays.
"""

from __future__ import annotations

import doctest
import json

import gymnasium as gym
import numpy as np
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

import liveroom_sim
from liveroom_sim.episode import play
from liveroom_sim.llm import tokens as llm_tokens
from liveroom_sim.llm.avatar import OpenAIAvatar
from liveroom_sim.llm.client import Endpoint
from liveroom_sim.llm.tokens import TokenLog, turn_tokens
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.rollout import tokens as rollout_tokens
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.rollout.tokens import record_size, token_rows, training_batch
from liveroom_sim.testing import OpenAICompatServer, policy_responder
from liveroom_sim.testing import tokenizer as toy
from liveroom_sim.testing.tokenizer import ToyTokenizer

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def test_module_examples_run():
    for module in (llm_tokens, rollout_tokens, toy):
        assert doctest.testmod(module).failed == 0


def test_test_server_returns_token_ids_and_logprobs_as_vllm_does():
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="test")
        messages = [{"role": "system", "content": "You host."}, {"role": "user", "content": "@mia asks: price?"}]
        raw = client.chat.completions.with_raw_response.create(
            model="m", messages=messages, logprobs=True,
            extra_body={"return_token_ids": True, "return_tokens_as_token_ids": True}).http_response.json()
        plain = client.chat.completions.with_raw_response.create(model="m", messages=messages).http_response.json()
    tok = ToyTokenizer()
    choice = raw["choices"][0]
    assert raw["prompt_token_ids"] == tok.encode(tok.chat_prompt(messages))
    assert choice["token_ids"] == tok.encode(tok.assistant_text(choice["message"]))
    assert [e["token"] for e in choice["logprobs"]["content"]] == [f"token_id:{t}" for t in choice["token_ids"]]
    assert all(-4.0 < e["logprob"] <= 0.0 for e in choice["logprobs"]["content"])
    # Asked for nothing, nothing is added (records without tokens stay as they were).
    assert "prompt_token_ids" not in plain and plain["choices"][0]["logprobs"] is None


def test_ids_come_from_logprob_entries_when_token_ids_are_missing():
    entries = {"content": [{"token": "token_id:42", "logprob": -0.5}, {"token": "token_id:7", "logprob": -1.0}]}
    assert turn_tokens({"prompt_token_ids": [1]}, {"logprobs": entries}) == {
        "prompt_ids": [1], "completion_ids": [42, 7], "logprobs": [-0.5, -1.0]}
    # Logprobs that do not match the ids are dropped, not misaligned.
    assert turn_tokens({"prompt_token_ids": [1]}, {"token_ids": [3, 4], "logprobs": entries | {
        "content": entries["content"][:1]}})["logprobs"] is None
    assert turn_tokens({"prompt_token_ids": "oops"}, {"token_ids": [1]}) is None


def _episode_with_tokens(env_id=TINY, seed=0):
    env = gym.make(liveroom_sim.register_spec(env_id) if env_id.endswith(".yaml") else env_id)
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url), tokens=True)
        result = play(env, avatar, seed, record=True)
        requests = srv.requests
    return result, requests


def test_an_episode_records_one_token_turn_per_step_and_rows_rebuild_every_prompt_exactly():
    result, requests = _episode_with_tokens()
    assert len(result.tokens) == result.steps == len(result.turn_rewards) == len(requests)
    tok = ToyTokenizer()
    rows = token_rows(result.tokens)
    # Every request's prompt, as the server tokenised it, is a row's prompt plus its response so far.
    prompts = [tok.encode(tok.chat_prompt(r["messages"], r.get("tools"))) for r in requests]
    step_row = {}
    for r_index, row in enumerate(rows):
        for start, _, step in row["spans"]:
            step_row[step] = (r_index, start)
    for step, prompt in enumerate(prompts):
        r_index, start = step_row[step]
        row = rows[r_index]
        assert row["prompt_ids"] + row["response_ids"][:start] == prompt
    # A new row starts exactly where a prompt does not extend the previous context.
    breaks = [i for i, t in enumerate(result.tokens) if not t["extends"]]
    assert [row["spans"][0][2] for row in rows] == breaks
    assert len(rows) > 1  # the room's prompt changes mid-stream (system prompt, history window)


def test_mask_and_logprobs_mark_exactly_the_models_tokens():
    result, _ = _episode_with_tokens()
    for row in token_rows(result.tokens):
        model = [i for i, m in enumerate(row["loss_mask"]) if m]
        assert model == [i for s, e, _ in row["spans"] for i in range(s, e)]
        assert all(row["logprobs"][i] == 0.0 for i, m in enumerate(row["loss_mask"]) if not m)
        assert row["has_logprobs"]


def test_a_rollout_file_round_trips_into_trainer_arrays(tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        spec = PolicySpec(kind="openai", model="m", base_url=srv.base_url, tokens=True)
        run_rollouts(RolloutConfig(env=TINY, policy=spec, episodes=2, group_size=2, out=tmp_path / "r.jsonl",
                                   progress=False, backend="async"))
    records = [json.loads(line) for line in open(tmp_path / "r.jsonl", encoding="utf-8")]
    assert all(len(r["tokens"]) == r["steps"] for r in records)
    batch = training_batch(records)
    rows = [row for r in records for row in token_rows(r["tokens"])]
    assert batch["input_ids"].shape[0] == len(rows) == len(batch["row_record"])
    for i, row in enumerate(rows):
        p, n = len(row["prompt_ids"]), len(row["response_ids"])
        assert batch["input_ids"][i, :p + n].tolist() == row["prompt_ids"] + row["response_ids"]
        assert batch["loss_mask"][i].sum() == sum(row["loss_mask"]) and batch["attention_mask"][i].sum() == p + n
        np.testing.assert_allclose(batch["logprobs"][i, p:p + n], row["logprobs"], rtol=1e-6)
        owner = records[batch["row_record"][i]]
        adv = batch["advantages"][i][batch["loss_mask"][i] == 1]
        assert np.allclose(adv, owner["advantage"], atol=1e-6)  # the record's scalar advantage on every model token
    size = record_size(records[0])
    assert size["json_bytes"] > size["json_bytes_without_tokens"] and size["rows"] >= 1


def test_records_without_tokens_stay_as_they_were(tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        spec = PolicySpec(kind="openai", model="m", base_url=srv.base_url)
        run_rollouts(RolloutConfig(env=TINY, policy=spec, episodes=1, out=tmp_path / "r.jsonl", progress=False))
    record = json.loads(open(tmp_path / "r.jsonl", encoding="utf-8").readline())
    assert "tokens" not in record
    with pytest.raises(ValueError, match="no tokens"):
        training_batch([record])


_ids = st.lists(st.integers(0, 50), max_size=6)


@given(st.lists(st.one_of(st.none(), st.tuples(_ids, st.lists(st.integers(0, 50), min_size=1, max_size=4))),
                min_size=1, max_size=8), st.booleans())
def test_token_log_rebuilds_every_prompt_whatever_it_was(turns, grow):
    """Whatever prompts arrive (growing or not), rows give back each prompt and completion."""
    log, context, seen = TokenLog(), [], []
    for turn in turns:
        if turn is None:
            log.add(None)
            context = []
            seen.append(None)
            continue
        extra, completion = turn
        prompt = (context + extra) if grow and context else extra
        log.add({"prompt_ids": prompt, "completion_ids": completion, "logprobs": [-0.1] * len(completion)})
        context = prompt + completion
        seen.append((prompt, completion))
    rows = token_rows(log.turns)
    rebuilt = {}
    for row in rows:
        full = row["prompt_ids"] + row["response_ids"]
        for start, end, step in row["spans"]:
            rebuilt[step] = (full[: len(row["prompt_ids"]) + start], full[len(row["prompt_ids"]) + start:
                                                                           len(row["prompt_ids"]) + end])
    for step, s in enumerate(seen):
        assert (s is None) == (step not in rebuilt)
        if s is not None:
            assert rebuilt[step] == s


def test_liveroom_rollout_tokens_flag_records_tokens(tmp_path, capsys):
    from liveroom_sim.cli.main import main

    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        code = main(["rollout", "--env", TINY, "--policy", "openai", "--model", "m", "--base-url", srv.base_url,
                     "--episodes", "1", "--out", str(tmp_path / "r.jsonl"), "--tokens"])
    assert code == 0
    record = json.loads(open(tmp_path / "r.jsonl", encoding="utf-8").readline())
    assert len(record["tokens"]) == record["steps"] and record["policy"]["tokens"] is True
