"""How the built-in hosts word a reply from looked-up facts, within the harness's
length limit, greeting, sign-off, slogan and disclosures (shared by the scripted and
learned hosts). The words come from ``envs/host/<lang>.yaml``
(:mod:`liveroom_sim.policies.host_lines`); this module decides which lines a reply
needs, says each fact once, and puts the parts in order: the mention and greeting, the
answers, the deals, the slogan, the disclosures, the sign-off.
"""

from __future__ import annotations

import re

from liveroom_sim.policies.host_lines import Voice
from liveroom_sim.policies.reading import lineup_names, short_name, disclosure_rules, lineup_entries, terms

_FACTS = re.compile(r"\$\d[\d,]*(?:\.\d+)?|\d+(?:\.\d+)?元|¥\d+(?:\.\d+)?|\b[A-Z]{3,}\d{2,}\b")
_SENTENCE_START = re.compile(r"(^|[.!?]\s+)([a-z])")


def _product(voice: Voice, pid: str, system: str, fallback: str) -> tuple[str, dict[str, str]]:
    """How a sentence names product ``pid`` ("the ANC earbuds"), and the forms that agree
    with it: its shortest lineup name, with the capitals its full name gives a brand or a
    model ("Sonaro", "S2")."""
    alias = short_name(pid, lineup_names(system), fallback)
    full = next((name for p, name, _, _ in lineup_entries(system) if p == pid), "")
    words = full.split()
    cased = {w.lower(): w for w in words if w[1:] != w[1:].lower() or w.isupper() or any(c.isdigit() for c in w)}
    if words:
        cased.setdefault(words[0].lower(), words[0])  # the brand
    name = " ".join(cased.get(w.lower(), w) if w.isascii() else w for w in alias.split(" "))
    return voice.lines.product.format(name=name), voice.lines.agreement_of(alias)


def _said(text: str) -> set[str]:
    """The amounts and codes ``text`` states (what a later sentence must not repeat)."""
    return set(_FACTS.findall(text))


def _clean(value) -> str:
    """A catalog value as a sentence's slot: without the stop it may end with."""
    return str(value).strip().rstrip("。.，,;；")


def _compose(voice: Voice, intent: str, mention: str, subject: str, f: dict, system: str,
             featured: str, featured_facts: dict, wants=lambda decision: decision != "hype",
             beyond: frozenset[str] = frozenset()) -> str:
    """The reply for ``intent`` from the looked-up facts ``f``; ``wants(decision)`` says
    whether to address the asker, announce promotions, disclose, present the featured
    product and add hype (see :attr:`ScriptedAvatar.DECISIONS`); ``beyond``: the intents
    asked about something no listing says (said so after the facts that are listed)."""
    lang = voice.lines.language
    mention = _greeted(mention if wants("mention") else "", system)
    must = _disclosures(system, f, lang) if wants("disclose") else []
    if intent == "refuse":
        return _fit(voice, mention, [voice.line("refuse")], [], system, must=must)
    if intent in ("order_status", "refund"):
        return _fit(voice, mention, [_order_sentence(voice, intent, f, subject)], [], system)
    v = _slots(voice, f, subject, system)
    if intent == "pitch":
        body = voice.line("pitch", **v) if v["price"] else voice.line("pitch_plain", **v)
    else:
        body = _fact_sentence(voice, intent, f, v, set())
        if intent in beyond:  # after the facts: cut for length, it goes first
            body = body + voice.lines.sentence_join + voice.line("beyond")
    tails = _deal_tails(voice, f, v, _said(body), flash_said=bool(f.get("flash_sale")) and intent in ("price", "pitch")) \
        if wants("promo") and intent in ("price", "stock", "promotion", "pitch") else []
    if wants("hype"):
        body += voice.lines.sentence_join + voice.line("hype")
    if featured and featured != subject and intent != "pitch" and wants("featured") and not mention:
        # The featured tail may be said only with the featured product's own disclosures,
        # and only to the room at large: a viewer waiting for an answer is not pitched to.
        extra = [d for d in _disclosures(system, featured_facts, lang) if d not in must] if wants("disclose") else []
        tails.append(voice.line("pitch_plain", name=_product(voice, featured, system, featured)[0]))
        must = must + extra
    return _fit(voice, mention, [body], tails, system, must=must)


