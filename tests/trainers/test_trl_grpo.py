"""TRL's ``GRPOTrainer`` trains one step on LiveRoom on CPU, running the docs' recipes.

Each test executes a code block of docs/integrations.md as written, replacing only its
``MODEL``, ``ROWS`` and ``budget`` lines: the tiny model this session builds, two rows,
and a one-step CPU budget. A randomly initialised model rarely writes a tool call, so for
the multi-turn recipe the budget adds ``sequence_bias`` (a standard ``generate`` option)
that steers the model into one fixed ``reply`` tool call per turn: TRL must then parse
it, call the environment, feed the room's answer back and score the rollout.
"""

from __future__ import annotations

import json
import re

import pytest

from conftest import docs_block

pytestmark = pytest.mark.trainers
pytest.importorskip("trl")

REPLY = "@all Welcome in, ask me anything!"


def _recipe(marker: str, model, budget: str, rows: str) -> str:
    code = docs_block(marker)
    code = re.sub(r'^MODEL = .*$', f'MODEL = "{model}"', code, count=1, flags=re.M)
    code = re.sub(r'^ROWS(, TURNS)? = .*$', rows, code, count=1, flags=re.M)
    code, n = re.subn(r'^budget = dict\(.*\)$', f"budget = {budget}", code, count=1, flags=re.M)
    assert n == 1, f"the {marker} block has no one-line budget = dict(...)"
    return code


def _forcing(model) -> list:
    """``sequence_bias`` entries that make any model write the reply tool call, token by token."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(model)
    call = json.dumps({"name": "reply", "arguments": {"message": REPLY}})
    ids = tok.encode(f"<tool_call>\n{call}\n</tool_call><|im_end|>", add_special_tokens=False)
    # Longer matched prefixes get larger biases, so the next token of the call always wins.
    return [[ids[: k + 1], 100.0 * (k + 1)] for k in range(len(ids))]


def _cpu_budget(tmp_path, completion: int, extra: str = "") -> str:
    return (f"dict(num_generations=2, per_device_train_batch_size=2, max_completion_length={completion}, "
            f"max_steps=1, logging_steps=1, use_cpu=True, report_to='none', save_strategy='no', "
            f"output_dir={str(tmp_path)!r}{extra})")


def test_docs_environment_factory_recipe_trains_a_step(tmp_path, tiny_model):
    bias = _forcing(tiny_model)
    budget = _cpu_budget(tmp_path, 6000, f", generation_kwargs={{'sequence_bias': {bias!r}}}")
    scope: dict = {}
    exec(_recipe("trl-recipe", tiny_model, budget, "ROWS, TURNS = 1, 3"), scope)  # noqa: S102 (the docs' code)
    trainer = scope["trainer"]

    assert trainer.state.global_step == 1
    logged = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    envs = trainer._environment_pool[None]
    played = [e for e in envs if e.segment is not None and e.segment["played"]]
    assert played, "no environment was stepped by TRL's tool-calling loop"
    for env in played:
        assert env.segment["turns"] == 3 and env.segment["start_s"] is not None
        assert env.segment["played"] == 3 and env.done  # TRL's cap and the segment agree
        assert len(env.breakdowns) == 3
        # the return is the steps' rewards plus what ending the shift early cost the room
        assert env.settlement["total"] < 0
        assert env.reward == pytest.approx(sum(b["total"] for b in env.breakdowns) + env.settlement["total"])
    # What TRL logged is what the environments scored.
    assert logged["rewards/liveroom_reward_total/mean"] == pytest.approx(
        sum(e.reward for e in played) / len(played), abs=1e-4)
    assert logged["tools/call_frequency"] > 0


def test_docs_single_turn_recipe_trains_a_step(tmp_path, tiny_model):
    scope: dict = {}
    exec(_recipe("trl-single-turn", tiny_model, _cpu_budget(tmp_path, 16), "ROWS = 2"), scope)  # noqa: S102
    trainer = scope["trainer"]
    assert trainer.state.global_step == 1
    logged = {k: v for entry in trainer.state.log_history for k, v in entry.items()}
    # Every completion was scored as its stream's first reply (a float, not None -> NaN).
    assert logged["rewards/liveroom_reward_total/mean"] == logged["rewards/liveroom_reward_total/mean"]
