"""The TRL adapter, called the way TRL's ``GRPOTrainer`` calls it (TRL is not installed).

What the trainer does, from its source and docs (TRL 1.x ``environment_factory``):
instances come from ``environment_factory()`` (zero arguments; pickled for
``AsyncGRPOTrainer``), are pooled and ``reset(**row)`` before each rollout (a returned
string is appended to the last prompt message); tools are the bound methods found by
``inspect.getmembers(env, inspect.ismethod)`` minus ``reset``, ``get_reward`` and
``_``-names; a tool's exception becomes its answer; reward functions get ``prompts``,
``completions``, ``completion_ids``, ``trainer_state``, every dataset column but
``prompt`` and ``environments``.
"""

from __future__ import annotations

import doctest
import inspect
import json
import pickle
import re
import subprocess
import sys
import typing
from pathlib import Path

import gymnasium as gym
import pytest

import liveroom_sim
from liveroom_sim.harness.tools import TOOLS
from liveroom_sim.integrations import trl as lr_trl
from liveroom_sim.integrations.trl import (
    COMPONENT_REWARD_FUNCS,
    REWARD_FUNCS,
    TOOL_MODE_NOTE,
    LiveRoomToolEnv,
    liveroom_reward_total,
    make_dataset,
    make_environment_factory,
)
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.spec import COMPONENTS

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"


@pytest.fixture(scope="module")
def tiny_id() -> str:
    return liveroom_sim.register_spec(TINY)


def trl_tools(env) -> dict:
    """TRL's discovery rule (``GRPOTrainer``: the class's functions, so a property such as
    ``room`` is never read or taken for a tool): the environment's tools, bound."""
    return {name: getattr(env, name) for name, _ in inspect.getmembers(type(env), predicate=inspect.isfunction)
            if name not in ("reset", "get_reward") and not name.startswith("_")}


def trl_prompt(prompt: list[dict], observation: str | None) -> list[dict]:
    """What TRL sends the model: ``reset``'s string appended to the last prompt message."""
    if observation is None:
        return prompt
    return prompt[:-1] + [{**prompt[-1], "content": prompt[-1]["content"] + observation}]


def trl_reward_kwargs(rows: list[dict], environments=None) -> dict:
    """The keyword arguments TRL adds to ``prompts``/``completions``: columns but ``prompt``."""
    kwargs = {key: [row[key] for row in rows] for key in rows[0] if key != "prompt"}
    kwargs.update(completion_ids=[[0]] * len(rows), trainer_state=None, log_extra=None, log_metric=None)
    if environments is not None:
        kwargs["environments"] = environments
    return kwargs


# ------------------------------------------------------------------ the factory
def test_factory_takes_no_arguments_and_survives_pickling(tiny_id):
    factory = pickle.loads(pickle.dumps(make_environment_factory(spec=str(TINY), seed=4)))
    env = factory()
    assert isinstance(env, LiveRoomToolEnv)
    assert "featured:" in env.reset()
    assert env.env_id == tiny_id


def test_tools_are_the_harness_tools_and_reply_each_with_a_schema_trl_can_build():
    tools = trl_tools(LiveRoomToolEnv())
    assert set(tools) == {*TOOLS, "reply"}
    for name, method in tools.items():
        doc = inspect.getdoc(method)
        hints = typing.get_type_hints(method)
        params = list(inspect.signature(method).parameters)
        documented = dict(re.findall(r"^\s+(\w+): (.+)$", doc.split("Args:")[1].split("Returns:")[0], re.M)) \
            if "Args:" in doc else {}
        assert set(documented) == set(params), name  # transformers' get_json_schema needs each one
        assert all(p in hints for p in params) and "return" in hints, name
        if name in TOOLS:  # one source of truth for what a tool does
            assert doc.split("\n\n")[0] == TOOLS[name].description