def _compose_many(voice: Voice, asks: list[tuple[str, str, dict]], mention: str, system: str, wants,
                  beyond: frozenset[str] = frozenset(), after: list[str] = (), owed: list[str] = ()) -> str:
    """The reply to a request of several asks (``(intent, subject, looked-up facts)``):
    one sentence per ask, each fact said once, the asker addressed once, the deal of
    the first product asked about for its price, the sentences ``after`` (what could not
    be checked), the slogan, and the disclosures of every product named (and ``owed``)."""
    lang = voice.lines.language
    mention = _greeted(mention if wants("mention") else "", system)
    sentences: list[str] = []
    answers: set[str] = set()  # each answer's sentence, said once (with or without the "not listed" tail)
    deal = None
    must: list[str] = list(owed) if wants("disclose") else []
    said: set[str] = set()
    orders: set[str] = set()
    for intent, subject, f in asks:
        if wants("disclose"):  # every product of the request, answered here or in another reply
            must += [d for d in _disclosures(system, f, lang) if d not in must]
        if intent == "disclose":
            continue
        if intent in ("order_status", "refund"):
            if subject in orders:  # one order's status is said once, whichever way it was asked
                continue
            orders.add(subject)
            sentence = _order_sentence(voice, intent, f, subject)
        else:
            v = _slots(voice, f, subject, system)
            sentence = _fact_sentence(voice, intent, f, v, said)
            if deal is None and wants("promo") and intent in ("price", "stock", "promotion"):
                deal = (f, v)
        facts = _said(sentence)
        if sentence and sentence not in answers and not (facts and facts <= said):  # nothing new: not said again
            answers.add(sentence)
            said |= facts
            if intent in beyond:  # what no listing says, said so once, after what it does say
                sentence = sentence + voice.lines.sentence_join + voice.line("beyond")
                beyond = frozenset()
            sentences.append(sentence)
    tails = _deal_tails(voice, *deal, said, flash_said=False) if deal else []
    return _fit(voice, mention, [*sentences, *after], tails, system, must=must)


def _slots(voice: Voice, f: dict, subject: str, system: str) -> dict:
    L = voice.lines
    cur = f.get("currency", "USD" if L.language == "en" else "CNY")
    pid = f.get("product_id") or f.get("id") or subject
    name, agree = _product(voice, pid, system, f.get("name") or f.get("product_name") or subject)
    coupons = [c for c in f.get("coupons", []) if not c.get("products") or f.get("product_id") in c["products"]]
    return {"name": name, **agree, "currency": cur, "price": L.money(f["price"], cur) if "price" in f else "",
            "codes": L.listed(c["code"] for c in coupons), "code_list": [c["code"] for c in coupons],
            "n_codes": len(coupons)}


def _deal_tails(voice: Voice, f: dict, v: dict, said: set[str], flash_said: bool) -> list[str]:
    """The active deal, unless the answer already said it: what the coupon takes the
    price to (a code that does not lower this price, a spend-X-save-Y under its
    threshold, is no deal), else the codes on today; and a flash sale."""
    tails = []
    after = f.get("price_after_best_coupon")
    codes_said = any(c in said for c in v["code_list"])
    if v["codes"] and after is not None and after != f.get("price"):
        price = voice.lines.money(after, v["currency"])
        if price not in said:
            key = "coupon_price" if codes_said else ("coupon_tail_many" if v["n_codes"] > 1 else "coupon_tail")
            tails.append(voice.line(key, **{**v, "price": price}))
    elif v["codes"] and not codes_said:
        tails.append(voice.line("coupon_note_many" if v["n_codes"] > 1 else "coupon_note", **v))
    if f.get("flash_sale") and not flash_said:
        tails.append(voice.line("flash_tail"))
    return tails


def _order_sentence(voice: Voice, intent: str, f: dict, subject: str) -> str:
    L = voice.lines
    status = f.get("status", "?")
    eta = ""
    if f.get("eta_days") is not None and status not in L.no_eta_statuses:
        days = int(f["eta_days"])
        eta = voice.line("eta_today") if days == 0 else voice.line("eta", days=L.count("day", days))
    if intent == "refund" and status not in L.refund_statuses:  # "where is my refund?" of an order with none
        intent = "refund_none"
    return voice.line(intent, order=f.get("id", subject), status=L.status(status), eta=eta)


