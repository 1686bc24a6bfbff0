"""Skills loaded by the policy (LiveRoom-TaoLive-v0): the prompt lists them, load_skill
returns their instructions, a reply with no reply skill loaded is blocked with one retry,
and the skill-selection reward pays for the skills a situation needs."""

from __future__ import annotations

import json

import pytest
from taolive_helpers import call, calls, first_waiting, make, update

from liveroom_sim.errors import SpecError
from liveroom_sim.harness.augment import ALL_OPERATORS
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.policies.skill_loading import listed_skills
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR


def _skill_tool(info) -> dict:
    """The skill tool as the prompt names it now (the avatars' reading of the prompt)."""
    return listed_skills(info)[0]


def _play(policy, seed: int = 0, **kwargs):
    env = make(**kwargs)
    obs, info = env.reset(seed=seed)
    turns = []
    while True:
        action = policy(obs, info)
        obs, r, term, trunc, info = env.step(action)
        turns.append((action, r, info))
        if term or trunc:
            return turns


class _WithoutSkills(ScriptedAvatar):
    """The scripted host with its skill loading removed."""

    def __call__(self, observation, info):
        action = super().__call__(observation, info)
        tool = _skill_tool(info)["name"]
        if not action.startswith("{"):
            return action
        turn = json.loads(action)
        kept = [c for c in turn["tool_calls"] if c["function"]["name"] != tool]
        if not kept:  # a turn that only loaded skills: reply as if loaded
            return super().__call__(observation, {**info, "tools": [t for t in info["tools"]
                                                                    if t["function"]["name"] != tool]})
        return json.dumps({**turn, "tool_calls": kept}, ensure_ascii=False)