# --------------------------------------------------------------------- reset
def test_dataset_rows_carry_the_opening_so_reset_adds_nothing(tiny_id):
    rows = make_dataset(tiny_id, n=3, seed=7)
    assert [row["seed"] for row in rows] == [7, 8, 9] and {row["env_id"] for row in rows} == {tiny_id}
    assert [m["role"] for m in rows[0]["prompt"]] == ["system", "user"]
    assert rows[0]["prompt"][-1]["content"].endswith(TOOL_MODE_NOTE)
    env = make_environment_factory(tiny_id)()
    assert env.reset(**rows[1]) is None
    assert env.seed == 0 and env.returns == dict.fromkeys((*COMPONENTS, "total"), 0.0) and not env.done


def test_reset_hands_a_foreign_prompt_the_opening_to_append(tiny_id):
    env = make_environment_factory(tiny_id)()
    prompt = [{"role": "user", "content": "Host the stream."}]
    shown = trl_prompt(prompt, env.reset(prompt=prompt, seed=2))[-1]["content"]
    assert shown.startswith("Host the stream.\n\nsystem: ")
    assert "featured: Tinyglow Vitamin Serum" in shown and shown.endswith(TOOL_MODE_NOTE)


def test_the_same_seed_opens_the_same_stream(tiny_id):
    a, b = make_environment_factory(tiny_id)(), make_environment_factory(tiny_id)()
    assert a.reset(seed=5) == b.reset(seed=5)
    assert a.get_promotions() == b.get_promotions() and a.reward == b.reward


# --------------------------------------------------------------------- tools
def test_tools_return_the_room_answer_and_the_reward_is_tracked(tiny_id):
    env = make_environment_factory(tiny_id)()
    env.reset(seed=1)
    tools = trl_tools(env)
    assert "room" not in tools and "reply" in tools
    price = json.loads(tools["get_price_stock"](product_id="sk-serum-t"))
    assert price["price"] == 20.0 and price["stock"] == 6
    assert "error" in json.loads(tools["get_product"](product_id="no-such-thing"))  # data, not an exception
    update = tools["reply"](message="Now featuring Tinyglow Vitamin Serum: $20 #ad")
    assert re.match(r"^\[\d\d:\d\d\] featured: ", update)
    room = env.room
    assert len(env.breakdowns) == 3 and env.metrics["replies"] == 1
    assert env.returns == pytest.approx(room.returns) and env.reward == pytest.approx(room.returns["total"])
    assert env.reward == pytest.approx(sum(b["total"] for b in env.breakdowns))


def test_renamed_tools_are_called_by_their_current_names(tiny_id):
    env = make_environment_factory(tiny_id)()
    env.reset(seed=0)
    while env.room.clock < 55:  # the tiny campaign renames get_price_stock at 50 s
        env.reply(message="Tinyglow Vitamin Serum, have a look!")
    assert env.room.harness.tool_name("get_price_stock") == "check_price_and_stock"
    assert "error" not in json.loads(env.get_price_stock("ap-tee-t"))
    variant = make_environment_factory("LiveRoom-HarnessVariant-v0")()  # tools and fields renamed by HSA
    variant.reset(seed=0)
    assert variant.room.augmented
    for call in (lambda: variant.get_product("sk-serum-01"), lambda: variant.get_policy("sk-serum-01"),
                 variant.get_promotions, lambda: variant.get_price_stock("sk-serum-01")):
        assert "error" not in json.loads(call())
    assert variant.metrics["tool_errors"] == 0


def test_after_the_stream_ends_a_tool_raises_for_trl_to_report(tiny_id):
    env = make_environment_factory(tiny_id)()
    env.reset(seed=3)
    answers = []
    while not env.done:
        answers.append(env.reply(message="Tinyglow Vitamin Serum is on now!"))
    assert answers[-1].endswith("[The stream has ended. Stop calling tools.]")
    assert len(answers) <= 60  # the tiny spec's max_steps
    with pytest.raises(ValueError, match="stream is over"):
        env.get_promotions()


def test_tools_before_reset_raise_for_trl_to_report():
    with pytest.raises(ValueError, match="reset"):
        LiveRoomToolEnv().get_promotions()


