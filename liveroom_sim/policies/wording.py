"""How the built-in hosts word a reply from looked-up facts, within the harness's
length limit, greeting, sign-off, slogan and disclosures (shared by the scripted and
learned hosts)."""

from __future__ import annotations

from liveroom_sim.harness.prompt import _LABELS
from liveroom_sim.policies.reading import _GREETING, _LIMIT, _QUOTED, _SIGN_OFF, _SLOGAN, _lineup, _short_name
from liveroom_sim.world.phrasebook import Phrasebook


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
        if intent == "disclose":  # a product of the request answered in another reply
            if wants("disclose"):
                must += [d for d in _disclosures(system, f, lang) if d not in must]
            continue
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
    if intent == "shelf_life":  # a hoodie or a speaker does not expire
        if f.get("shelf_life_months") is None:
            return h["no_shelf_life"].format(**v)
        return h["shelf_life"].format(months=f["shelf_life_months"], **v)
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
    out = _cut(text, max(0, limit - len(required) - len(end))) + required
    for tail in tails:
        if tail not in must and len(out) + len(tail) + len(end) <= limit:
            out += tail
    return out + end


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
        return cut.rstrip().rsplit(" ", 1)[0].rstrip(",;:") + "."
    return cut[: max(0, room - 1)] + ("。" if cut and not cut.isascii() else ".")
