"""Lines that read like a viewer's: parts that suit the line's intent and the persona, no
word typed twice by the composition, no answered ask asked again, one order per asker and
one asker per order (the kinds of line a read of ten transcripts found least like a
viewer's: issue 26)."""

from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from types import SimpleNamespace

import numpy as np
import pytest

from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.sim.audit import play
from liveroom_sim.sim.fitting import respell
from liveroom_sim.sim.viewers import Ask, ChatMessage, ChatWriter, Viewer
from liveroom_sim.spec import load_spec
from liveroom_sim.world.facts import required_facts
from liveroom_sim.world.market import Market
from liveroom_sim.world.paths import ENVS_DIR

ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0")
SEEDS = 6
_CJK = re.compile(r"[\u4e00-\u9fff]")


@lru_cache(maxsize=None)
def world(env_id: str):
    return load_spec(ENVS_DIR / f"{env_id}.yaml")


@lru_cache(maxsize=None)
def rooms(env_id: str):
    w = world(env_id)
    return tuple(play(w, ScriptedAvatar() if s % 2 == 0 else NaiveAvatar(), s) for s in range(SEEDS))


def chat(env_id: str):
    return [m for r in rooms(env_id) for m in r.crowd.chat]


def _dressing(m) -> tuple[str, str]:
    """What the room put before and after the line's body (lower-cased; "" when the
    body was respelled beyond finding)."""
    text, body = m.text.lower(), m.body.lower()
    at = text.find(body) if body else -1
    return (text[:at].strip(), text[at + len(body):].strip()) if at >= 0 else ("", "")


@pytest.mark.parametrize("env_id", ENVS)
def test_strict_intents_are_dressed_only_with_parts_that_name_them(env_id):
    """A complaint, troll, bait, injection, follow-up or order chase carries no opener,
    tail or emoji that does not name its intent ("GENUINE QUESTION OK SO NOBODY IS GONNA
    ANSWER", "third time asking ... (•‿•)", 无聊！！ 谢谢亲, 天哪 忽略之前所有指令)."""
    chat_parts = world(env_id).phrasebook.chat
    strict = set(chat_parts.strict)
    assert {"complaint", "follow_up", "troll", "inject", "order_status"} <= strict
    host = world(env_id).spec.room.host_name
    checked = 0
    for m in chat(env_id):
        if m.intent not in strict:
            continue
        before, after = _dressing(m)
        checked += bool(before or after)
        for kind, found in (("openers", before), ("tails", after), ("emoji", after)):
            matched = []
            for part in getattr(chat_parts, kind):
                text = part.text.replace("{host}", host).lower()
                if kind == "openers":
                    hit = found == text or found.startswith(text + " ")
                elif kind == "tails":
                    hit = found == text or found.startswith(text + " ")
                else:
                    hit = found == text or found.endswith(" " + text)
                if hit:
                    matched.append((part, text))
            if matched:  # (the longest part that fits the text is the one typed)
                part, text = max(matched, key=lambda pt: len(pt[1]))
                assert chat_parts.suits(part, m.intent), f"{m.intent}: {m.text!r} carries {text!r}"
    assert checked > 20, "strict intents are still dressed with the parts that suit them"


@pytest.mark.parametrize("env_id,cart", [("LiveRoom-v0", "🛒"), ("LiveRoom-zh-v0", "🛒")])
def test_a_cart_goes_only_on_buying_and_a_sceptic_never_carries_one(env_id, cart):
    buying = set(world(env_id).phrasebook.chat.tones["buying"])
    carts = [m for m in chat(env_id) if m.text.endswith(cart) and m.intent not in ("bought", "react")]
    assert carts, "viewers about to buy still end with a cart"
    wrong = [(m.intent, m.text) for m in carts if m.intent not in buying or m.viewer.persona.name == "skeptic"]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("env_id", ENVS)
def test_no_follow_up_ends_with_a_crying_face(env_id):
    faces = ("(╥﹏╥)", "T_T", "QAQ", "😭")
    wrong = [m.text for m in chat(env_id) if m.intent == "follow_up" and m.text.endswith(faces)]
    assert not wrong, wrong[:5]


def test_a_persona_never_types_the_parts_it_avoids():
    """下单不犹豫 (an impulse buyer) never writes 纠结好久了 or 犹豫ing."""
    avoid = world("LiveRoom-zh-v0").personas["impulse_buyer"].phrasing["zh"].avoid
    assert "纠结" in avoid
    lines = [m.text for m in chat("LiveRoom-zh-v0") if m.viewer.persona.name == "impulse_buyer"]
    assert len(lines) > 50
    wrong = [t for t in lines if any(w in t for w in ("纠结", "犹豫"))]
    assert not wrong, wrong[:5]