# ------------------------------------------------------------ reward functions
def test_reward_functions_have_trl_names_one_per_component():
    assert [f.__name__ for f in REWARD_FUNCS] == ["liveroom_reward_total", *(f"liveroom_{c}" for c in COMPONENTS)]
    assert REWARD_FUNCS[1:] == COMPONENT_REWARD_FUNCS


def test_reward_functions_read_each_environment(tiny_id):
    rows = make_dataset(tiny_id, n=3, seed=0)
    envs = [make_environment_factory(tiny_id)() for _ in rows]
    for env, row in zip(envs, rows):
        env.reset(**row)
    envs[0].get_promotions()
    envs[1].reply(message="Now featuring Tinyglow Vitamin Serum: $20 #ad")
    completions = [[{"role": "assistant", "content": "done"}] for _ in rows]
    kwargs = trl_reward_kwargs(rows, environments=envs)
    for func in REWARD_FUNCS:
        values = func(prompts=[r["prompt"] for r in rows], completions=completions, **kwargs)
        key = func.__name__.removeprefix("liveroom_").replace("reward_total", "total")
        assert values == [env.returns[key] for env in envs] and all(isinstance(v, float) for v in values)
    assert liveroom_reward_total(prompts=[None], completions=[None], environments=[object()]) == [None]


def _case() -> str:
    return json.dumps({"id": "tiny-price", "env": str(TINY),
                       "question": {"asker": "mia", "intent": "price", "product": "sk-serum-t"}})


def test_without_environments_a_serialized_case_scores_the_reply():
    rows = [{"prompt": [{"role": "user", "content": "@mia: how much is the tiny serum?"}], "reward_case": _case()}] * 3
    correct = "@mia the Tinyglow Vitamin Serum is $20 right now. #ad"
    completions = [[{"role": "assistant", "content": correct}],
                   [{"role": "assistant", "content": "Link is up, go go go!"}],
                   [{"role": "assistant", "content": "@mia the Tinyglow Vitamin Serum is $35 right now. #ad"}]]
    prompts = [r["prompt"] for r in rows]
    kwargs = trl_reward_kwargs(rows)
    total = liveroom_reward_total(prompts=prompts, completions=completions, **kwargs)
    assert len(total) == 3 and all(isinstance(v, float) for v in total)
    assert total[0] > total[1] and total[0] > total[2]  # right and addressed beats generic and wrong
    factuality = lr_trl.liveroom_factuality(prompts=prompts, completions=completions, **kwargs)
    assert factuality[0] == 1.0 and factuality[2] < 0
    engagement = lr_trl.liveroom_engagement(prompts=prompts, completions=completions, **kwargs)
    assert engagement[0] > engagement[1]


def test_without_environments_the_row_seed_replays_the_reply(tiny_id):
    rows = make_dataset(tiny_id, n=2, seed=11, tools=False)
    env = gym.make(tiny_id)
    policy = ScriptedAvatar()
    for row in rows:
        obs, info = env.reset(seed=row["seed"])
        obs, _, _, _, info = env.step(policy(obs, info))  # the scripted host looks the facts up
        good, generic = policy(obs, info), NaiveAvatar()(obs, info)
        pair = [row, row]
        total = liveroom_reward_total(prompts=[row["prompt"]] * 2, completions=[good, generic],
                                      **trl_reward_kwargs(pair))
        env.reset(seed=row["seed"])
        assert total[0] == env.step(good)[1]  # the env's own reward for that first reply
        assert total[0] > total[1]
    assert liveroom_reward_total(prompts=["p"], completions=["text"]) == [None]  # nothing to score against


# ---------------------------------------------------------------- lightness
def test_importing_the_adapter_imports_no_trainer():
    code = ("import sys, liveroom_sim.integrations.trl as m; m.make_environment_factory(); "
            "print([k for k in sys.modules if k.split('.')[0] in ('trl', 'verl', 'torch', 'ray')])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_docstring_examples_run():
    assert doctest.testmod(lr_trl).failed == 0
