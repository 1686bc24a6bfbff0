"""Reasoning length: <think>...</think> never reaches the room, its length is recorded,
and a spec with a reasoning budget charges what goes past it."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from taolive_helpers import call, first_waiting, make

from liveroom_sim.harness.actions import strip_reasoning


def _reply_with(env, info, thinking: str):
    name = first_waiting(info)
    *_, info = env.step(f"<think>{thinking}</think>@{name} 欢迎来到直播间！")
    return info


def test_reasoning_is_stripped_and_recorded_but_free_in_liveroom_v0():
    env = make("LiveRoom-v0")
    env.reset(seed=0)
    *_, info = env.step("<think>" + "x" * 900 + "</think>Welcome to the stream, everyone!")
    assert info["messages"][-2] == {"role": "assistant", "content": "Welcome to the stream, everyone!"}
    assert info["turn"]["reasoning_chars"] == 900 and info["turn"]["delivered"]
    assert "format:block_retry" not in info["turn"]["hooks"]  # the reasoning is not spoken markup
    assert "reasoning" not in info["reward_breakdown"]


def test_the_taolive_budget_charges_reasoning_past_it_and_only_past_it():
    values = {}
    for chars in (0, 300, 450, 2000):
        env = make()
        _, info = env.reset(seed=0)
        env.step(call("load_skill", skill="answering"))
        info = _reply_with(env, info, "想" * chars)
        assert info["turn"]["reasoning_chars"] == chars
        values[chars] = info["reward_breakdown"]["reasoning"]
    assert values[0] == values[300] == 0.0
    assert values[450] == -0.5 and values[2000] == -1.0


def test_reasoning_before_a_tool_call_counts_too():
    env = make()
    env.reset(seed=0)
    action = json.loads(call("load_skill", skill="answering"))
    action["content"] = "<think>" + "查" * 600 + "</think>"
    *_, info = env.step(json.dumps(action, ensure_ascii=False))
    assert info["turn"]["kind"] == "tool" and info["turn"]["reasoning_chars"] == 600
    assert info["reward_breakdown"]["reasoning"] == -1.0
    assert "查" not in (info["messages"][-2]["content"] or "")


@settings(max_examples=300)
@given(st.text(alphabet=st.sampled_from("ab <>/think@\n{}\""), max_size=60))
def test_strip_reasoning_leaves_no_think_block_and_counts_at_most_what_it_removed(text):
    out, removed = strip_reasoning(text)
    assert "<think>" not in out.lower()
    assert 0 <= removed <= len(text)
    if "think>" not in text.lower():
        assert (out, removed) == (text, 0)


def test_strip_reasoning_reads_upper_and_title_case_tags():
    assert strip_reasoning("<THINK>plan</THINK>hi") == ("hi", 4)
    assert strip_reasoning("<Think>plan</Think>hi") == ("hi", 4)
