"""Baseline avatars: callables ``policy(observation, info) -> action``.

Both read only what an LLM would get (``info["messages"]`` and ``info["tools"]``), so
they work under any harness: tool names, the mention format, length limits, the rules
in force and the directives are all read from what the harness presents now.
"""

from __future__ import annotations

import json

from liveroom_sim.harness.prompt import _LABELS
from liveroom_sim.policies.naive import NaiveAvatar
from liveroom_sim.policies.reading import (
    _CLOCK,
    _FEATURED,
    _GREETING,
    _IDLE_TOPICS,
    _LIMIT,
    _ORDER,
    _QUOTED,
    _SIGN_OFF,
    _SLOGAN,
    _TOOLS_FOR,
    _language,
    _lineup,
    _params,
    _system_text,
    _tool_role,
    _asks,
    _featured_at,
    _product_in,
    _short_name,
    _update,
    _waiting,
    phrasebook,
)
from liveroom_sim.world.phrasebook import Phrasebook


class ScriptedAvatar:
    """A host who plays by the rules of the harness it is given now.

    It answers each waiting viewer once, the one who has waited longest first: looks up
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
            return self._reply(messages, info, book, lang)
        system = _system_text(messages)
        featured = _FEATURED.findall(_update(messages))
        featured_id = featured[-1] if featured else ""
        lineup = _lineup(system)
        # Each ask is served once: a request still waiting after a reply in view was
        # misread, and is not served again unless a new ask joined it (a merged message).
        served = [m["content"] for m in messages if m["role"] == "assistant" and m.get("content") and not m.get("tool_calls")]
        looked_up = _served_asks(messages)
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
            # Every ask of the request, each about its own product (or order), in one tool turn.
            lookup = self._lookup_all(info["tools"], mention, [(i, p or featured_id, o) for i, p, o in parts])
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
        i = len(messages) - 1
        results: list[dict] = []
        while messages[i]["role"] == "tool":
            try:
                result = json.loads(messages[i]["content"])
            except (TypeError, json.JSONDecodeError):
                result = {}
            if isinstance(result, dict) and "error" not in result:
                results.append(result)
            i -= 1
        note = messages[i].get("content") or "serving - | pitch | "
        mention, intent, subject = (part.strip() for part in (note.split("|") + ["", ""])[:3])
        mention = "" if mention.removeprefix("serving ").strip() == "-" else mention.removeprefix("serving ").strip()
        system = _system_text(messages)
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


def _served_asks(messages: list[dict]) -> set[tuple[str, str, str]]:
    """``(mention, intent, subject)`` of every ask the host's lookup notes in view served."""
    out = set()
    for m in messages:
        note = m.get("content") or ""
        if m["role"] == "assistant" and m.get("tool_calls") and note.startswith("serving "):
            mention, intents, subjects = (x.strip() for x in (note.removeprefix("serving ").split("|") + ["", ""])[:3])
            out.update((mention, i, p) for i, p in zip(intents.split("+"), subjects.split("+")))
    return out


def _money(value, currency: str, lang: str) -> str:
    v = f"{float(value):.2f}".rstrip("0").rstrip(".")
    return f"${v}" if currency == "USD" else (f"{v}元" if lang == "zh" else f"¥{v}")