class _EverySkill(ScriptedAvatar):
    """The scripted host that loads every listed skill in each exchange (the degenerate
    way to satisfy any skill requirement)."""

    def __call__(self, observation, info):
        action = super().__call__(observation, info)
        tool = _skill_tool(info)
        names = [name for name, _, _ in listed_skills(info)[1]]
        asked = {json.loads(c["function"]["arguments"])[list(tool["parameters"]["properties"])[0]]
                 for m in info["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or ()
                 if c["function"]["name"] == tool["name"]}
        if not action.startswith("{") or not (missing := [n for n in names if n not in asked]):
            return action
        turn = json.loads(action)
        field = list(tool["parameters"]["properties"])[0]
        extra = [{"id": f"all_{i}", "type": "function",
                  "function": {"name": tool["name"], "arguments": json.dumps({field: n}, ensure_ascii=False)}}
                 for i, n in enumerate(missing)]
        return json.dumps({**turn, "tool_calls": extra + turn["tool_calls"]}, ensure_ascii=False)


def test_prompt_lists_each_skill_by_name_type_and_description_but_not_its_instructions():
    _, info = make().reset(seed=0)
    system = info["messages"][0]["content"]
    harness = load_spec(ENVS_DIR / "LiveRoom-TaoLive-v0.yaml").harness
    for skill in harness.skills:
        assert f"- {skill.name} [" in system and skill.description in system
        assert skill.instructions.splitlines()[0] not in system
    assert "load_skill" in [t["function"]["name"] for t in info["tools"]]
    assert "- answering [回复]" in system and "- after-sales [售后]" in system


def test_load_skill_returns_the_instructions_and_a_wrong_name_gets_a_clear_error():
    env = make()
    env.reset(seed=0)
    *_, info = env.step(call("load_skill", skill="answering"))
    result = json.loads(info["messages"][-1]["content"])
    assert result["skill"] == "answering" and result["type"] == "reply"
    assert "先挑最要紧的问题" in result["instructions"]
    *_, info = env.step(call("load_skill", skill="answerin"))
    error = json.loads(info["messages"][-1]["content"])["error"]
    assert "tool_arguments:block" in info["turn"]["hooks"]  # the harness's argument check stops it
    assert "answerin" in error and "did you mean 'answering'" in error


def test_a_reply_with_no_reply_skill_loaded_is_blocked_with_one_retry():
    env = make()
    _, info = env.reset(seed=0)
    name = first_waiting(info)
    *_, info = env.step(f"@{name} 你好呀，欢迎来到直播间！")
    assert info["turn"]["hooks"] == ["required_skills:block_retry"] and not info["turn"]["delivered"]
    assert info["messages"][-1]["content"].startswith("[hook] 回复未发出：本轮还没有加载回复技能。请先用 load_skill")
    assert info["reward_breakdown"]["skills"] == -1.0
    *_, info = env.step(f"@{name} 你好呀，欢迎来到直播间！")  # the one retry, wasted: the exchange closes
    assert "required_skills:block_retry" in info["turn"]["hooks"] and not info["turn"]["delivered"]
    assert info["messages"][-1]["role"] == "user" and not info["messages"][-1]["content"].startswith("[hook]")
    name = first_waiting(info)
    env.step(call("load_skill", skill="answering"))
    *_, info = env.step(f"@{name} 你好呀，欢迎来到直播间！")
    assert "required_skills:block_retry" not in info["turn"]["hooks"]


def test_skill_selection_credits_the_needed_skills_and_costs_irrelevant_ones():
    env = make()
    _, info = env.reset(seed=0)
    name = first_waiting(info)
    env.step(calls(("load_skill", {"skill": "answering"}), ("load_skill", {"skill": "after-sales"})))
    *_, info = env.step(f"@{name} 你好呀！")
    mixed = info["reward_breakdown"]["skills"]
    reasons = " ".join(info["reward_reasons"]["skills"])
    assert "after-sales" in reasons and mixed < 1.0  # the after-sales playbook is not for this request


@pytest.mark.parametrize("seed", [0, 1])
def test_the_scripted_host_loads_skills_and_beats_loading_none_or_all(seed):
    scripted = _play(ScriptedAvatar(), seed)
    none = _play(_WithoutSkills(), seed)
    every = _play(_EverySkill(), seed)

    def total(turns, key="total"):
        return sum(i["reward_breakdown"][key] for _, _, i in turns)

    assert any("load_skill" in a for a, _, _ in scripted)
    assert not any("required_skills" in h for _, _, i in scripted for h in i["turn"]["hooks"])
    assert total(scripted, "skills") > 0 > total(none, "skills")
    assert total(scripted, "skills") > total(every, "skills")
    assert total(scripted) > total(none) and total(scripted) > total(every)


def test_loading_skills_and_then_serving_nobody_earns_no_skill_credit():
    class LoadThenHype:
        def __call__(self, observation, info):
            if info["messages"][-1]["role"] != "tool":
                return call("load_skill", skill="answering")
            return NaiveAvatar()(observation, info)

    turns = _play(LoadThenHype())
    assert sum(i["reward_breakdown"]["skills"] for _, _, i in turns) <= 0


def test_the_scripted_host_reads_skill_names_and_the_tool_name_under_augmentation():
    aug = {"probability": 1.0, "operators": list(ALL_OPERATORS), "at_harness_change": True}
    env = make(harness_augmentation=aug)
    obs, info = env.reset(seed=3)
    tool = _skill_tool(info)["name"]
    assert tool != "load_skill"  # renamed by the augmentation
    policy, loads, skills, blocked = ScriptedAvatar(), 0, 0.0, 0
    while True:
        action = policy(obs, info)
        loads += f'"name": "{_skill_tool(info)["name"]}"' in action
        obs, _, term, trunc, info = env.step(action)
        skills += info["reward_breakdown"]["skills"]
        blocked += "required_skills:block_retry" in info["turn"]["hooks"]
        if term or trunc:
            break
    assert loads > 50 and skills > 0 and blocked == 0


def test_existing_specs_neither_offer_load_skill_nor_report_the_new_terms():
    for env_id in ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0"):
        env = make(env_id) if env_id != "LiveRoom-HarnessVariant-v0" else __import__("gymnasium").make(env_id)
        _, info = env.reset(seed=0)
        assert "load_skill" not in {t["function"]["name"] for t in info["tools"]}
        *_, info = env.step("hello")
        assert "skills" not in info["reward_breakdown"] and "reasoning" not in info["reward_breakdown"]


def test_a_harness_with_skills_on_demand_needs_descriptions(tmp_path):
    import shutil

    folder = tmp_path / "h"
    shutil.copytree(ENVS_DIR / "harness" / "taolive-zh", folder)
    path = folder / "answering" / "SKILL.md"
    path.write_text("\n".join(l for l in path.read_text(encoding="utf-8").splitlines()
                              if not l.startswith("description:")), encoding="utf-8")
    from liveroom_sim.harness.core import load_harness

    with pytest.raises(SpecError, match="answering.*description"):
        load_harness(folder)


def test_on_the_full_taolive_room_with_tool_faults_the_scripted_host_still_serves():
    env = __import__("gymnasium").make("LiveRoom-TaoLive-v0")  # as registered: faults on, HSA on half
    results = {}
    for name, policy in (("scripted", ScriptedAvatar()), ("none", _WithoutSkills()), ("naive", NaiveAvatar())):
        obs, info = env.reset(seed=5)
        ret, faults, skills = 0.0, 0, 0.0
        while True:
            obs, r, term, trunc, info = env.step(policy(obs, info))
            ret, faults = ret + r, faults + len(info["turn"]["tool_faults"])
            skills += info["reward_breakdown"]["skills"]
            if term or trunc:
                break
        results[name] = (ret, faults, skills)
    assert results["scripted"][1] > 0  # the services did fail
    assert results["scripted"][2] > 0 > results["none"][2]
    assert results["scripted"][0] > 0 > max(results["none"][0], results["naive"][0])
