"""Baseline avatars: callables ``policy(observation, info) -> action``.

Both read only what an LLM would get (``info["messages"]`` and ``info["tools"]``), so
they work under any harness: tool names, the mention format, length limits, the rules
in force and the directives are all read from what the harness presents now.
"""

from __future__ import annotations

import json
import re

import numpy as np

from liveroom_sim.policies.host_lines import Voice
from liveroom_sim.policies.faults import (_cannot_check, _failed_asks, _lookup_results, _retry_faulted, _tool_turn_at,
                                         all_disclosures, note_fields)
from liveroom_sim.policies.naive import NaiveAvatar
from liveroom_sim.policies.skill_loading import _loading_note, listed_skills, _with_skills
from liveroom_sim.policies.wording import _compose, _compose_many, _fit, _greeted
from liveroom_sim.policies.reading import (
    at_tool_turn_limit,
    CLOCK,
    stream_second,
    FEATURED,
    _IDLE_TOPICS,
    _TOOLS_FOR,
    WAITING,
    language_of,
    lineup_names,
    params_of,
    system_text,
    tool_role,
    asks_in,
    terms,
    _featured_at,
    _stage,
    _product_in,
    room_update,
    waiting_in,
    phrasebook,
)


class ScriptedAvatar:
    """A host who plays by the rules of the harness it is given now.

    It answers each ask of a waiting request once, the request that has waited longest
    first (every ask of a two-ask or merged "A / B" request, each about the product it
    names, or for "this one" / 这款 the product on stage when it was written): looks up
    what the question needs with the tools whose descriptions say they return it (for
    after-sales, the order tool for a refund or an order, the policy tool for an item
    that came damaged), in one tool turn, then replies with the looked-up facts,
    addressed to the asker in the harness's mention format, announcing the active coupon
    or flash sale when the question is about price, stock or deals, saying the slogan
    and the disclosures in force, within the length limit. Baits and prompt injections
    get a polite refusal, in their turn by how long they waited (right away when the
    product's disclosures are known from an earlier lookup), each bait once, also from a
    viewer answered before; a viewer just refused waits while others ask, and a second
    refusal in a row is worded differently. Only when nobody waits does
    it present the featured product: a fact of it not said (to anyone) in the last
    90 s of stream, or nothing when every one was.

    Args:
        temperature: 0 (the default) makes it deterministic: the reference host. Above 0
            its samples differ as a model's would: the wording (variants of each line),
            which waiting request it serves first (the longest waiting most likely), and
            whether it retries a failed lookup before answering; 1 is a lively host.
        seed: Seeds its own generator (the samples of a GRPO group use different seeds).
        asks_per_reply: At most this many asks of a request answered in one reply (the
            rest in the next ones); ``None`` (the default): as many as fit the harness's
            length limit.
    """

    #: The decisions a host makes, and their options; the scripted host takes the first.
    DECISIONS = {
        "respond": ("serve", "generic"),  # answer properly, or say something generic
        "mention": ("yes", "no"),         # address the asker
        "promo": ("yes", "no"),           # announce the active coupon / flash sale
        "disclose": ("yes", "no"),        # say the disclosures in force
        "featured": ("yes", "no"),        # present the featured product
        "hype": ("no", "yes"),            # add an unsubstantiated superlative
    }

    def __init__(self, temperature: float = 0.0, seed: int = 0, asks_per_reply: int | None = None):
        if not temperature >= 0:
            raise ValueError(f"temperature must be at least 0, got {temperature!r}")
        if asks_per_reply is not None and asks_per_reply < 1:
            raise ValueError(f"asks_per_reply must be at least 1 (or None), got {asks_per_reply!r}")
        self.temperature = float(temperature)
        self.asks_per_reply = asks_per_reply
        self.rng = np.random.default_rng(seed)
        self._pitched: dict[tuple[str, str], int] = {}  # (intent, subject) looked up -> stream second
        self._last_clock = 0
        self._products: dict[str, dict] = {}  # product id -> its looked-up details this stream
        # (mention, text, second posted) of each request served -> (intent, subject) of its asks served
        self._requests: dict[tuple[str, str, int], set[tuple[str, str]]] = {}
        self._read_lookups: set[tuple[int, str]] = set()  # (stream second, note) of the lookups read for it
        self._stage: dict[int, str] = {}  # stream second -> product on stage, as the updates showed it
        self._handled: set[tuple[str, str, int]] = set()  # (mention, text, second posted) refused or greeted
        self._recent: tuple[str, ...] = ()  # the last replies (a line is not said twice alike)
        self._said: list[str] = []  # the last replies this host gave this stream (the view may have lost them)

    def voice(self, language: str) -> Voice:
        """The host's wording in ``language``, at its temperature."""
        return Voice(language, self.temperature, self.rng, self._recent)

    def choose(self, decision: str, situation: str, options: tuple[str, ...]) -> str:
        """The scripted host's choice: always the first (rule-following) option.
        :class:`liveroom_sim.policies.learned.LearnedAvatar` samples here instead."""
        return options[0]

    def __call__(self, observation: str, info: dict) -> str:
        """The next action; under a harness with skills on demand, the skills the action
        needs are loaded first (in the same tool turn as its lookups, or in a turn of
        their own before a reply that needs none)."""
        in_view = tuple(m["content"] for m in info["messages"]
                        if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls"))[-3:]
        if stream_second(room_update(info["messages"])) < self._last_clock:
            self._said = []  # a new stream
        self._recent = tuple(dict.fromkeys((*in_view, *self._said)))[-3:]
        action = self._next(observation, info)
        if not action.lstrip().startswith("{"):
            self._said = [*self._said, action][-3:]
        return action

    def _next(self, observation: str, info: dict) -> str:
        skills = listed_skills(info)
        if not skills:
            action = self._act(observation, info, info["tools"])
        else:
            tool, listed = skills
            tools = [t for t in info["tools"] if t["function"]["name"] != tool["name"]]
            action = _with_skills(self._act(observation, info, tools), info, tool, listed, phrasebook(language_of(info)))
        self._remember(action)
        if at_tool_turn_limit(info["messages"]) and action.lstrip().startswith("{"):
            # The harness allows no more tool turns before this reply: answer with what
            # the lookups so far returned (what failed is said to be unchecked).
            lang = language_of(info)
            return self._reply(info["messages"], info, lang)
        return action

    def _act(self, observation: str, info: dict, tools: list[dict]) -> str:
        messages, lang = info["messages"], language_of(info)
        if messages[-1]["role"] == "tool" and not _loading_note(messages):
            retry = _retry_faulted(messages)
            if retry and not self._sampled(0.25):  # at a temperature it may answer without the retry
                return retry
            return self._reply(messages, info, lang)
        system = system_text(messages)
        featured = FEATURED.findall(room_update(messages))
        featured_id = featured[-1] if featured else ""
        lineup = lineup_names(system)
        # Each ask of a request is served once: a request still waiting after a reply was
        # misread, and is not served again unless a new ask joined it (a merged message);
        # the same question asked again is a new request, and is served.
        handled = {line: tuple(self.voice(lang).lines.lines[line]) for line in ("refuse", "greet")}
        failed = _failed_asks(messages)
        now = stream_second(room_update(messages))
        asks = self._requests_waiting(messages, system, lang, featured_id, now, failed, handled)
        facts = [a for a in asks if a[3] not in ("inject", "bait", "social")]
        refusals = [a for a in asks if a[3] in ("inject", "bait")]
        situation = "fact" if facts else ("refuse" if refusals else ("social" if asks else "idle"))
        if self.choose("respond", situation, ("serve", "generic")) == "generic":
            return NaiveAvatar()(observation, info)
        # The request that has waited longest is served first, a bait as much as a
        # question: serving questions first left every bait of a busy room unrefused. A
        # viewer refused in one of the last replies waits while others ask (a spammer's
        # next bait does not take the room's turns one after another).
        refused = {r.split(" ", 1)[0] for r in self._recent if any(line in r for line in handled["refuse"])}
        now_refusals = [a for a in refusals if a[0] not in refused] or ([] if facts else refusals)
        first = self._first(facts + now_refusals) if facts or now_refusals else None
        if first is not None and first[3] not in ("inject", "bait"):
            mention, _, _, _, parts, todo = first
            # The asks of the request not served yet, each about its own product (or order),
            # in one tool turn; as many as one reply can answer within the length limit
            # (the rest are served next).
            fit = _asks_per_reply(system, mention, lang, [a[0] for a in todo])
            todo = todo[: min(fit, self.asks_per_reply or fit)]
            # The products the rest of the request is about are looked up too: the reply
            # owes their disclosures (a reply to a question about a sponsored product).
            said = {a[1] for a in todo}
            todo += [("disclose", p, []) for p in dict.fromkeys(a[1] for a in parts if a[0] not in _ORDER_INTENTS)
                     if p and p not in said]
            lookup = self._lookup_all(tools, mention, todo)
            if lookup:
                return lookup
            first = self._first(refusals) if refusals else None
        if first is not None:
            return self._refuse(first, tools, lineup, featured_id, lang, system)
        social = [a for a in asks if a[3] == "social"]
        if social:
            return _fit(self.voice(lang), _greeted(social[0][0], system), [self.voice(lang).line("greet")], [], system)
        return self._present(messages, failed, now, tools, featured_id, lang, system)

    def _requests_waiting(self, messages, system: str, lang: str, featured_id: str, now: int, failed,
                          handled: dict) -> list[tuple]:
        """The waiting requests still to serve, oldest first, each as (mention, wait, text,
        kind, every ask, the asks not served yet); what the host remembers of this stream
        (pitches, products, the stage, requests served) is brought up to date on the way."""
        asks = []
        for _, i, p in failed:  # a pitch whose lookup failed was not said
            self._pitched.pop((i, p), None)
        # The chat in view holds the last few turns only: what was pitched and looked up
        # before them, and what was on stage when, is remembered (as a host remembers
        # this stream): "this one" written before the view's first update is read by it.
        if now < self._last_clock:  # a new stream
            self._pitched, self._products, self._stage, self._handled = {}, {}, {}, set()
            self._requests, self._read_lookups = {}, set()
        self._last_clock = now
        self._stage.update(_stage(messages))
        stage = sorted(self._stage.items())
        self._products.update(_products_in_view(messages))
        # remembered after the view loses them
        _note_requests(messages, system, lang, stage, self._requests, self._read_lookups)
        for mention, wait, text in waiting_in(messages):
            on_stage = _featured_at(stage, now - wait) or featured_id  # "this one" when it was written
            parts = asks_in(text, system, lang, on_stage)
            kind = _kind(parts)
            wanted = _wanted(parts)
            posted = now - wait
            if kind in ("inject", "bait", "social"):
                # refused or greeted, in view or (after the view lost the reply) remembered
                if any((mention, text, posted + d) in self._handled for d in (-1, 0, 1)):
                    continue
                if _replied_since(messages, mention, text, posted, handled[_LINE[kind]]):
                    self._handled.add((mention, text, posted))
                    continue
            served = _served_of(self._requests, mention, text, posted)
            rest = [(i, p or on_stage, o) for i, p, o in wanted if not _done(i, p, o, served)]
            if kind not in ("inject", "bait", "social") and not rest:
                continue
            asks.append((mention, wait, text, kind, [(i, p or on_stage, o) for i, p, o in wanted], rest))
        return asks

    def _refuse(self, request: tuple, tools: list[dict], lineup, featured_id: str, lang: str, system: str) -> str:
        """A refusal of a bait or an injection, after looking up the product it is about
        (a refusal about a product still owes its disclosures)."""
        mention, _, text, _, _, _ = request
        pid = _product_in(text.lower(), lineup, featured_id)[0] or featured_id  # "this one": on screen
        if pid in self._products:  # its disclosures are known: refuse now
            return _compose(self.voice(lang), "refuse", mention, pid, self._products[pid], system, "", {})
        # Refusing about a product still owes its disclosures: look it up first.
        lookup = self._lookup(tools, mention, "refuse", pid, [], "")
        if lookup:
            return lookup
        return _fit(self.voice(lang), _greeted(mention, system), [self.voice(lang).line("refuse")], [], system)

    def _present(self, messages, failed, now: int, tools: list[dict], featured_id: str, lang: str, system: str) -> str:
        """Nobody waits: present the featured product, a fact not said of it in the last
        minutes; when every one was, stay quiet (saying the last minute again earns
        nothing and tires the room)."""
        said = _said_lately(messages, now - _IDLE_WINDOW_S) - {(i, p) for _, i, p in failed}
        said |= {k for k, at in self._pitched.items() if at >= now - _IDLE_WINDOW_S}  # and before the view
        clock = CLOCK.findall(messages[-1].get("content") or "")
        seconds = int(clock[-1][0]) * 60 + int(clock[-1][1]) if clock else 0
        for k in range(len(_IDLE_TOPICS)):
            topic = _IDLE_TOPICS[(seconds + k) % len(_IDLE_TOPICS)]
            intent = "pitch" if topic == "price" else topic
            also = _SAYS_ALSO.get(intent)
            if (intent, featured_id) not in said and not (also and any(i in also for i, _ in said)):
                return self._lookup(tools, "", intent, featured_id, [], featured_id) or self._welcome(said, lang, system)
        return ""

    def _remember(self, action: str) -> None:
        """Notes what a lookup is for (the facts its reply will say) and when."""
        if action.startswith('{"content": "serving '):
            note = json.loads(action)["content"]
            self._pitched.update(dict.fromkeys(_noted(note), self._last_clock))

    def _welcome(self, said: set[tuple[str, str]], lang: str, system: str) -> str:
        """A welcome to the room, or nothing when one was said lately."""
        return "" if ("welcome", "") in said else _fit(self.voice(lang), "", [self.voice(lang).line("greet")], [], system)

    # -------------------------------------------------------------- choosing
    def _sampled(self, chance: float) -> bool:
        """At temperature ``T`` > 0, true with probability ``chance * min(T, 1)``; never at 0."""
        return self.temperature > 0 and bool(self.rng.random() < chance * min(self.temperature, 1.0))

    def _first(self, asks: list[tuple]) -> tuple:
        """The request to serve first: the one that has waited longest, or at a temperature
        ``T`` one drawn with weight ``exp((wait - longest) / (20 s * T))``."""
        longest = max(asks, key=lambda a: a[1])
        if self.temperature <= 0 or len(asks) < 2:
            return longest
        w = np.exp((np.asarray([a[1] for a in asks], dtype=float) - longest[1]) / (20.0 * self.temperature))
        return asks[int(self.rng.choice(len(asks), p=w / w.sum()))]

    def _lookup_all(self, tools: list[dict], mention: str, asks: list[tuple[str, str, list[str]]]) -> str | None:
        """One tool turn for every ask (``(intent, product, orders)``); the note says what
        each call is for, so the reply can tell the results apart."""
        if len(asks) == 1:
            intent, pid, orders = asks[0]
            return self._lookup(tools, mention, intent, pid, orders, "")
        calls, subjects = [], []
        for intent, pid, orders in asks:
            one = self._lookup(tools, mention, intent, pid, orders, "")
            if one is None:
                continue
            for c in json.loads(one)["tool_calls"]:
                key = (c["function"]["name"], c["function"]["arguments"])
                if key not in calls:  # the same lookup twice is a redundant call
                    calls.append(key)
            subjects.append((intent, orders[0] if orders and intent in ("order_status", "refund") else pid))
        if not calls:
            return None
        tool_calls = [{"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": a}}
                      for i, (n, a) in enumerate(calls)]
        note = f"serving {mention or '-'} | {'+'.join(i for i, _ in subjects)} | {'+'.join(p for _, p in subjects)}"
        return json.dumps({"content": note, "tool_calls": tool_calls}, ensure_ascii=False)

    def tool_for(self, role: str, fn: dict) -> tuple[str, str | None]:
        """The name and first field to call the tool of ``role`` by: those its schema
        ``fn`` gives now (the reference host reads its harness; a learned host may have
        memorised others)."""
        params = params_of(fn)
        return fn["name"], params[0] if params else None

    def _lookup(self, tools: list[dict], mention: str, intent: str, pid: str, orders: list[str],
                featured: str) -> str | None:
        roles = {tool_role(t["function"]): t["function"] for t in tools}
        wanted = _TOOLS_FOR.get(intent, ("details",))
        calls = []

        def call(role: str, value: str | None) -> None:
            name, field = self.tool_for(role, roles[role])
            calls.append((name, {field: value} if field else {}))

        if intent in ("order_status", "refund"):
            if roles.get("order") and orders:
                call("order", orders[0])
        elif all(r in roles for r in ("details", *wanted)):
            # Only the tools this question needs, read from their descriptions; the
            # featured product's details too, since presenting it needs its disclosures.
            for role in dict.fromkeys(("details", *wanted)):
                call(role, pid)
            if featured and featured != pid:
                call("details", featured)
        else:  # descriptions say too little: ask every tool about both products
            for t in tools:
                fn = t["function"]
                params = params_of(fn)
                if not params:
                    calls.append((fn["name"], {}))
                elif tool_role(fn) != "order" and len(params) == 1:
                    for product in dict.fromkeys(p for p in (pid, featured) if p):
                        calls.append((fn["name"], {params[0]: product}))
        if not calls:
            return None
        tool_calls = [{"id": f"call_{i}", "type": "function",
                       "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                      for i, (n, a) in enumerate(calls)]
        order = orders[0] if orders and intent in ("order_status", "refund") else None
        note = f"serving {mention or '-'} | {intent} | {order or pid}"
        return json.dumps({"content": note, "tool_calls": tool_calls}, ensure_ascii=False)

    # -------------------------------------------------------------- replying
    def _reply(self, messages: list[dict], info: dict, lang: str) -> str:
        results, note, faulted = _lookup_results(messages)
        results = [r for r in results if "instructions" not in r]  # a loaded skill's instructions hold no facts
        note = note or "serving - | pitch | "
        mention, intent, subject = note_fields(note)
        system = system_text(messages)
        pairs = list(zip(intent.split("+"), subject.split("+")))
        unchecked: list[tuple[str, str]] = []
        if faulted:  # a lookup failed even after a retry: say so, state nothing unchecked
            self._products.update(_products_in_view(messages))
            roles = {t["function"]["name"]: tool_role(t["function"]) for t in info["tools"]}
            lost = {roles.get(name, "details") for name in faulted}
            # What came back is said; the rest is said to be unchecked.
            unchecked = [(i, p) for i, p in pairs if i != "disclose" and not _checked(i, lost)]
            if not mention or len(unchecked) == len([a for a in pairs if a[0] != "disclose"]):
                return _cannot_check(self.voice(lang), mention, subject, system, results, self._products)
        header = room_update(messages)
        featured = FEATURED.findall(header)
        featured = featured[-1] if featured else subject

        def about(pid: str, kind: str = intent) -> dict:
            merged: dict = {}
            for r in reversed(results):  # results came newest first
                if r.get("product_id", r.get("id", pid)) == pid or (kind in ("order_status", "refund") and "+" not in intent):
                    merged.update(r)
                elif kind in ("order_status", "refund") and r.get("id") == pid:
                    merged.update(r)
            return merged

        situation = intent.split("+")[0]
        chosen: dict[str, bool] = {}

        def wants(decision: str) -> bool:  # each decision made once a reply
            if decision not in chosen:
                chosen[decision] = self.choose(decision, situation, self.DECISIONS[decision]) == "yes"
            return chosen[decision]

        # What the asker's question asks that no listing says ("ship straight to my sister?").
        voice = self.voice(lang)
        asked = [text for who, _, text in WAITING.findall(header) if who == mention and mention]
        beyond = frozenset(i for i in intent.split("+") if any(voice.lines.beyond(i, text) for text in asked))
        if faulted:  # each ask whose lookups came back, with what the details known say to disclose
            asks = [(i, p, {**_disclosed(self._products.get(p, {})), **_deals_of(p, results), **about(p, i)})
                    for i, p in pairs if (i, p) not in unchecked]
            after = [voice.line("cannot_check_what", what=voice.lines.listed(dict.fromkeys(
                voice.lines.topics.get(i, voice.lines.topics["details"]) for i, _ in unchecked)))] if unchecked else []
            # a product whose details (what it must disclose) are not known owes every disclosure in force
            owed = all_disclosures(system, lang) if any(p not in self._products for i, p, _ in asks
                                                        if i not in _ORDER_INTENTS) else []
            return _compose_many(voice, asks, mention, system, wants, beyond, after, owed)
        if "+" in intent:  # several asks: each answered from its own lookups
            return _compose_many(voice, [(i, p, about(p, i)) for i, p in pairs], mention, system, wants, beyond)
        return _compose(voice, intent, mention, subject, about(subject), system, featured, about(featured),
                        wants, beyond)


_ORDER_INTENTS = ("order_status", "refund")

def _checked(intent: str, lost: set[str]) -> bool:
    """Whether an ask can be answered when the tools of kinds ``lost`` failed: it needs
    the first tool it is looked up with (:data:`_TOOLS_FOR`; an order's, the order tool;
    others, a product's details), a deal either of its two."""
    needs = ("order",) if intent in _ORDER_INTENTS else _TOOLS_FOR.get(intent, ("details",))
    return not set(needs) <= lost if intent == "promotion" else needs[0] not in lost


def _disclosed(details: dict) -> dict:
    """What a product's details looked up earlier say about its disclosures (not its
    price or stock, which may have changed since)."""
    return {k: details[k] for k in ("id", "name", "sponsored", "health_food", "category") if k in details}


def _deals_of(pid: str, results: list[dict]) -> dict:
    """The deal a promotions result shows for ``pid`` (its flash sale and price), for an
    answer whose price lookup failed."""
    for r in results:
        for sale in r.get("flash_sales") or ():
            if sale.get("product_id") == pid:
                return {"product_id": pid, "flash_sale": sale, "price": sale.get("price")}
    return {"product_id": pid}


#: Idle topics whose reply also says what other answers said: the price and stock lines
#: carry the running deal (a coupon, a flash sale), as a price, stock or deal answer does
#: (of any product: a store-wide coupon is said with each).
_SAYS_ALSO = {i: ("pitch", "price", "stock", "promotion") for i in ("pitch", "stock")}

#: How long a fact said to nobody in particular (an idle pitch) is not said again.
_IDLE_WINDOW_S = 90


#: The line a host serves a request of each kind with, where no fact answers it.
_LINE = {"inject": "refuse", "bait": "refuse", "social": "greet"}


def _kind(parts: tuple) -> str:
    """What a request asks for, of its asks (:func:`asks_in`): a bait or injection
    whatever else it asks, else its first question, else small talk."""
    kinds = [i for i, _, _ in parts]
    return next((k for k in kinds if k in ("inject", "bait")), None) \
        or next((k for k in kinds if k not in ("inject", "bait", "social")), "social")


def _replied_since(messages: list[dict], mention: str, text: str, posted: int, lines: tuple[str, ...]) -> bool:
    """Whether ``text`` (a bait, an injection or small talk ``mention`` posted at stream
    second ``posted``) was refused or greeted: a reply holding one of ``lines`` went to the
    viewer while it was the oldest of their waiting messages (a reply that states no fact
    serves the addressed viewer's oldest, as the room reads it). One the room still lists
    was misread, and is not said twice; a refusal that served the viewer's older message
    (or the same words sent before) refuses no newer bait."""
    update, now = "", 0
    for m in messages:
        if m["role"] == "user" and not (m["content"] or "").startswith("[hook]"):
            update = m["content"] or ""
            now = stream_second(update, now)
        elif (m["role"] == "assistant" and not m.get("tool_calls") and (m.get("content") or "").startswith(mention + " ")
              and any(said in m["content"] for said in lines)):
            theirs = [(int(wait), t) for who, wait, t in WAITING.findall(update) if who == mention]
            wait, oldest = max(theirs, key=lambda w: w[0]) if theirs else (0, "")
            if oldest == text and abs(now - wait - posted) <= 1:
                return True
    return False


def _said_lately(messages: list[dict], since: int) -> set[tuple[str, str]]:
    """``(intent, product)`` of every ask the host looked up at or after stream
    second ``since`` (by the clock of the room update before it), and ``("welcome", "")``
    when it welcomed the room without addressing anyone then."""
    out: set[tuple[str, str]] = set()
    now = 0
    for m in messages:
        content = m.get("content") or ""
        if m["role"] == "user":
            now = stream_second(content, now)
        elif m["role"] == "assistant" and now >= since:
            if m.get("tool_calls") and content.startswith("serving "):
                out |= _noted(content)
            elif not m.get("tool_calls") and content and not _MENTIONED.match(content):
                out.add(("welcome", ""))
    return out


def _noted(note: str) -> set[tuple[str, str]]:
    """``(intent, subject)`` of each ask a lookup note serves (a price answer says what
    a pitch would)."""
    _, intents, subjects = note_fields(note)
    pairs = set(zip(intents.split("+"), subjects.split("+")))
    return pairs | {("pitch", p) for i, p in pairs if i == "price"}


def _products_in_view(messages: list[dict]) -> dict[str, dict]:
    """Product id -> the details a lookup in view returned of it (those that say whether
    it is sponsored: what a refusal's disclosures depend on)."""
    out = {}
    for m in messages:
        if m["role"] == "tool" and (m.get("content") or "").startswith("{"):
            try:
                result = json.loads(m["content"])
            except ValueError:
                continue
            if isinstance(result, dict) and "sponsored" in result and result.get("id"):
                out[result["id"]] = result
    return out


_MENTIONED = re.compile(r"^(?:@|\[to |<@)")


def _subject(intent: str, pid: str, orders: list[str]) -> str:
    """What a lookup note names as an ask's subject: its order, or its product."""
    return orders[0] if orders and intent in _ORDER_INTENTS else pid


#: Answers that list things run longer than a price or a stock count: a list of
#: ingredients, specs or devices about twice as long (in English; about half again in
#: Chinese), a return condition, care label or size range about half again.
_LONG_ANSWERS = ("ingredients", "specs", "compatibility", "allergens")
_MEDIUM_ANSWERS = ("returns", "care", "size", "colors", "damaged", "skin_type", "storage", "material")


def _asks_per_reply(system: str, mention: str, lang: str, intents: list[str]) -> int:
    """How many of ``intents`` (in order) one reply can answer within the harness's length
    limit, after the mention, greeting, sign-off and a disclosure (about 45 characters a
    short answer in English, 22 in Chinese; more for a list). An answer that would not
    fit is not looked up now: a reply cut short would leave it unsaid but served. (A flat
    60 characters an answer served one ask of two under a 160-character limit, and let a
    list cut the answer after it.)"""
    t = terms(system)
    room = t.limit - len(t.greeting) - len(t.sign_off) - len(mention) - 25
    unit, medium, long = (45, 70, 100) if lang == "en" else (22, 28, 35)
    n = 0
    for intent in intents:
        room -= long if intent in _LONG_ANSWERS else medium if intent in _MEDIUM_ANSWERS else unit
        if room < 0:
            break
        n += 1
    return max(1, n)


def _wanted(parts: tuple) -> list[tuple[str, str | None, tuple[str, ...]]]:
    """The asks of a request (:func:`asks_in`) a lookup serves: a refund asked without an
    order id is a question about the return policy (no order to look up); an order's
    status without one cannot be looked up; baits, injections and small talk are no asks."""
    return [("returns" if i == "refund" and not o else i, p, o) for i, p, o in parts
            if i not in ("inject", "bait", "social") and (o or i != "order_status")]


def _served_of(requests: dict, mention: str, text: str, posted: int) -> set[tuple[str, str]]:
    """The asks served of the request ``mention`` posted at stream second ``posted`` (read
    a second either way: the waits shown are whole seconds)."""
    return set().union(*(requests.get((mention, text, posted + d), ()) for d in (-1, 0, 1)))


def _done(intent: str, pid: str | None, orders: tuple[str, ...], served: set[tuple[str, str]]) -> bool:
    """Whether an ask was served: its subject looked up for it, or, for "this one" (no
    product named), the intent whatever was on stage when it was looked up."""
    return (intent, _subject(intent, pid, orders)) in served or (not pid and any(i == intent for i, _ in served))


def _note_requests(messages: list[dict], system: str, lang: str, stage: list[tuple[int, str]],
                   requests: dict, read: set[tuple[int, str]]) -> None:
    """Adds to ``requests`` the asks each lookup in view served whose reply followed (a
    lookup that failed served nothing): the request served is the oldest of the viewer's
    then waiting that asks what was looked up, of the product looked up ("this one": what
    was on ``stage`` when it was written), and was not served it yet (what a host serving
    the longest-waiting request first chose). Each lookup is read once (``read``: its
    stream second and note): read again, it would serve a later request of the same asks."""
    update, now = "", 0
    for k, m in enumerate(messages):
        if m["role"] == "user":
            if not (m["content"] or "").startswith("[hook]"):
                update = m["content"] or ""
                now = stream_second(update, now)
            continue
        if m["role"] != "assistant" or m.get("tool_calls") or messages[k - 1]["role"] != "tool":
            continue
        key = (now, messages[_tool_turn_at(messages, k - 1)[0]].get("content") or "")
        if key in read:
            continue
        read.add(key)
        _, note, faulted = _lookup_results(messages, k - 1, read=False)
        mention, intents, subjects = note_fields(note)
        asks = {(i, s) for i, s in zip(intents.split("+"), subjects.split("+")) if i != "disclose"}
        if faulted or not mention or not asks:
            continue
        theirs = sorted(((int(wait), text) for who, wait, text in WAITING.findall(update) if who == mention),
                        reverse=True)
        for wait, text in theirs:  # read as the host chose: the asks of each not served yet
            on_stage = _featured_at(stage, now - wait)
            served = _served_of(requests, mention, text, now - wait)
            parts = _wanted(asks_in(text, system, lang, on_stage))
            new = asks & {(i, _subject(i, p or on_stage, o)) for i, p, o in parts if not _done(i, p, o, served)}
            if new:
                requests.setdefault((mention, text, now - wait), set()).update(new)
                break