def _compose(book: Phrasebook, lang: str, intent: str, mention: str, subject: str, f: dict, system: str,
             featured: str, featured_facts: dict, wants=lambda decision: decision != "hype") -> str:
    """The reply for ``intent`` from the looked-up facts ``f``; ``wants(decision)`` says
    whether to address the asker, announce promotions, disclose, present the featured
    product and add hype (see :attr:`ScriptedAvatar.DECISIONS`)."""
    h = {k: v[0] for k, v in book.host.items()}
    mention = mention if wants("mention") else ""
    sep = h["list_sep"]
    cur = f.get("currency", "USD" if lang == "en" else "CNY")
    name = _short_name(f.get("product_id") or f.get("id") or subject, _lineup(system), f.get("name") or subject)
    price = _money(f["price"], cur, lang) if "price" in f else ""
    coupons = [c for c in f.get("coupons", []) if not c.get("products") or f.get("product_id") in c["products"]]
    codes = sep.join(c["code"] for c in coupons)
    v = {"mention": _greeted(mention, system), "name": name, "price": price, "codes": codes}
    tails: list[str] = []
    if intent == "refuse":
        must = _disclosures(system, f, lang) if wants("disclose") else []
        return _fit(h["refuse"].format(mention=v["mention"], name=name), [], system, must=must)
    if intent in ("order_status", "refund"):
        eta = h["eta"].format(days=f["eta_days"]) if f.get("eta_days") is not None else ""
        text = h[intent].format(mention=v["mention"], order=f.get("id", subject), status=f.get("status", "?"), eta=eta)
        return _fit(text, [], system)
    promo = wants("promo")
    # A code that does not lower this price (a spend-X-save-Y under its threshold) is no deal.
    if promo and coupons and "price_after_best_coupon" in f and f["price_after_best_coupon"] != f.get("price"):
        tails.append(h["coupon_tail"].format(codes=codes, price=_money(f["price_after_best_coupon"], cur, lang)))
    elif promo and coupons:
        tails.append(h["coupon_note"].format(codes=codes))
    if promo and f.get("flash_sale"):
        tails.append(h["flash_tail"])
    body = _fact_sentence(h, intent, f, v, sep, cur, lang)
    text = body if intent != "pitch" else h["pitch"].format(name=name, pitch=price).rstrip(": ")
    if intent not in ("price", "stock", "promotion", "pitch"):
        tails = []
    slogan = _SLOGAN.findall(system)
    if slogan:
        tails.append(" " + slogan[0])
    disclose = wants("disclose")
    must = _disclosures(system, f, lang) if disclose else []
    if wants("hype"):
        text += h["hype"]
    if featured and featured != subject and intent != "pitch" and wants("featured") and not mention:
        # The featured tail may be said only with the featured product's own disclosures,
        # and only to the room at large: a viewer waiting for an answer is not pitched to.
        extra = [d for d in _disclosures(system, featured_facts, lang) if d not in must] if disclose else []
        featured_name = _short_name(featured, _lineup(system), featured)
        tail = (" " if lang == "en" else "") + h["pitch"].format(name=featured_name, pitch="").rstrip(": ：") + "!"
        tails.append(tail + "".join(extra))
    return _fit(text.strip(), tails, system, must=must)


def _compose_many(book: Phrasebook, lang: str, asks: list[tuple[str, str, dict]], mention: str, system: str,
                  wants) -> str:
    """The reply to a request of several asks (``(intent, subject, looked-up facts)``):
    one sentence per ask, the asker addressed once, the promotion of the first product
    asked about for its price, the slogan, and the disclosures of every product named."""
    h = {k: v[0] for k, v in book.host.items()}
    mention = _greeted(mention if wants("mention") else "", system)
    sep = h["list_sep"]
    sentences, tails, must = [], [], []
    for n, (intent, subject, f) in enumerate(asks):
        cur = f.get("currency", "USD" if lang == "en" else "CNY")
        name = _short_name(f.get("product_id") or f.get("id") or subject, _lineup(system),
                           f.get("name") or f.get("product_name") or subject)
        price = _money(f["price"], cur, lang) if "price" in f else ""
        coupons = [c for c in f.get("coupons", []) if not c.get("products") or f.get("product_id") in c["products"]]
        v = {"mention": mention if n == 0 else "", "name": name, "price": price, "codes": sep.join(c["code"] for c in coupons)}
        if intent in ("order_status", "refund"):
            eta = h["eta"].format(days=f["eta_days"]) if f.get("eta_days") is not None else ""
            sentences.append(h[intent].format(mention=v["mention"], order=f.get("id", subject), status=f.get("status", "?"), eta=eta))
            continue
        sentences.append(_fact_sentence(h, intent, f, v, sep, cur, lang))
        if wants("promo") and not tails and intent in ("price", "stock", "promotion") and coupons:
            if f.get("price_after_best_coupon") not in (None, f.get("price")):
                tails.append(h["coupon_tail"].format(codes=v["codes"], price=_money(f["price_after_best_coupon"], cur, lang)))
            else:
                tails.append(h["coupon_note"].format(codes=v["codes"]))
        if wants("disclose"):
            must += [d for d in _disclosures(system, f, lang) if d not in must]
    text = (" " if lang == "en" else "").join(x.strip() for x in sentences if x.strip())
    slogan = _SLOGAN.findall(system)
    if slogan:
        tails.append(" " + slogan[0])
    return _fit(text, tails, system, must=must)


