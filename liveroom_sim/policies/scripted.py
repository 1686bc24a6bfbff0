"""Baseline avatars: callables ``policy(observation, info) -> action``.

Both read only what an LLM would get (``info["messages"]`` and ``info["tools"]``), so
they work under any harness: tool names, the mention format, length limits, the rules
in force and the directives are all read from what the harness presents now.
"""

from __future__ import annotations

import json

from liveroom_sim.policies.faults import _cannot_check, _failed_asks, _lookup_results, _retry_faulted
from liveroom_sim.policies.naive import NaiveAvatar
from liveroom_sim.policies.wording import _compose, _compose_many, _fit, _greeted
from liveroom_sim.policies.reading import (
    _CLOCK,
    _FEATURED,
    _GREETING,
    _IDLE_TOPICS,
    _LIMIT,
    _SIGN_OFF,
    _TOOLS_FOR,
    _language,
    _lineup,
    _params,
    _system_text,
    _tool_role,
    _asks,
    _featured_at,
    _product_in,
    _update,
    _waiting,
    phrasebook,
)
from liveroom_sim.world.phrasebook import Phrasebook


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
    get a polite refusal. Only when nobody waits does it present the featured product.
    Deterministic.
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

    def choose(self, decision: str, situation: str, options: tuple[str, ...]) -> str:
        """The scripted host's choice: always the first (rule-following) option.
        :class:`liveroom_sim.policies.learned.LearnedAvatar` samples here instead."""
        return options[0]

    def __call__(self, observation: str, info: dict) -> str:
        messages, lang = info["messages"], _language(info)
        book = phrasebook(lang)
        if messages[-1]["role"] == "tool":
            return _retry_faulted(messages) or self._reply(messages, info, book, lang)
        system = _system_text(messages)
        featured = _FEATURED.findall(_update(messages))
        featured_id = featured[-1] if featured else ""
        lineup = _lineup(system)
        # Each ask is served once: a request still waiting after a reply in view was
        # misread, and is not served again unless a new ask joined it (a merged message).
        served = [m["content"] for m in messages if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")]
        looked_up = _served_asks(messages) - _failed_asks(messages)
        asks = []
        clock = _CLOCK.match(_update(messages))
        now = int(clock.group(1)) * 60 + int(clock.group(2)) if clock else 0
        for mention, wait, text in _waiting(messages):
            on_stage = _featured_at(messages, now - wait) or featured_id  # "this one" when it was written
            parts = _asks(text, lineup, book, on_stage)
            kinds = [i for i, _, _ in parts]
            kind = next((k for k in kinds if k in ("inject", "bait")), None) \
                or next((k for k in kinds if k not in ("inject", "bait", "social")), "social")
            wanted = [p for p in parts if p[0] not in ("inject", "bait", "social")]
            if kind in ("inject", "bait", "social") and any(r.startswith(mention + " ") for r in served):
                continue
            wanted = [(i, p or on_stage, o) for i, p, o in wanted]
            if kind not in ("inject", "bait", "social") and all(
                    (mention, i, _subject(i, p, o)) in looked_up for i, p, o in wanted if i not in _ORDER_INTENTS or o):
                continue
            asks.append((mention, wait, text, kind, wanted))
        facts = [a for a in asks if a[3] not in ("inject", "bait", "social")]
        refusals = [a for a in asks if a[3] in ("inject", "bait")]
        situation = "fact" if facts else ("refuse" if refusals else ("social" if asks else "idle"))
        if self.choose("respond", situation, ("serve", "generic")) == "generic":
            return NaiveAvatar()(observation, info)
        if facts:
            mention, _, _, _, parts = max(facts, key=lambda a: a[1])
            # The asks of the request not served yet, each about its own product (or order),
            # in one tool turn; as many as one reply can answer within the length limit
            # (the rest are served next).
            todo = [a for a in parts if (mention, a[0], _subject(*a)) not in looked_up] or parts
            todo = todo[: _asks_per_reply(system, mention, lang)]
            # The products the rest of the request is about are looked up too: the reply
            # owes their disclosures (a reply to a question about a sponsored product).
            said = {a[1] for a in todo}
            todo += [("disclose", p, []) for p in dict.fromkeys(a[1] for a in parts if a[0] not in _ORDER_INTENTS)
                     if p and p not in said]
            lookup = self._lookup_all(info["tools"], mention, todo)
            if lookup:
                return lookup
        name = lineup.get(featured_id, [featured_id])[0]
        if refusals:
            mention, _, text, _, _ = max(refusals, key=lambda a: a[1])
            pid = _product_in(text.lower(), lineup, featured_id)[0]
            # Refusing about a product still owes its disclosures: look it up first.
            lookup = self._lookup(info["tools"], mention, "refuse", pid or featured_id, [], "")  # "this one": on screen
            if lookup:
                return lookup
            return _fit(book.host["refuse"][0].format(mention=_greeted(mention, system), name=name), [], system)
        if asks:
            return _fit(book.host["greet"][0].format(mention=_greeted(asks[0][0], system), name=name), [], system)
        # Nobody waits: present the featured product, a different fact each time.
        clock = _CLOCK.findall(messages[-1].get("content") or "")
        seconds = int(clock[-1][0]) * 60 + int(clock[-1][1]) if clock else 0
        topic = _IDLE_TOPICS[seconds % len(_IDLE_TOPICS)]
        return self._lookup(info["tools"], "", "pitch" if topic == "price" else topic, featured_id, [], featured_id) \
            or _fit(book.host["greet"][0].format(mention="", name=name).strip(), [], system)

    # -------------------------------------------------------------- choosing
    @staticmethod
    def _classify(text: str, lineup: dict[str, list[str]], book: Phrasebook) -> tuple[str, str | None]:
        low = text.lower()
        pid, best = None, ""
        for product_id, names in lineup.items():
            for n in names:
                if n.lower() in low and len(n) > len(best):
                    pid, best = product_id, n
        rest = low.replace(best.lower(), " ") if best else low
        for intent, cues in book.cues.items():
            if any(c in rest for c in cues):
                return intent, pid
        return ("price" if pid else "social"), pid

    @classmethod
    def _lookup_all(cls, tools: list[dict], mention: str, asks: list[tuple[str, str, list[str]]]) -> str | None:
        """One tool turn for every ask (``(intent, product, orders)``); the note says what
        each call is for, so the reply can tell the results apart."""
        if len(asks) == 1:
            intent, pid, orders = asks[0]
            return cls._lookup(tools, mention, intent, pid, orders, "")
        calls, subjects = [], []
        for intent, pid, orders in asks:
            one = cls._lookup(tools, mention, intent, pid, orders, "")
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

    @staticmethod
    def _lookup(tools: list[dict], mention: str, intent: str, pid: str, orders: list[str], featured: str) -> str | None:
        roles = {_tool_role(t["function"]): t["function"] for t in tools}
        wanted = _TOOLS_FOR.get(intent, ("details",))
        calls = []
        if intent in ("order_status", "refund"):
            fn = roles.get("order")
            if fn and orders:
                calls.append((fn["name"], {_params(fn)[0]: orders[0]}))
        elif all(r in roles for r in ("details", *wanted)):
            # Only the tools this question needs, read from their descriptions; the
            # featured product's details too, since presenting it needs its disclosures.
            for role in dict.fromkeys(("details", *wanted)):
                fn = roles[role]
                calls.append((fn["name"], {_params(fn)[0]: pid} if _params(fn) else {}))
            if featured and featured != pid:
                calls.append((roles["details"]["name"], {_params(roles["details"])[0]: featured}))
        else:  # descriptions say too little: ask every tool about both products
            for t in tools:
                fn = t["function"]
                params = _params(fn)
                if not params:
                    calls.append((fn["name"], {}))
                elif _tool_role(fn) != "order" and len(params) == 1:
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
    def _reply(self, messages: list[dict], info: dict, book: Phrasebook, lang: str) -> str:
        results, note, faulted = _lookup_results(messages)
        note = note or "serving - | pitch | "
        mention, intent, subject = (part.strip() for part in (note.split("|") + ["", ""])[:3])
        mention = "" if mention.removeprefix("serving ").strip() == "-" else mention.removeprefix("serving ").strip()
        system = _system_text(messages)
        if faulted:  # a lookup failed even after a retry: say so, state nothing unchecked
            return _cannot_check(book, lang, mention, subject, system, results)
        header = _update(messages)
        featured = _FEATURED.findall(header)
        featured = featured[-1] if featured else subject

        def about(pid: str, kind: str = intent) -> dict:
            merged: dict = {}
            for r in reversed(results):  # results came newest first
                if r.get("product_id", r.get("id", pid)) == pid or (kind in ("order_status", "refund") and "+" not in intent):
                    merged.update(r)
                elif kind in ("order_status", "refund") and r.get("id") == pid:
                    merged.update(r)
            return merged

        if "+" in intent:  # several asks: each answered from its own lookups
            pairs = list(zip(intent.split("+"), subject.split("+")))
            wants = lambda decision: self.choose(decision, pairs[0][0], self.DECISIONS[decision]) == "yes"  # noqa: E731
            return _compose_many(book, lang, [(i, p, about(p, i)) for i, p in pairs], mention, system, wants)
        return _compose(book, lang, intent, mention, subject, about(subject), system, featured, about(featured),
                        lambda decision: self.choose(decision, intent, self.DECISIONS[decision]) == "yes")



_ORDER_INTENTS = ("order_status", "refund")


def _subject(intent: str, pid: str, orders: list[str]) -> str:
    """What a lookup note names as an ask's subject: its order, or its product."""
    return orders[0] if orders and intent in _ORDER_INTENTS else pid


def _asks_per_reply(system: str, mention: str, lang: str) -> int:
    """How many asks one reply can answer within the harness's length limit, after the
    mention, greeting, sign-off and a disclosure (about 60 characters an answer in
    English, 30 in Chinese)."""
    limits = [int(n) for n in _LIMIT.findall(system)]
    fixed = sum(len(x[0]) for x in (_GREETING.findall(system), _SIGN_OFF.findall(system)) if x)
    room = (min(limits) if limits else 280) - fixed - len(mention) - 25
    return max(1, room // (60 if lang == "en" else 30))


def _served_asks(messages: list[dict]) -> set[tuple[str, str, str]]:
    """``(mention, intent, subject)`` of every ask the host's lookup notes in view served."""
    out = set()
    for m in messages:
        note = m.get("content") or ""
        if m["role"] == "assistant" and m.get("tool_calls") and note.startswith("serving "):
            mention, intents, subjects = (x.strip() for x in (note.removeprefix("serving ").split("|") + ["", ""])[:3])
            out.update((mention, i, p) for i, p in zip(intents.split("+"), subjects.split("+")))
    return out