def _fact_sentence(voice: Voice, intent: str, f: dict, v: dict, said: set[str]) -> str:
    """The sentence that answers ``intent``; ``said``: the amounts and codes the reply
    already stated (a price is not said twice)."""
    L = voice.lines
    line = voice.line
    if intent in ("price", "pitch"):
        return line("flash" if f.get("flash_sale") else "price", **v)
    if intent == "stock":
        return line("sold_out" if f.get("sold_out") else "stock", stock=f.get("stock"), **v)
    if intent == "promotion":
        if v["codes"]:
            return line("promotion", **v)
        if f.get("flash_sale"):
            return line("flash", **v)
        return line("no_promotion_short" if not v["price"] or v["price"] in said else "no_promotion", **v)
    if intent == "shipping":
        s = f.get("shipping", {})
        fee = line("free_shipping") if not s.get("fee") else line("shipping_fee", fee=L.money(s["fee"], v["currency"]))
        return line("shipping", hours=L.count("hour", s.get("ships_within_hours")), fee=fee, **v)
    if intent == "returns":
        r = f.get("returns", {})
        days = L.count("day", r.get("days"))
        if r.get("condition"):
            return line("returns", days=days, value=_clean(r["condition"]), **v)
        return line("returns_plain", days=days, **v)
    if intent == "damaged":  # the return window holds; an "unopened" condition cannot
        return line("damaged", days=L.count("day", f.get("returns", {}).get("days")), **v)
    if intent == "warranty":
        if f.get("warranty_months") is None:
            return line("no_warranty", days=L.count("day", f.get("returns", {}).get("days")), **v)
        return line("warranty", months=L.count("month", f["warranty_months"]), **v)
    if intent == "pregnancy":
        return line("pregnancy_safe" if f.get("pregnancy_safe") else "pregnancy_unsafe", **v)
    if intent == "allergens":
        return line("allergens", list=L.listed(f["allergens"]), **v) if f.get("allergens") else line("no_allergens", **v)
    if intent == "shelf_life":  # a hoodie or a speaker does not expire
        if f.get("shelf_life_months") is None:
            return line("no_shelf_life", **v)
        return line("shelf_life", months=L.count("month", f["shelf_life_months"]), **v)
    if intent == "battery" and f.get("battery_hours") is not None:
        return line("battery", hours=L.count("hour", float(f["battery_hours"])), **v)
    field = {"size": "sizes", "skin_type": "skin_types"}.get(intent, intent)
    value = f.get(field)
    if isinstance(value, dict):
        return line(intent, list=L.listed(f"{k} {_clean(x)}" for k, x in value.items()), **v)
    if isinstance(value, list):
        return line(intent, list=L.listed(_clean(x) for x in value), **v)
    if value is not None and intent in L.lines:
        return line(intent, value=_clean(value), **v)
    return line("price", **v) if v["price"] else line("greet")


def _disclosures(system: str, f: dict, lang: str) -> list[str]:
    """The disclosure forms the rules in force owe for a product with facts ``f``."""
    out = []
    for when, forms in disclosure_rules(system, lang):
        applies = (when == "sponsored" and f.get("sponsored")) or (when == "health_food" and f.get("health_food")) \
            or when == f.get("category")
        if forms and applies and forms[0] not in out:
            out.append(forms[0])
    return out


def _greeted(mention: str, system: str) -> str:
    """The mention, followed by the greeting the harness asks every reply to begin with."""
    greeting = terms(system).greeting
    return f"{mention} {greeting}".strip() if greeting else mention


def _as_said(voice: Voice, form: str) -> str:
    """A disclosure as the reply says it: a tag ("#ad", 广告) or a sentence of its own."""
    L = voice.lines
    if form.startswith("#") or len(form) <= 4:
        return L.disclosure_tag.format(form=form)
    return L.disclosure_sentence.format(form=form[:1].upper() + form[1:] if L.capitalize else form)


def _fit(voice: Voice, mention: str, sentences: list[str], tails: list[str], system: str,
         must: list[str] = ()) -> str:
    """The reply: ``mention`` (with the greeting), the ``sentences`` (cut at a whole
    sentence to fit the length limit), as many ``tails`` as fit, the slogan, the
    disclosures ``must`` and the sign-off the harness asks every reply to end with."""
    L = voice.lines
    join = L.sentence_join
    t = terms(system)
    limit = t.limit
    end = "".join(_as_said(voice, d) for d in must)
    if t.slogan:  # said when it fits: the answers come first (it is owed every few replies)
        tails = [*tails, _ended(t.slogan, L.language)]
    if t.sign_off:
        end += " " + t.sign_off
    if t.greeting and t.greeting not in mention:  # a reply to the room begins with it too
        mention = f"{mention} {t.greeting}".strip()
    head = mention + " " if mention else ""
    body = join.join(s.strip() for s in sentences if s.strip())
    if L.capitalize:
        body = _SENTENCE_START.sub(lambda m: m.group(1) + m.group(2).upper(), body)
    out = head + _cut(body, max(0, limit - len(head) - len(end)))
    for tail in tails:
        if len(out) + len(join) + len(tail) + len(end) <= limit:
            out += join + tail
    return (out + end).strip()


def _ended(text: str, lang: str) -> str:
    """``text`` ending with a stop (a slogan said as a sentence)."""
    return text if text[-1:] in ".!?。！？" else text + ("." if lang == "en" else "。")


def _cut(text: str, room: int) -> str:
    """``text`` within ``room`` characters, ended at a whole sentence (or word) when it
    must be cut: a cut mid-clause would run into the disclosure after it ("do not #ad")."""
    if len(text) <= room:
        return text
    cut = text[:room]
    stop = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("。"), cut.rfind("！"), cut.rfind("？"))
    if stop > 0:
        return cut[: stop + 1]
    if " " in cut.strip():
        words = cut.rstrip().rsplit(" ", 1)[0].rstrip(",;:").split(" ")
        while len(words) > 1 and words[-1].lower() in ("and", "or", "with", "a", "the"):
            words.pop()  # a list cut short ends at an item, not at "and."
        return " ".join(words).rstrip(",;:") + "."
    return cut[: max(0, room - 1)] + ("。" if cut and not cut.isascii() else ".")