def _fact_sentence(h: dict, intent: str, f: dict, v: dict, sep: str, cur: str, lang: str) -> str:
    lst = lambda xs: sep.join(xs)  # noqa: E731
    if intent in ("price", "pitch"):
        return h["flash" if f.get("flash_sale") else "price"].format(**v)
    if intent == "stock":
        return h["sold_out" if f.get("sold_out") else "stock"].format(stock=f.get("stock"), **v)
    if intent == "promotion":
        return h["promotion" if v["codes"] else ("flash" if f.get("flash_sale") else "no_promotion")].format(**v)
    if intent == "shipping":
        s = f.get("shipping", {})
        fee = h["free_shipping"] if not s.get("fee") else h["shipping_fee"].format(fee=_money(s["fee"], cur, lang))
        return h["shipping"].format(hours=s.get("ships_within_hours"), fee=fee, **v)
    if intent == "returns":
        r = f.get("returns", {})
        return h["returns"].format(days=r.get("days"), value=r.get("condition", ""), **v)
    if intent == "damaged":  # the return window holds; an "unopened" condition cannot
        return h["damaged"].format(days=f.get("returns", {}).get("days"), **v)
    if intent == "warranty":
        if f.get("warranty_months") is None:
            return h["no_warranty"].format(days=f.get("returns", {}).get("days"), **v)
        return h["warranty"].format(months=f["warranty_months"], **v)
    if intent == "pregnancy":
        return h["pregnancy_safe" if f.get("pregnancy_safe") else "pregnancy_unsafe"].format(**v)
    if intent == "allergens":
        return h["allergens"].format(list=lst(f["allergens"]), **v) if f.get("allergens") else h["no_allergens"].format(**v)
    if intent == "shelf_life":
        return h["shelf_life"].format(months=f.get("shelf_life_months"), **v)
    if intent == "battery" and f.get("battery_hours") is not None:
        return h["battery"].format(value=f"{f.get('battery_hours', 0):g}", **v)
    field = {"size": "sizes", "skin_type": "skin_types"}.get(intent, intent)
    value = f.get(field)
    if isinstance(value, dict):
        return h[intent].format(list=lst(f"{k} {x}" for k, x in value.items()), **v)
    if isinstance(value, list):
        return h[intent].format(list=lst(value), **v)
    if value is not None and intent in h:
        return h[intent].format(value=value, **v)
    return h["price"].format(**v) if v["price"] else h["greet"].format(**v)


def _disclosures(system: str, f: dict, lang: str) -> list[str]:
    reverse = {label: key for key, label in _LABELS[lang].get("when", {}).items()}
    out = []
    for line in system.splitlines():
        if line.startswith(("Say \"", "讲到")):
            forms = _QUOTED.findall(line)
            when = reverse.get(line.removeprefix("讲到").split("商品")[0]) if lang == "zh" else line.split(" when talking about ")[-1].removesuffix(" products")
            when = (when or "").replace(" ", "_")
            applies = (when == "sponsored" and f.get("sponsored")) or (when == "health_food" and f.get("health_food")) \
                or when.replace(" ", "_") == f.get("category")
            if forms and applies and forms[0] not in "".join(out):
                out.append(" " + forms[0])
    return out


def _greeted(mention: str, system: str) -> str:
    """The mention, followed by the greeting the harness asks every reply to begin with."""
    greeting = _GREETING.findall(system)
    return f"{mention} {greeting[0]}".strip() if greeting else mention


def _fit(text: str, tails: list[str], system: str, must: list[str] = ()) -> str:
    """``text`` plus as many ``tails`` as fit the length limit (disclosures first), and
    the sign-off the harness asks every reply to end with."""
    limits = [int(n) for n in _LIMIT.findall(system)]
    limit = min(limits) if limits else 280
    sign_off = _SIGN_OFF.findall(system)
    end = " " + sign_off[0] if sign_off else ""
    required = "".join(must)
    out = text[: max(0, limit - len(required) - len(end))] + required
    for tail in tails:
        if tail not in must and len(out) + len(tail) + len(end) <= limit:
            out += tail
    return out + end
