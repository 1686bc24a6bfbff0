"""The reference host's replies pass an editor's read: the text-quality check finds each
kind of fault a person would strike, and finds none in the reference host's transcripts
of every registered env; no rule line of any system prompt ends with nothing after it."""

from __future__ import annotations

import re

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.policies.text_quality import reply_problems, transcript_problems

SYSTEM = ("## Style\nKeep replies under 300 characters\n## Rules\nSay \"#ad\" / \"sponsored\" when talking about sponsored products\n"
          "Say \"not evaluated by the FDA\" when talking about health food products\n"
          "讲到推广商品时要说\"广告\"\n\n## Lineup\n"
          "- sk-serum-01: Dewveil Niacinamide Glow Serum (Dewveil; glow serum)\n"
          "- sn-cookie-01: Honeyhill Brown Butter Cookies (Honeyhill; butter cookies)\n")
UPDATE = ("[01:00] featured: Kairo Fit S2 Smartwatch (el-watch-01) | viewers: 9\nwaiting for an answer:\n"
          "- @jo (20s): how much is the butter cookies\n- @sam (12s): glow serum price?\n")
MESSAGES = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": UPDATE}]


@pytest.mark.parametrize(("reply", "language", "kind"), [
    ("@jo Order LR-10277 is delivered, arriving in 0 days.", "en", "count"),
    ("@jo Order LR-10359 has shipped, arriving in 1 days.", "en", "count"),
    ("@jo The glow serum lasts 3 month.", "en", "count"),
    ("@jo 订单LR-20337已签收，预计0天送达。", "zh", "count"),
    ("@jo The butter cookies are $18.5 right now.", "en", "money"),
    ("@jo 饼干现在18.5元。", "zh", "money"),
    ("@jo 开衫洗护：冷水手洗。。好物不停！", "zh", "punctuation"),
    ("@jo Care: hand wash cold..", "en", "punctuation"),
    ("@jo butter cookies is $18 right now.", "en", "capital"),
    ("@jo The cookies are $18. code X is on.", "en", "capital"),
    ("@jo The cookies are $18. #ad not evaluated by the FDA Shop smart!", "en", "run_on"),
    ("@jo 饼干现在18元。 广告用券码GLOW15到手15元。", "zh", "run_on"),
    ("@jo 维C片现在75元。维C片暂无优惠，现在75元。", "zh", "repeat"),
    ("@jo Use code GLOW15 on it! Code GLOW15 takes it to $15.", "en", "repeat"),
    ("@jo The cookies are $18. The cookies are $18.", "en", "repeat"),
    ("@jo The glow serum is $20 right now. The butter cookies are $10.25 right now.", "en", "mention"),
    ("@jo The butter cookies are $10.25. @jo thanks!", "en", "mention"),
    ("@jo #ad", "en", "empty"),
    ("@jo " + "The butter cookies are $10 right now. " * 9, "en", "style"),
])
def test_each_fault_is_found(reply, language, kind):
    found = [p.kind for p in reply_problems(reply, MESSAGES, language)]
    assert kind in found, found


def _at(second: int) -> list[dict]:
    return [MESSAGES[0], {"role": "user", "content": UPDATE.replace("[01:00]", f"[01:{second:02d}]")}]


def test_a_fact_said_again_to_nobody_within_a_minute_is_a_repeat():
    pitch = "The butter cookies are $10.25 right now. #ad"
    again = transcript_problems([(pitch, _at(0)), (pitch, _at(20))], "en")
    assert [p.kind for p in again] == ["repeat"]
    # Said again to a viewer who asks, or after a minute, it is news to someone.
    assert transcript_problems([(pitch, _at(0)), ("@jo " + pitch, _at(20))], "en") == []
    later = [MESSAGES[0], {"role": "user", "content": UPDATE.replace("[01:00]", "[02:05]")}]
    assert transcript_problems([(pitch, _at(0)), (pitch, later)], "en") == []


def test_a_reply_without_the_greeting_or_sign_off_in_force_breaks_the_style():
    system = SYSTEM + 'Begin every reply with "Hi!" (after the mention). End every reply with "Thanks!".\n'
    messages = [{"role": "system", "content": system}, MESSAGES[1]]
    assert reply_problems("@jo Hi! The butter cookies are $10 right now. Thanks!", messages, "en") == []
    found = [p.found for p in reply_problems("@jo The butter cookies are $10 right now.", messages, "en")]
    assert found == ["no greeting 'Hi!'", "does not end with 'Thanks!'"]


@pytest.mark.parametrize(("reply", "language"), [
    ("@jo The butter cookies are $10.25 right now. Code GLOW15 takes them to $8.71. #ad", "en"),
    ("@jo Order LR-10359 has shipped, arriving in 1 day. Not evaluated by the FDA.", "en"),
    ("@sam The glow serum is $20 right now.", "en"),
    ("@jo 饼干现在18元，用券码GLOW15到手15元。（广告）", "zh"),
])
def test_a_clean_reply_passes(reply, language):
    assert reply_problems(reply, MESSAGES, language) == []


#: A rule line (banned phrases, a claim family) that ends at its colon.
_RULE_LINE = re.compile(r"(?:Banned phrases|claims about|禁用语|适用于)[^:：]*[:：]\s*(?:$|\\n|\"\s*,?\s*$)")
ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0", "LiveRoom-TaoLive-v0")


@pytest.mark.parametrize("env_id", ENVS)
def test_the_reference_host_writes_clean_text(env_id):
    env = gym.make(env_id)
    language = env.unwrapped.world.spec.language
    problems, replies, prompts = [], 0, set()
    for seed, temperature in ((0, 0.0), (1, 0.0), (2, 0.0), (3, 1.0)):  # the reference, and a sampling host
        host = ScriptedAvatar(temperature, seed)
        obs, info = env.reset(seed=seed)
        done, steps = False, []
        while not done:
            action = host(obs, info)
            if not action.lstrip().startswith("{") and action.strip():
                replies += 1
                steps.append((action, info["messages"]))
                prompts.add(info["messages"][0]["content"])
            obs, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        problems += transcript_problems(steps, language)  # each reply, and facts said again to nobody
    assert replies > 400
    assert not problems, "\n".join(map(str, problems[:10]))
    empty = {line for p in prompts for line in p.splitlines() if _RULE_LINE.search(line)}
    assert not empty, f"rule lines with nothing after the colon: {sorted(empty)[:5]}"


def test_the_docstring_examples_run():
    import doctest

    from liveroom_sim.policies import host_lines, text_quality

    for module in (text_quality, host_lines):
        assert doctest.testmod(module).failed == 0
