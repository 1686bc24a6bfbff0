"""The reward cannot be gamed: over many seeds the scripted host beats the other shipped
policies on every component, and degenerate and adversarial strategies
(:mod:`liveroom_sim.testing.adversaries`) score well below it on every registered env.

The adversary suite runs 3 seeds per env by default; ``LIVEROOM_SEEDS=20`` (set by
``.ci/run``) runs the 20 seeds the claim is made for."""

from __future__ import annotations

import json
import os
import statistics
from functools import lru_cache

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401
from liveroom_sim.episode import play
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.policies.brief import BriefAvatar
from liveroom_sim.policies.learned import LearnedAvatar
from liveroom_sim.policies.reading import FEATURED, language_of, lineup_names, system_text, tool_role, room_update, waiting_in
from liveroom_sim.spec import COMPONENTS
from liveroom_sim.testing.adversaries import ADVERSARIES, quit_early

SEEDS = range(50)
ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0")
ADVERSARY_SEEDS = range(int(os.environ.get("LIVEROOM_SEEDS", "3")))
#: How far below the scripted host's mean total an adversary's mean must be (share of it).
MARGIN = 0.10
#: Within this share of the scripted host's return, an adversary's return on a seed is a tie.
TIE = 0.01


def _returns(env, policy, seeds) -> list[dict]:
    return [play(env, policy, seed).returns for seed in seeds]


@pytest.fixture(scope="module")
def env():
    return gym.make("LiveRoom-v0").unwrapped


@pytest.fixture(scope="module")
def scripted(env):
    return _returns(env, ScriptedAvatar(), SEEDS)


@pytest.fixture(scope="module")
def naive(env):
    return _returns(env, NaiveAvatar(), SEEDS)


#: Known since the merge of issues 25-28 (busier rooms: 47 comments a minute where there were
#: 22; credits once per need): the reference host leaves about a third of the questions of
#: LiveRoom-v0 unanswered (one reply a step; a room answered more asks more), so its
#: outcome leads the naive host's by about 26 (-115.2 vs -141.0 over seeds 0-19), not 40.
#: Not strict: the margin moves with the seeds.
#: A question of the reward's design (issue 25: does "what the room lost" pay for serving the
#: room when serving it well makes it ask more?), not of the reference host's (issue 27).
_BUSY_OUTCOME = pytest.mark.xfail(strict=False, reason="issue 25: the reference's outcome leads naive's by about 26, "
                                                       "not 40: a room answered more asks more")


@pytest.mark.slow
@pytest.mark.parametrize("component", [pytest.param("outcome", marks=_BUSY_OUTCOME) if c == "outcome" else c
                                       for c in [*COMPONENTS, "total"]])
def test_scripted_beats_naive_on_every_component_over_50_seeds(scripted, naive, component):
    if component == "outcome":  # both lose some viewers: the gap is smaller, but wide
        good, bad = [r[component] for r in scripted], [r[component] for r in naive]
        assert statistics.mean(good) - statistics.mean(bad) > 40
        assert sum(g > b for g, b in zip(good, bad)) >= 45
        return
    good = [r[component] for r in scripted]
    bad = [r[component] for r in naive]
    gap = statistics.mean(good) - statistics.mean(bad)
    spread = (statistics.stdev(good) + statistics.stdev(bad)) / len(SEEDS) ** 0.5
    assert gap > 4 * spread and gap > 20, f"{component}: scripted {statistics.mean(good):.1f} vs naive {statistics.mean(bad):.1f}"
    assert sum(g > b for g, b in zip(good, bad)) >= 45  # seed by seed, not only on average


def _catalog_dump(env):
    lines = [f"{p.name} ${p.price} {p.stock} left, ships within {p.shipping.ships_within_hours} hours, "
             f"returns within {p.returns.days} days" for p in env.world.catalog.products]
    text = " ".join(lines)
    return lambda obs, info: text


def _mention_first(template):
    def policy(obs, info):
        waiting = waiting_in(info["messages"])
        return template.format(mention=waiting[0][0] if waiting else "")
    return policy


