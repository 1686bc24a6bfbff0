"""Tool faults through the env's public API: timeouts, malformed and truncated output,
denials; what the policy reads, what the turn records, what the reward makes of it, and
how the scripted host copes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.errors import SpecError
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from room_helpers import waiting_price_question as waiting_question

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"
RATES = {"timeout": 0.2, "malformed": 0.1, "truncated": 0.1, "denied": 0.1}


def call(name: str, **arguments) -> str:
    return json.dumps({"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})


def faulty_spec(tiny_dir: Path, rates=RATES, timeout_s: float = 3.0) -> Path:
    path = tiny_dir / "faulty-v0.yaml"
    path.write_text("extends: tiny-v0.yaml\nid: Faulty-v0\ntools: " + json.dumps(
        {"faults": rates, "timeout_s": timeout_s}) + "\n")
    return path


def waiting_price_question(env, options=None):
    """``(info, viewer name, product)`` of a price question waiting in the room."""
    info, msg = waiting_question(env, options=options)
    return info, msg.viewer.name, env.room.market.catalog.by_id[msg.product]


def play(env, policy, seed, options=None):
    obs, info = env.reset(seed=seed, options=options)
    actions, faults, done = [], [], False
    while not done:
        action = policy(obs, info)
        obs, _, term, trunc, info = env.step(action)
        actions.append(action)
        faults += info["turn"]["tool_faults"]
        done = term or trunc
    return actions, faults, info


def test_tools_never_fail_unless_the_spec_or_the_caller_says_so():
    env = LiveRoomEnv(TINY)
    actions, faults, info = play(env, ScriptedAvatar(), 0)
    assert faults == [] and "tool_faults" not in info["metrics"]
    assert any('"tool_calls"' in a for a in actions)


def test_a_pinned_timeout_costs_latency_and_says_a_retry_may_help():
    env = LiveRoomEnv(TINY)
    env.reset(seed=0, options={"tool_faults": [{"kind": "timeout", "call": 1}]})
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    error = json.loads(info["messages"][-1]["content"])["error"]
    assert "timeout" in error and "retried" in error
    assert info["turn"]["tool_faults"] == [{"call_id": "c1", "tool": "get_price_stock", "kind": "timeout"}]
    assert info["turn"]["latency_s"] == pytest.approx(0.8 + 3.0)
    assert info["turn"]["tool_errors"] == []  # the service's fault, not the policy's
    assert info["reward_breakdown"]["harness"] >= 0
    assert info["metrics"]["tool_faults"] == 1
    # The retry gets through, and is not a redundant call.
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    assert json.loads(info["messages"][-1]["content"])["product_id"] == "sk-serum-t"
    assert info["turn"]["tool_faults"] == [] and info["reward_breakdown"]["tools"] == 0


@pytest.mark.parametrize("kind", ["malformed", "truncated"])
def test_malformed_and_truncated_output_cannot_be_read_as_a_result(kind):
    env = LiveRoomEnv(TINY)
    env.reset(seed=0)
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    good = info["messages"][-1]["content"]
    env.reset(seed=0, options={"tool_faults": [{"kind": kind, "tool": "get_price_stock"}]})
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    shown = info["messages"][-1]["content"]
    with pytest.raises(json.JSONDecodeError):
        json.loads(shown)
    assert shown != good and (good.startswith(shown) if kind == "truncated" else len(shown) < len(good))
    assert info["turn"]["tool_faults"][0]["kind"] == kind


def test_a_denial_holds_for_the_exchange_and_retrying_it_is_redundant():
    env = LiveRoomEnv(TINY)
    env.reset(seed=0, options={"tool_faults": [{"kind": "denied", "tool": "get_price_stock"}]})
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    assert "permission denied" in json.loads(info["messages"][-1]["content"])["error"]
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    assert info["turn"]["tool_faults"][0]["kind"] == "denied"
    assert info["reward_breakdown"]["tools"] < 0
    assert any("redundant" in r for r in info["reward_reasons"]["tools"])
    env.step("Welcome to Tiny Test Live!")  # a reply ends the exchange: permissions are checked anew
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    assert info["turn"]["tool_faults"] == []


def _answer_after_faults(env, pins: int, answer: str, retries: int = 1):
    """A waiting price question; its price lookup tried ``retries + 1`` times, the first
    ``pins`` of them timing out; then ``answer`` (made_up: the price as known a moment
    ago; honest: "can't check"; looked: the price the lookup returned)."""
    options = {"tool_faults": [{"kind": "timeout", "tool": "get_price_stock", "times": pins}]} if pins else None
    _, name, product = waiting_price_question(env, options=options)
    price = env.room.market.price(product.id)  # right: only not checked
    for _ in range(retries + 1):
        _, _, _, _, info = env.step(call("get_price_stock", product_id=product.id))
    text = (f"@{name} sorry, I can't check that right now, ask me again in a moment!" if answer == "honest"
            else f"@{name} {product.name} is ${price:.2f} right now.")
    _, reward, _, _, info = env.step(text)
    return reward, info


def test_a_fact_stated_after_its_lookup_failed_loses_to_an_honest_answer():
    env = LiveRoomEnv(TINY)
    made_up, info = _answer_after_faults(env, 2, "made_up")
    assert info["reward_breakdown"]["factuality"] < 0 and info["reward_breakdown"]["tools"] == -1
    assert any("lookup failed" in r for r in info["reward_reasons"]["tools"])
    assert info["reward_breakdown"]["engagement"] <= 0  # a guess is no answer
    honest, info = _answer_after_faults(env, 2, "honest")
    assert any("cannot check" in r for r in info["reward_reasons"]["engagement"])
    looked, _ = _answer_after_faults(env, 1, "looked")  # the retry got through
    assert looked > honest > made_up


def test_giving_up_after_one_timeout_earns_less_than_retrying():
    env = LiveRoomEnv(TINY)
    gave_up, info = _answer_after_faults(env, 1, "honest", retries=0)
    assert not any("cannot check" in r for r in info["reward_reasons"]["engagement"])  # a retry was due
    retried, _ = _answer_after_faults(env, 1, "looked", retries=1)
    assert retried > gave_up


def test_rates_draw_the_same_faults_for_the_same_seed_and_leave_the_viewers_alone(tiny_dir):
    env = LiveRoomEnv(faulty_spec(tiny_dir))
    first = play(env, ScriptedAvatar(), 3)
    again = play(env, ScriptedAvatar(), 3)
    assert first[1] and first[1] == again[1] and first[0] == again[0]
    assert {f["kind"] for f in first[1]} <= {"timeout", "malformed", "truncated", "denied"}
    # A host that never calls a tool meets the same room with and without faults.
    plain = play(LiveRoomEnv(tiny_dir / "tiny-v0.yaml"), NaiveAvatar(), 3)
    faulty = play(env, NaiveAvatar(), 3)
    assert plain[2]["messages"] == faulty[2]["messages"] and faulty[1] == []


def test_each_harness_variant_draws_its_own_faults(tiny_dir):
    env = LiveRoomEnv(faulty_spec(tiny_dir))
    runs = [play(env, ScriptedAvatar(), 5, {"harness_variant": k})[1] for k in (0, 1)]
    assert runs[0] != runs[1]


def test_bad_fault_settings_are_clear_errors(tiny_dir):
    with pytest.raises(SpecError, match="fault rates add up to 1.2"):
        LiveRoomEnv(faulty_spec(tiny_dir, {"timeout": 0.6, "denied": 0.6}))
    env = LiveRoomEnv(TINY)
    with pytest.raises(ValueError, match=r"tool_faults\[0\]: kind"):
        env.reset(seed=0, options={"tool_faults": [{"kind": "explode", "call": 1}]})
    with pytest.raises(ValueError, match="needs 'call', 'tool' or both"):
        env.reset(seed=0, options={"tool_faults": [{"kind": "timeout"}]})
    with pytest.raises(ValueError, match="unknown tool 'get_price' \\(did you mean 'get_price_stock'\\?\\)"):
        env.reset(seed=0, options={"tool_faults": [{"kind": "timeout", "tool": "get_price"}]})
    with pytest.raises(ValueError, match="expected a list of pinned faults"):
        env.reset(seed=0, options={"tool_faults": {"kind": "timeout", "call": 1}})


# ------------------------------------------------------------------ the scripted host
def _scripted_until_reply(env, info):
    """Steps of the scripted host from ``info`` until its first reply: the infos."""
    policy, seen = ScriptedAvatar(), []
    for _ in range(6):
        action = policy("", info)
        _, _, _, _, info = env.step(action)
        seen.append((action, info))
        if info["turn"]["kind"] == "reply":
            break
    return seen


def test_scripted_host_retries_a_timeout_once_then_answers_from_the_lookup():
    env = LiveRoomEnv(TINY)
    info, name, product = waiting_price_question(
        env, options={"tool_faults": [{"kind": "timeout", "tool": "get_price_stock"}]})
    seen = _scripted_until_reply(env, info)
    kinds = [i["turn"]["kind"] for _, i in seen]
    assert kinds == ["tool", "tool", "reply"]
    assert seen[0][1]["turn"]["tool_faults"] and not seen[1][1]["turn"]["tool_faults"]
    retried = json.loads(seen[1][0])["tool_calls"]
    assert [c["function"]["name"] for c in retried] == ["get_price_stock"]
    reply, last = seen[-1]
    assert reply.startswith(f"@{name}") and last["reward_breakdown"]["factuality"] > 0
    assert last["reward_breakdown"]["tools"] == 1


def test_scripted_host_says_it_cannot_check_when_the_lookup_is_denied():
    env = LiveRoomEnv(TINY)
    info, name, product = waiting_price_question(
        env, options={"tool_faults": [{"kind": "denied", "tool": "get_price_stock"}]})
    seen = _scripted_until_reply(env, info)
    assert [i["turn"]["kind"] for _, i in seen] == ["tool", "reply"]  # a denial is not retried
    reply, last = seen[-1]
    assert reply.startswith(f"@{name}") and "can't check" in reply
    assert last["reward_reasons"]["factuality"] == ["no checkable claim"]
    assert last["reward_breakdown"]["compliance"] >= 0 and not last["turn"]["gated"]


def test_scripted_host_asks_again_after_it_could_not_check(tiny_dir):
    env = LiveRoomEnv(TINY)
    info, name, product = waiting_price_question(
        env, options={"tool_faults": [{"kind": "denied", "tool": "get_price_stock"}]})
    seen = _scripted_until_reply(env, info)
    seen += _scripted_until_reply(env, seen[-1][1])
    replies = [a for a, i in seen if i["turn"]["kind"] == "reply"]
    assert "can't check" in replies[0]
    assert replies[1].startswith(f"@{name}") and seen[-1][1]["reward_breakdown"]["factuality"] > 0


class RememberingHost(ScriptedAvatar):
    """The scripted host, but when a lookup fails it answers from what the same call
    returned earlier, as if it had looked it up: it states facts it could not check."""

    def __init__(self):
        super().__init__()
        self.memory: dict[str, str] = {}

    def __call__(self, observation, info):
        messages = [dict(m) for m in info["messages"]]
        calls = {c["id"]: c["function"]["name"] + c["function"]["arguments"]
                 for m in messages if m.get("tool_calls") for c in m["tool_calls"]}
        for m in messages:
            if m["role"] == "tool" and m["tool_call_id"] in calls:
                key = calls[m["tool_call_id"]]
                try:
                    json.loads(m["content"])
                    ok = not m["content"].startswith('{"error"')
                except ValueError:
                    ok = False
                if ok:
                    self.memory[key] = m["content"]
                elif key in self.memory:
                    m["content"] = self.memory[key]  # the fact from before, unchecked now
        return super().__call__(observation, {**info, "messages": messages})


def test_over_an_episode_honesty_recovers_and_stating_unchecked_facts_loses_accuracy(tiny_dir):
    # At ~50% tool faults over seeds 0-23 (measured 2026-12-03): honest 336.4 against 248.9
    # for the host that answers from an earlier lookup when the new one fails (tools 116.5
    # against -10.5, factuality 112.0 against 24.0). Six or twelve two-minute shows are too
    # few: their returns differ by less than one show's spread (6: 90.4 against 92.7). (It
    # was an expected failure of issue 27 while the reward counted a fact looked up earlier
    # in view as checked.)
    env = LiveRoomEnv(faulty_spec(tiny_dir, {"timeout": 0.25, "malformed": 0.1, "truncated": 0.05, "denied": 0.1}))
    honest = [play(env, ScriptedAvatar(), s)[2]["episode"] for s in range(24)]
    remembering = [play(env, RememberingHost(), s)[2]["episode"] for s in range(24)]
    naive = [play(env, NaiveAvatar(), s)[2]["episode"] for s in range(24)]
    total = lambda eps, key="return": sum(e[key] if key == "return" else e["returns"][key] for e in eps)  # noqa: E731
    assert total(honest) > total(remembering) > total(naive)
    assert total(honest, "tools") > total(remembering, "tools")
    assert total(honest, "factuality") > total(remembering, "factuality")


def test_a_fault_pinned_on_a_call_number_hits_that_call_and_bad_calls_do_not_count():
    env = LiveRoomEnv(TINY)
    env.reset(seed=0, options={"tool_faults": [{"kind": "malformed", "call": 2}]})
    env.step(call("get_price_stock", product_id="no-such-product"))  # the policy's error: not a service call
    turn = json.dumps({"content": None, "tool_calls": [
        {"id": f"c{i}", "type": "function", "function": {"name": "get_price_stock", "arguments": json.dumps({"product_id": p})}}
        for i, p in enumerate(("sk-serum-t", "ap-tee-t", "sn-bar-t"))]})
    _, _, _, _, info = env.step(turn)
    assert info["turn"]["tool_faults"] == [{"call_id": "c1", "tool": "get_price_stock", "kind": "malformed"}]
    assert json.loads(info["messages"][-1]["content"])["product_id"] == "sn-bar-t"