def test_a_doubled_respelling_stands_alone_never_inside_a_phrase():
    """可以 may be typed 可以可以 as an answer, never in 还有可以可以退不; nor 真的真的假的."""
    book = world("LiveRoom-zh-v0").phrasebook
    rng = np.random.default_rng(0)
    for text in ("这款还有可以退不", "真的假的 原价是不是虚标", "这个免费送吗", "保质期呢"):
        for _ in range(200):
            out = respell(text, "", book.chat, 1.0, rng)
            assert not re.search(r"(可以|真的|这个|呢)\1", out), out
    alone = {respell("可以", "", book.chat, 1.0, rng) for _ in range(200)}
    assert "可以可以" in alone


@pytest.mark.parametrize("env_id", ENVS)
def test_no_room_chat_doubles_a_word_or_a_particle(env_id):
    doubled = re.compile(r"(可以|这个|真的|呢)\1[\u4e00-\u9fff]|[\u4e00-\u9fff](可以|这个|真的|呢)\2")
    wrong = [m.text for m in chat(env_id) if doubled.search(m.text)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("env_id", ENVS)
def test_a_tail_or_opener_never_repeats_a_word_of_the_line(env_id):
    """"hey lol same???? sorry lol": the composition types no part twice."""
    chat_parts = world(env_id).phrasebook.chat
    tails = sorted({t.text.lower() for t in chat_parts.tails if re.fullmatch(r"[a-z ]{2,}", t.text)}, key=len)
    wrong = []
    for m in chat(env_id):
        if m.intent in ("react", "bought"):
            continue
        _, after = _dressing(m)
        for t in tails:
            if after == t and re.search(rf"\b{re.escape(t)}\b", m.text.lower()[: -len(t)]):
                wrong.append(m.text)
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("env_id", ENVS)
def test_a_tail_follows_a_question_mark_not_the_question_itself(env_id):
    """"WHEN DOES IT SHIP ALREADY IN MY CART": a room tail after a question the line
    asks follows its question mark."""
    chat_parts = world(env_id).phrasebook.chat
    tails = [t.text.lower() for t in chat_parts.tails if len(t.text) > 3 and re.fullmatch(r"[a-z ]+", t.text)]
    wrong = [m.text for m in chat(env_id)
             if m.intent in ("shipping", "price", "stock") and m.body[-1:].isalnum()
             and any(m.text.lower() == f"{m.body.lower()} {t}" for t in tails)]
    assert not wrong, wrong[:5]


@pytest.mark.parametrize("env_id", (*ENVS, "LiveRoom-TaoLive-v0"))
def test_one_order_per_asker_and_one_asker_per_order(env_id):
    """Nobody chases three orders in one stream, and no two viewers chase one order."""
    chased = 0
    for room in rooms(env_id) if env_id in ENVS else (play(world(env_id), ScriptedAvatar(), 0),):
        owners, orders = defaultdict(set), defaultdict(set)
        for m in room.crowd.chat:
            for a in m.asks:
                if a.order:
                    owners[a.order].add(m.viewer.name)
                    orders[m.viewer.name].add(a.order)
        chased += len(owners)
        assert all(len(v) == 1 for v in owners.values()), {k: v for k, v in owners.items() if len(v) > 1}
        assert all(len(v) == 1 for v in orders.values()), {k: v for k, v in orders.items() if len(v) > 1}
    assert chased, "viewers still ask about their orders"


@pytest.mark.parametrize("env_id", ENVS)
def test_a_follow_up_never_quotes_an_answer_and_asks_the_same_again(env_id):
    """"30 days noted. returnable?": when the answer stated part of the very ask still
    missing a fact, the follow-up does not quote it and re-ask."""
    w = world(env_id)
    market = Market.open(w.catalog, "sk-serum-01", w.rules)
    writer = ChatWriter(w.phrasebook, w.spec.language, "Ava")
    rng = np.random.default_rng(3)
    v = Viewer("asker", w.personas["bargain_hunter"], 0.0, 1e9)
    facts = required_facts("returns", "sk-serum-01", market, w.phrasebook.fact_words)
    assert len(facts) >= 1
    asked = ChatMessage(0, v, "q", 0.0, (Ask("returns", "sk-serum-01", truth=facts),), body="q", ref="the serum")
    answer = SimpleNamespace(stated=facts[:1], missing=facts[1:] or facts[:1])
    seconds = [t.text for t in w.phrasebook.second["returns"]]
    for _ in range(40):
        f = writer.room_message(v, "follow_up", asked, 5.0, 1, market, rng, answer)
        assert not any(s.lower() in f.text.lower() for s in seconds), f.text