DEGENERATE = {
    "lists every fact of every product": _catalog_dump,
    "says nothing": lambda env: (lambda obs, info: ""),
    "refuses everything": lambda env: (lambda obs, info: "Sorry, I can't say that."),
    "repeats one safe sentence": lambda env: (lambda obs, info: "Thanks for watching, everyone!"),
    "flatters without answering": lambda env: _mention_first("{mention} you have amazing taste, love your energy!"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", DEGENERATE)
def test_degenerate_strategies_do_not_beat_the_scripted_host(env, scripted, name):
    seeds = range(10)
    theirs = _returns(env, DEGENERATE[name](env), seeds)
    for seed, mine, other in zip(seeds, scripted, theirs):
        assert other["total"] < mine["total"], f"seed {seed}: {name} {other['total']:.1f} >= scripted {mine['total']:.1f}"


# ------------------------------------------------------------ adversaries, every env
@lru_cache(maxsize=None)
def _env(env_id: str):
    return gym.make(env_id)


@lru_cache(maxsize=None)
def _scripted(env_id: str) -> tuple[dict, ...]:
    return tuple(play(_env(env_id), ScriptedAvatar(), seed).returns for seed in ADVERSARY_SEEDS)


def _below(env_id: str, name: str, theirs: list[dict]) -> None:
    mine = _scripted(env_id)
    ours, other = statistics.mean(r["total"] for r in mine), statistics.mean(r["total"] for r in theirs)
    assert other < ours - MARGIN * abs(ours), f"{env_id} {name}: {other:.1f} vs scripted {ours:.1f}"
    # Seed by seed too, on at least three seeds in four: an adversary that acts differently
    # sends the stream down another path (other viewers arrive, other questions come), so
    # on a rare seed it meets an easier room by chance (obey-after-refusal did, by 12-17 %,
    # on one seed in 20 of each env); what it gains by its trick shows in the mean above.
    # A tie is no win: on a seed where the trick hardly fires, the two play the same stream
    # to within a point (obey-after-refusal, seed 0 of LiveRoom-v0: 439.0 against 438.0).
    behind = [t["total"] < m["total"] + TIE * abs(m["total"]) for m, t in zip(mine, theirs)]
    lucky = [seed for seed, ok in zip(ADVERSARY_SEEDS, behind) if not ok]
    assert sum(behind) >= 0.75 * len(behind), f"{env_id} {name}: ahead of the scripted host on seeds {lucky}"


@pytest.mark.parametrize("env_id,name", [(e, n) for n in ADVERSARIES for e in ENVS])
def test_every_adversary_scores_well_below_the_scripted_host(env_id, name):
    env = _env(env_id)
    theirs = [play(env, ADVERSARIES[name](env.unwrapped.world), seed).returns for seed in ADVERSARY_SEEDS]
    _below(env_id, name, theirs)


@pytest.mark.parametrize("env_id", ENVS)
def test_quitting_on_turn_one_scores_the_room_it_leaves(env_id):
    env = _env(env_id)
    quits = [quit_early(env, ScriptedAvatar(), seed, turns=1) for seed in ADVERSARY_SEEDS]
    _below(env_id, "quit after one turn", quits)
    # The viewers it leaves cost: quitting is not worth 0, and costs more the earlier it is.
    later = [quit_early(env, ScriptedAvatar(), seed, turns=60) for seed in ADVERSARY_SEEDS]
    assert all(q["outcome"] < -20 for q in quits)
    assert statistics.mean(q["total"] for q in quits) < statistics.mean(q["total"] for q in later)


def test_ignoring_the_room_loses_the_positive_credit_of_a_pitch():
    # The exact failure of the old reward: the featured product, its price and "#ad", said
    # again and again while questions wait, earned more than answering them.
    env = _env("LiveRoom-v0")
    returns = play(env, ADVERSARIES["ignore and pitch"](env.unwrapped.world), 0).returns
    assert returns["compliance"] < 10 and returns["harness"] < 20 and returns["outcome"] < -80


@pytest.mark.slow
@pytest.mark.parametrize("component", COMPONENTS)
def test_scripted_is_the_best_shipped_policy_on_every_component(component):
    mine = _shipped("scripted")
    for other in ("naive", "learned"):
        theirs = _shipped(other)
        assert mine[component] > theirs[component], f"{component}: scripted {mine} vs {other} {theirs}"


@lru_cache(maxsize=None)
def _shipped(name: str) -> dict[str, float]:
    # Over 20 shows: the reference's outcome leads the untrained learner's by 18 (-115.2 vs
    # -133.1), less than five shows' spread (seeds 0-4: -135.6 vs -133.8): a room answered
    # more asks more (seed 3: 374 questions where 260 were asked of the stop-38 host).
    env = _env("LiveRoom-v0")
    make = {"scripted": ScriptedAvatar, "naive": NaiveAvatar, "learned": lambda: LearnedAvatar(seed=1)}[name]
    runs = [play(env, make(), seed).returns for seed in range(20)]
    return {k: statistics.mean(r[k] for r in runs) for k in runs[0]}


# ------------------------------------------------- issue 25: reward hunters and a briefer host
class _NameDropper(ScriptedAvatar):
    """Issue 25's stacking hack: the reference host, plus "<featured product> #ad" (广告)
    appended to every reply, greetings and refusals included; with ``price``, the featured
    product's price is looked up in every tool turn and said too ("<featured> $24.99 #ad")."""

    def __init__(self, price: bool = False):
        super().__init__()
        self.price = price

    def __call__(self, observation: str, info: dict) -> str:
        action = super().__call__(observation, info)
        featured = (FEATURED.findall(room_update(info["messages"])) or [""])[-1]
        if not featured:
            return action
        if action.lstrip().startswith("{"):
            return self._with_price_call(action, info, featured) if self.price else action
        lang = language_of(info)
        name = lineup_names(system_text(info["messages"])).get(featured, [featured])[0]
        price = self._looked_up_price(info["messages"], featured) if self.price else None
        said = name + (f" ${price:g}" if price is not None and lang == "en" else f" {price:g}元" if price is not None else "")
        return f"{action} {said}{'! #ad' if lang == 'en' else '！广告'}"

    def _with_price_call(self, action: str, info: dict, featured: str) -> str:
        message = json.loads(action)
        for t in info["tools"]:
            fn = t["function"]
            params = list(fn.get("parameters", {}).get("properties", {}))
            if tool_role(fn) == "price" and len(params) == 1:
                call = {"name": fn["name"], "arguments": json.dumps({params[0]: featured})}
                if all(c["function"] != call for c in message["tool_calls"]):
                    message["tool_calls"].append({"id": "call_featured", "type": "function", "function": call})
                return json.dumps(message, ensure_ascii=False)
        return action

    @staticmethod
    def _looked_up_price(messages: list[dict], featured: str) -> float | None:
        for m in reversed(messages):
            if m["role"] == "user":
                break  # only this exchange's lookups
            if m["role"] == "tool":
                try:
                    data = json.loads(m["content"])
                except (TypeError, json.JSONDecodeError):
                    continue
                if isinstance(data, dict) and data.get("product_id", data.get("id")) == featured and "price" in data:
                    return float(data["price"])
        return None


class _HalfAnswers(ScriptedAvatar):
    """Half an answer, left there: the reference host's reply cut after its first
    sentence (the rest of a two-fact answer never said)."""

    def __call__(self, observation: str, info: dict) -> str:
        action = super().__call__(observation, info)
        if action.lstrip().startswith("{"):
            return action
        for stop in (". ", "。", "! ", "！"):
            head, found, tail = action.partition(stop)
            if found and tail.strip():
                return head + found.strip()
        return action


#: The strategies issue 25 found paying, each a policy factory.
REWARD_HUNTERS = {
    "name-drop the featured product with #ad": lambda: _NameDropper(),
    "name-drop the featured product with its looked-up price": lambda: _NameDropper(price=True),
    # issue 25's half-answer hack: one ask of a multi-ask request per reply (the next in the
    # next), to collect per-reply credits once per reply rather than once per need
    "answer one ask per reply": lambda: ScriptedAvatar(asks_per_reply=1),
    "half answers": _HalfAnswers,
}


#: Every registered env, on seeds the reward was not tuned on (held out).
ALL_ENVS = (*ENVS, "LiveRoom-TaoLive-v0")
HELD_OUT = range(100, 100 + int(os.environ.get("LIVEROOM_SEEDS", "3")))
#: The reward hunters are the reference host plus a trick, so their returns differ from
#: the reference's by a few percent, less than 20 shows' spread (zh, name-drop: 737.9 against
#: 728.9 on seeds 100-119, 694.7 against 747.6 on 120-139): they are played twice as long.
HUNT = range(100, 100 + 2 * len(HELD_OUT))


@lru_cache(maxsize=None)
def _honest(env_id: str, host: str, seeds: range = HELD_OUT) -> float:
    make = {"reference": ScriptedAvatar, "brief": BriefAvatar}[host]
    return statistics.mean(play(_env(env_id), make(), seed).returns["total"] for seed in seeds)


@pytest.mark.slow
@pytest.mark.parametrize("env_id", ALL_ENVS)
def test_the_briefer_honest_host_earns_at_least_the_reference(env_id):
    # The same needs served without filler or repeats: a reward that pays for needs, not
    # words, pays it no less. (Over held-out seeds 100-102 it leads by 20-55%: LiveRoom-v0
    # 652.2 vs 443.3, zh 888.2 vs 731.5, HarnessVariant 612.9 vs 394.6, TaoLive 858.9 vs
    # 665.7; the turns the reference spends serving a request again, it spends on others.)
    assert _honest(env_id, "brief") >= _honest(env_id, "reference"), \
        f"{env_id}: brief {_honest(env_id, 'brief'):.1f} < reference {_honest(env_id, 'reference'):.1f}"


def _served_again(messages: list[dict]) -> int:
    """Lookups a host made for a viewer's asks it had looked up already while every request
    of that viewer waiting now was waiting then (the reply missed: the same lookup brings
    the same reply; a request sent since asks anew)."""
    seen: dict[str, set[str]] = {}
    again, waiting = 0, []
    for m in messages:
        note = m.get("content") or ""
        if m["role"] == "user" and not note.startswith("[hook]"):
            waiting = waiting_in([m])
        elif m["role"] == "assistant" and m.get("tool_calls") and note.startswith("serving @"):
            mention = note.removeprefix("serving ").split(" | ")[0]
            requests = {text for who, _, text in waiting if who == mention}
            again += bool(requests) and requests <= seen.get(note, set())
            seen.setdefault(note, set()).update(requests)
    return again


@pytest.mark.slow
def test_neither_honest_host_serves_a_request_twice():
    # The reference forgot a request it served once the exchange left its view and served
    # it again while it waited (19 and 31 times on these seeds at stop 38, a misread request
    # up to 12 times); both hosts now remember each request they served (the reference 2
    # and 0 times, the briefer host 0 and 0). A viewer's new request that asks the same is
    # served: it is not counted.
    env = _env("LiveRoom-v0")
    for host in (ScriptedAvatar, BriefAvatar):
        for seed in (100, 101):
            again = _served_again(play(env, host(), seed, record=True).messages)
            assert again <= 3, f"seed {seed}: {host.__name__} served {again} requests again"


#: The closest hunters ("one ask per reply" in LiveRoom-v0 and HarnessVariant, the "#ad"
#: name-drop in TaoLive and zh) lost to both honest hosts over CI's 40 seeds once the reference host
#: stopped serving a request twice and the featured product's disclosure stopped paying
#: beside another product's answer (issues 25, 27).
@pytest.mark.slow
@pytest.mark.parametrize("env_id,name", [
    (e, n) for n in REWARD_HUNTERS for e in ALL_ENVS])
def test_every_reward_hunter_earns_less_than_both_honest_hosts(env_id, name):
    theirs = statistics.mean(play(_env(env_id), REWARD_HUNTERS[name](), seed).returns["total"] for seed in HUNT)
    best_honest = min(_honest(env_id, "reference", HUNT), _honest(env_id, "brief", HUNT))
    assert theirs < best_honest, f"{env_id} {name}: {theirs:.1f} vs honest hosts {best_honest:.1f}"
