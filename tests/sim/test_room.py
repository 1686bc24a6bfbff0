"""Behaviour of the room on the tiny spec: tools over the market as of now, harness
changes, answering, purchases, ignored viewers, hooks and stock."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from room_helpers import waiting_price_question

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny" / "tiny-v0.yaml"
FILLER = "Welcome to Tiny Test Live, grab a seat and say hi! " * 4  # ~4 s of simulated talk


@pytest.fixture
def env():
    return LiveRoomEnv(TINY)


def call(name: str, **arguments) -> str:
    return json.dumps({"content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})


def tool_result(info: dict) -> dict:
    last = info["messages"][-1]
    assert last["role"] == "tool"
    return json.loads(last["content"])


def advance_past(env, t: float, info: dict) -> dict:
    while info["metrics"]["clock_s"] <= t:
        *_, info = env.step(FILLER)
    return info


def play(env, policy, seed: int, on_step=None):
    obs, info = env.reset(seed=seed)
    while True:
        before = env.room.market.stock.copy(), {p: env.room.market.price_after_coupons(p) for p in env.room.market.stock}
        obs, reward, terminated, truncated, info = env.step(policy(obs, info))
        if on_step:
            on_step(before, info)
        if terminated or truncated:
            return info


# --------------------------------------------------------------------- tools
def test_tool_returns_the_price_as_of_now(env):
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    first = tool_result(info)
    assert (first["price"], first["list_price"], first["stock"], first["sold_out"]) == (20.0, 25.0, 6, False)
    assert first["price_after_best_coupon"] == 20.0

    info = advance_past(env, 20.0, info)  # price_change at 10 s, coupon TINY10 at 20 s
    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    now = tool_result(info)
    assert now["price"] == 17.5 and now["list_price"] == 25.0
    assert now["price_after_best_coupon"] == 15.75  # 10 % off the new price
    _, _, _, _, info = env.step(call("get_promotions"))
    assert [c["code"] for c in tool_result(info)["coupons"]] == ["TINY10"]


def test_tool_turn_is_silent_and_costs_tool_latency(env):
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(call("get_policy", product_id="ap-tee-t"))
    assert tool_result(info)["returns"] == {"days": 30, "condition": "unworn, tags attached"}
    assert info["turn"]["kind"] == "tool" and info["metrics"]["replies"] == 0
    assert info["metrics"]["latency_s"] == pytest.approx(0.8)
    assert info["metrics"]["clock_s"] == pytest.approx(0.8)


def test_harness_change_renames_the_price_tool(env):
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(call("check_price_and_stock", product_id="sk-serum-t"))
    assert "unknown tool 'check_price_and_stock'" in tool_result(info)["error"]

    info = advance_past(env, 50.0, info)
    names = [t["function"]["name"] for t in info["tools"]]
    assert "check_price_and_stock" in names and "get_price_stock" not in names

    _, _, _, _, info = env.step(call("get_price_stock", product_id="sk-serum-t"))
    error = tool_result(info)["error"]
    assert "unknown tool 'get_price_stock'" in error and "check_price_and_stock" in error
    assert info["reward_breakdown"]["harness"] < 0
    assert info["metrics"]["tool_errors"] == 2

    _, _, _, _, info = env.step(call("check_price_and_stock", product_id="sk-serum-t"))
    assert tool_result(info)["price"] == 17.5
    assert info["reward_breakdown"]["harness"] >= 0
    assert info["metrics"]["tool_errors"] == 2


# --------------------------------------------------------------------- answering
def test_a_correct_addressed_answer_marks_the_question_answered(env):
    info, question = waiting_price_question(env)
    name, product = question.viewer.name, env.room.market.catalog.by_id[question.product]
    def waiting_lines(update: str) -> list[str]:
        return update.split("waiting for an answer:")[1].splitlines() if "waiting for an answer:" in update else []

    def asked(update: str) -> bool:
        return any(line.startswith(f"- @{name} (") and line.endswith(question.text) for line in waiting_lines(update))

    assert asked(info["messages"][-1]["content"])
    answered_before = info["metrics"]["questions_answered"]

    price_tool = next(t["function"]["name"] for t in info["tools"] if "price" in t["function"]["name"])
    _, _, _, _, info = env.step(call(price_tool, product_id=product.id))
    price = tool_result(info)["price"]
    _, _, _, _, info = env.step(f"@{name} {product.name} is ${price:.2f} right now.")

    assert info["turn"]["delivered"] is True and info["turn"]["answered"] == name
    assert info["metrics"]["questions_answered"] == answered_before + 1
    assert info["reward_breakdown"]["factuality"] > 0
    assert question not in env.room.crowd.pending
    assert not asked(info["messages"][-1]["content"])


def test_a_wrong_price_does_not_answer_the_question(env):
    info, question = waiting_price_question(env)
    name, product = question.viewer.name, env.room.market.catalog.by_id[question.product]
    answered_before = info["metrics"]["questions_answered"]
    _, _, _, _, info = env.step(f"@{name} {product.name} is $999.00 right now.")
    assert info["metrics"]["questions_answered"] == answered_before
    assert info["reward_breakdown"]["factuality"] < 0
    assert question in env.room.crowd.pending


def test_purchases_take_stock_and_add_their_price_to_gmv(env):
    totals = {"purchases": 0, "gmv": 0.0}

    def check(before, info):
        stock_before, prices_before = before
        stock = env.room.market.stock
        sold = {p: stock_before[p] - stock[p] for p in stock}
        assert all(n >= 0 for n in sold.values()) and all(s >= 0 for s in stock.values())
        totals["purchases"] += sum(sold.values())
        totals["gmv"] += sum(n * prices_before[p] for p, n in sold.items())
        assert info["metrics"]["purchases"] == totals["purchases"]
        assert info["metrics"]["gmv"] == pytest.approx(totals["gmv"], abs=0.011)

    bought = 0
    for seed in range(6):
        totals.update(purchases=0, gmv=0.0)
        info = play(env, ScriptedAvatar(), seed, check)
        bought += info["metrics"]["purchases"]
        assert info["metrics"]["buyers"] <= info["metrics"]["purchases"]
    assert bought > 0


def _tee_starts_with_two_units(env, seed: int) -> None:
    # The world these tests reason about: the tiny spec has no ``world:`` section, so every
    # seed gets its files' world (docs/worlds.md), with 2 tees in stock.
    env.reset(seed=seed)
    assert env.room.market.stock["ap-tee-t"] == 2


def test_sold_out_product_cannot_be_bought(env):
    sold_out_seen = False
    for seed in range(8):
        _tee_starts_with_two_units(env, seed)
        tee = []
        play(env, ScriptedAvatar(), seed, lambda before, info: tee.append(env.room.market.stock["ap-tee-t"]))
        assert min(tee) >= 0
        if 0 in tee:
            sold_out_seen = True
            assert all(s == 0 for s in tee[tee.index(0):])  # no restock in the tiny campaign
            room = env.room
            before = room.metrics()
            assert room.crowd.buy(room.crowd.viewers[0], "ap-tee-t", room.market) is False
            assert room.metrics()["purchases"] == before["purchases"] and room.metrics()["gmv"] == before["gmv"]
            assert room.market.stock["ap-tee-t"] == 0
            break
    assert sold_out_seen, "the 2-unit tee never sold out in 8 seeds"


def test_tool_reports_sold_out(env):
    for seed in range(8):
        _tee_starts_with_two_units(env, seed)
        obs, info = env.reset(seed=seed)
        policy = ScriptedAvatar()
        while env.room.market.stock["ap-tee-t"] > 0 and not env.room.truncated and not env.room.terminated:
            obs, _, _, _, info = env.step(policy(obs, info))
        if env.room.market.stock["ap-tee-t"] == 0:
            name = next(t["function"]["name"] for t in info["tools"] if "price" in t["function"]["name"])
            _, _, _, _, info = env.step(call(name, product_id="ap-tee-t"))
            assert tool_result(info)["stock"] == 0 and tool_result(info)["sold_out"] is True
            return
    pytest.fail("the 2-unit tee never sold out in 8 seeds")


# --------------------------------------------------------------------- ignoring
def test_ignored_questions_are_counted_and_viewers_leave(env):
    naive = play(env, NaiveAvatar(), seed=0)["metrics"]
    left = [v for v in env.room.crowd.viewers if not v.present]
    assert naive["questions_ignored"] > 0 and naive["questions_answered"] == 0
    # eager shoppers never drift out on their own: every one who left was ignored twice
    eager_left = [v for v in left if v.persona.name == "eager_shopper"]
    assert eager_left and all(v.strikes >= 2 for v in eager_left)
    assert naive["viewers_present"] < naive["viewers_total"]
    complaints = [m for m in env.room.crowd.chat if m.intent == "complaint"]
    assert complaints, "an ignored viewer complains before leaving"

    scripted = play(env, ScriptedAvatar(), seed=0)["metrics"]
    assert scripted["questions_ignored"] < naive["questions_ignored"]


# --------------------------------------------------------------------- hooks
def test_banned_phrase_reply_is_blocked_and_retried(env):
    info, question = waiting_price_question(env)
    name, product = question.viewer.name, env.room.market.catalog.by_id[question.product]
    before = info["metrics"]
    price = env.room.market.price(product.id)
    bad = f"@{name} {product.name} is ${price:.2f}, this is the best in the world"
    _, reward, _, _, info = env.step(bad)

    assert info["turn"]["delivered"] is False
    assert "banned_phrases:block_retry" in info["turn"]["hooks"]
    assert info["messages"][-2] == {"role": "assistant", "content": bad}
    assert info["messages"][-1]["role"] == "user"
    assert info["messages"][-1]["content"].startswith("[hook]") and "best in the world" in info["messages"][-1]["content"]
    # a reply the room never heard earns nothing, but the phrase it tried still costs; the hook costs harness
    assert info["reward_breakdown"]["compliance"] < 0 and info["reward_breakdown"]["factuality"] == 0 and reward < 0
    m = info["metrics"]
    assert m["replies_blocked"] == before["replies_blocked"] + 1 and m["replies"] == before["replies"]
    assert m["questions_answered"] == before["questions_answered"]  # viewers never heard it

    _, _, _, _, info = env.step(f"@{name} {product.name} is ${price:.2f} right now.")
    assert info["turn"]["delivered"] is True
    assert info["metrics"]["questions_answered"] == before["questions_answered"] + 1
    assert not info["messages"][-1]["content"].startswith("[hook]")


def test_only_one_retry_after_a_blocked_reply(env):
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step("this is the best in the world")
    assert info["messages"][-1]["content"].startswith("[hook]")
    _, _, _, _, info = env.step("still the best in the world")
    assert info["turn"]["delivered"] is False
    assert info["messages"][-1]["role"] == "user" and not info["messages"][-1]["content"].startswith("[hook]")


def test_too_long_reply_is_blocked(env):
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step("so good " * 60)
    assert info["turn"]["delivered"] is False and "max_length:block_retry" in info["turn"]["hooks"]
    assert "280 characters" in info["messages"][-1]["content"]


def test_custom_persona_viewers_take_part(env):
    names = set()
    for seed in range(3):
        env.reset(seed=seed)
        names |= {v.name.rstrip("0123456789") for v in env.room.crowd.viewers}
    assert names & {"eager_eve", "quick_quinn"}


def test_a_reply_in_markup_is_blocked_by_the_format_hook_and_retried():
    env = LiveRoomEnv(TINY)
    env.reset(seed=0)
    _, _, _, _, info = env.step('```json\n{"answer": "it is cheap"}\n```')
    assert not info["turn"]["delivered"] and "format:block_retry" in info["turn"]["hooks"]
    assert info["messages"][-1]["content"].startswith("[hook]") and "plain speech" in info["messages"][-1]["content"]
    assert info["reward_breakdown"]["harness"] == -1.0
