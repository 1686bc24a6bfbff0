"""The paper's hooks, declared in the harness file with their actions: input check,
tool arguments, required skills (see test_skills_on_demand.py), reply format, factual
risk and retry control; and the hooks and the reward read a reply the same way."""

from __future__ import annotations

import json

import pytest
from taolive_helpers import call, calls, first_waiting, hook, make, update, variant_spec

from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.policies.reading import phrasebook


def _serve_first_price_question(env, info):
    """Load the reply skill and look up the featured product's price; returns the tool result."""
    *_, info = env.step(calls(("load_skill", {"skill": "answering"}),
                              ("get_price_stock", {"product_id": "sk-serum-01"})))
    return json.loads(info["messages"][-1]["content"]), info


@pytest.mark.parametrize("action", ["block", "warn"])
def test_tool_argument_check_blocks_or_warns_as_declared(tmp_path, action):
    spec = variant_spec(tmp_path, lambda d: hook(d, "tool_arguments").update(action=action))
    env = make(spec)
    env.reset(seed=0)
    *_, info = env.step(call("get_product", product_id="sk-serum-99"))
    assert info["turn"]["hooks"] == [f"tool_arguments:{action}"]
    error = json.loads(info["messages"][-1]["content"])["error"]
    if action == "block":  # not run: the hook's message, with the closest id
        assert error.startswith("参数检查未通过：get_product 的 product_id='sk-serum-99'") and "sk-serum-01" in error
    else:  # run: the tool's own error
        assert not error.startswith("参数检查未通过") and "sk-serum-99" in error
    *_, info = env.step(call("get_product", product_id="sk-serum-01"))
    assert info["turn"]["hooks"] == [] and "error" not in json.loads(info["messages"][-1]["content"])


def test_factual_risk_blocks_a_fact_not_looked_up_this_exchange_and_passes_it_after_a_lookup():
    env = make()
    _, info = env.reset(seed=0)
    env.step(call("load_skill", skill="answering"))
    name = first_waiting(info)
    *_, info = env.step(f"@{name} 水光烟酰胺精华液现在只要9元！")
    assert "factual_risk:block_retry" in info["turn"]["hooks"] and not info["turn"]["delivered"]
    assert "没有经过本轮的工具查询" in info["messages"][-1]["content"]
    assert info["reward_breakdown"]["tools"] < 0  # the reward reads the same unbacked claim
    result, info = _serve_first_price_question(env, info)
    *_, info = env.step(f"@{name} 水光烟酰胺精华液现在{result['price']:g}元。")
    assert not any(h.startswith("factual_risk") for h in info["turn"]["hooks"])


def test_retry_control_sets_how_many_retries_and_what_the_retry_says(tmp_path):
    def edit(d):
        d["retry"] = {"max_retries": 2, "message": "[hook] 第二次机会（还剩{left}次，{type}）：{message}"}

    env = make(variant_spec(tmp_path, edit))
    _, info = env.reset(seed=0)
    env.step(call("load_skill", skill="answering"))
    name = first_waiting(info)
    said = []
    for _ in range(3):
        *_, info = env.step(f"@{name} 这是全网第一的好东西")  # a banned superlative, three times
        said.append(info["messages"][-1]["content"])
    assert said[0].startswith("[hook] 第二次机会（还剩1次，banned_phrases）：回复未发出")
    assert said[1].startswith("[hook] 第二次机会（还剩0次，banned_phrases）")
    assert not said[2].startswith("[hook]")  # out of retries: the exchange closes


def _episode(env, policy, seed=0):
    obs, info = env.reset(seed=seed)
    while True:
        obs, r, term, trunc, info = env.step(policy(obs, info))
        yield info
        if term or trunc:
            return


def test_input_check_warns_about_a_message_that_instructs_the_host():
    env = make()
    # the steps that opened a new exchange: their last message is the room update
    seen = [(update(i), i["turn"]["hooks"]) for i in _episode(env, ScriptedAvatar(), seed=1)
            if i["messages"][-1]["content"] == update(i)]
    flagged = [(u, h) for u, h in seen if "[hook] 输入检查" in u]
    assert flagged and all("input_check:warn" in h for _, h in flagged)
    assert not any("input_check:warn" in h for u, h in seen if "[hook] 输入检查" not in u)


def test_input_check_that_blocks_withholds_the_message_text(tmp_path):
    env = make(variant_spec(tmp_path, lambda d: hook(d, "input_check").update(action="block")))
    updates = [update(i) for i in _episode(env, ScriptedAvatar(), seed=1)]
    assert any("[withheld by the input check]" in u for u in updates)
    cues = phrasebook("zh").cues["inject"]
    # What viewers said (a handle such as 超级管理员 is a name, not an instruction).
    chat = [line.split(": ", 1)[-1] for u in updates for line in u.splitlines()[1:] if not line.startswith("[hook]")]
    assert not any(c in line.lower() for line in chat for c in cues)  # no instruction reaches the host


@pytest.mark.parametrize("policy", [ScriptedAvatar, NaiveAvatar])
def test_a_blocked_reply_earns_nothing_and_each_block_is_a_cost_the_reward_sees(policy):
    env = make()
    blocks = 0
    for info in _episode(env, policy(), seed=0):
        turn, b = info["turn"], info["reward_breakdown"]
        if turn["kind"] != "reply" or turn["delivered"]:
            continue
        blocks += 1
        assert all(v <= 0 for k, v in b.items() if k != "total")
        hooks = turn["hooks"]
        if "banned_phrases:block_retry" in hooks:
            assert b["compliance"] < 0
        if "factual_risk:block_retry" in hooks:
            assert b["tools"] < 0
        if "required_skills:block_retry" in hooks:
            assert b["skills"] < 0
    assert blocks > 0


def test_hook_kinds_and_actions_are_validated_with_the_file_named(tmp_path):
    from liveroom_sim.errors import SpecError
    from liveroom_sim.spec import load_spec

    spec = variant_spec(tmp_path, lambda d: hook(d, "factual_risk").update(action="retry_forever"))
    with pytest.raises(SpecError, match="harness.yaml"):
        load_spec(spec)
