"""The incremental bookkeeping of the crowd agrees with the scans it replaced: waiting
messages in posting order (a merged request keeps its place), the messages due, the
count of questions; and reply_target's cheap mention test never misses a mention the
case-insensitive pattern finds."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium as gym
from hypothesis import given, settings
from hypothesis import strategies as st

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.rewards.analysis import addresses
from liveroom_sim.sim.reactions import first_addressed
from liveroom_sim.sim.viewers import Ask, ChatMessage, Viewer
from liveroom_sim.sim.waiting import Waiting


def _msg(mid: int, viewer: Viewer, deadline: float, intent: str = "price") -> ChatMessage:
    return ChatMessage(mid, viewer, f"m{mid}", 0.0, (Ask(intent),), deadline=deadline)


def test_waiting_keeps_posting_order_places_and_deadlines():
    persona = SimpleNamespace(name="p")
    a, b = Viewer("a", persona, 0.0, 1e9), Viewer("b", persona, 0.0, 1e9)
    w = Waiting()
    n1, n2, n3 = w.add(_msg(1, a, 5.0)), w.add(_msg(2, b, 3.0, "greet")), w.add(_msg(3, a, 9.0))
    merged = _msg(4, b, 4.0)
    w.replace(n2, merged)
    assert [m.mid for m in w.messages()] == [1, 4, 3] and w.facts == 3
    assert w.numbers("a") == [n1, n3] and w.number_of(merged) == n2
    assert w.due(4.5) == {n2}  # the replaced message's old deadline (3.0) is no longer its own
    w.set_deadline(n2, 20.0)
    assert w.due(9.0) == {n1, n3}
    w.drop(n1)
    assert [m.mid for m in w.messages()] == [4, 3] and w.facts == 2 and w.numbers("a") == [n3]


def _mixed(obs, info, step, scripted=ScriptedAvatar(), naive=NaiveAvatar()):
    return (naive if step % 3 == 0 else scripted)(obs, info)


def test_crowd_bookkeeping_matches_a_scan_every_step():
    """Answers and ignores (strikes, leaving) by turns, so every path is taken."""
    env = gym.make("LiveRoom-v0")
    obs, info = env.reset(seed=3)
    crowd = env.unwrapped.room.crowd
    for step in range(300):
        obs, _, terminated, truncated, info = env.step(_mixed(obs, info, step))
        assert crowd.waiting() == tuple(m for m in crowd.pending if m.viewer.present)
        assert crowd.questions_waiting() == sum(m.is_fact_question for m in crowd.pending)
        assert crowd.present == [v for v in crowd.viewers if v.present]
        for v in crowd.present:
            assert crowd.waiting_of(v) == [m for m in crowd.waiting() if m.viewer is v]
        if terminated or truncated:
            break
    assert crowd.stats.left_unanswered > 0 and crowd.stats.answered > 0


_CHARS = st.sampled_from([*"abcksiIKS_.-9@ 【】[]<>:", "İ", "ſ", "\u212a", "ı", "ß", "Σ", "ς", "企", "鹅", "Ａ", "\u200b"])
_NAMES = st.text(_CHARS.filter(lambda c: c not in " @【】[]<>:"), min_size=1, max_size=6)
_FORMATS = st.sampled_from(["@{name}", "[to {name}]", "<@{name}>", "@{name}:", "【{name}】", "{name}:"])


@settings(max_examples=300, deadline=None, database=None)
@given(st.lists(_NAMES, min_size=1, max_size=5), st.text(_CHARS, max_size=30), _FORMATS, st.data())
def test_first_addressed_is_the_first_viewer_the_pattern_finds(names, text, fmt, data):
    for name in names:
        if data.draw(st.booleans()):
            mention = data.draw(st.sampled_from([str.upper, str.lower, str.swapcase, str]))(fmt.format(name=name))
            text += " " + mention + data.draw(st.sampled_from(["", "2", ".", " hi"]))
    pending = [SimpleNamespace(viewer=SimpleNamespace(name=n)) for n in names]
    found = [m.viewer for m in pending if addresses(text, m.viewer.name, fmt)]
    assert first_addressed(text, pending, fmt) is (found[0] if found else None)
