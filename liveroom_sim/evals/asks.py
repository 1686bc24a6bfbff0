"""What each ask of a case expects, derived from the ask's kind (issue 28, item 1).

A viewer's ask is one of three forms (``asks.yaml`` beside this module says which, per
language and intent, by the wording of the message):

- **yes/no** ("still in stock?", "does it come in pink?", "dairy free?", 包邮吗): answered
  by the right yes or no, which a catalog test (:data:`TESTS`) gives for the product as of
  now; a fact that backs it ("17 left", "only unopened") is welcome, never required.
- **unknown** ("what bluetooth codec does it use", "true to size?", 运费谁出): the catalog
  holds no answer; the honest reply says the catalog does not say.
- **facts** (everything else: "how much is it", "what sizes"): the facts the reward's
  ground truth asks for (:func:`liveroom_sim.world.facts.required_facts`), narrowed to
  what is asked ("bluetooth version?": that row of the spec sheet; "when does it ship?":
  the dispatch time, not the fee); an order's status, its arrival welcome (none owed for
  an order already delivered).

A yes/no question that also asks for the list ("ingredient list pls, any fragrance?")
expects both. An ask the catalog answers only in passing (a serum's concentration, said
in its pitch) is ``skip``: no case.

A test that cannot decide from the catalog (a blend asked "is it cotton?", storage that
says "refrigerate after opening") gives ``None``: the ask has no derivable answer and the
generator does not make a case of it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml

from liveroom_sim.world.datafile import Frozen

DATA = Path(__file__).with_name("asks.yaml")


class Answer(Frozen):
    """What one ask of a case expects. ``facts``: the labels a ``facts`` answer states in
    full; ``backing``: labels welcome beside the answer (the facts that back a yes or no,
    an order's arrival beside its status), never required."""

    intent: str
    form: Literal["facts", "yes_no", "unknown"]
    yes: bool | None = None        # yes_no: the right answer
    test: str | None = None        # yes_no: the catalog test that decides it
    concept: str | None = None     # yes_no: the words that say it (asks.yaml: words.LANG.concepts)
    slot: str | None = None        # yes_no: the word of the question the test reads (pink, L, android)
    facts: tuple[str, ...] = ()
    backing: tuple[str, ...] = ()


class Underivable(ValueError):
    """An ask whose answer the catalog does not decide: no case is made of it."""


@lru_cache(maxsize=1)
def table() -> dict:
    """``asks.yaml``, its patterns compiled."""
    raw = yaml.safe_load(DATA.read_text(encoding="utf-8"))
    for language, intents in raw["asks"].items():
        for intent, forms in intents.items():
            for form in forms:
                form["re"] = re.compile(form["text"])
                if "test" in form and form["test"] not in TESTS:
                    raise ValueError(f"{DATA}: asks.{language}.{intent}: unknown test {form['test']!r}")
                if "concept" in form and form["concept"] not in raw["words"][language]["concepts"]:
                    raise ValueError(f"{DATA}: asks.{language}.{intent}: unknown concept {form['concept']!r}")
    return raw


def _low(xs) -> str:
    return " ".join(str(x) for x in xs).lower()


_OPENED_ONLY = ("unopened", "seal", "未拆封", "塑封完好")
_COLOR_ZH = {"黑色": "黑", "白色": "白", "粉色": "粉", "灰色": "灰", "米色": "米"}
_SKIN = {"oily": ("oily",), "dry": ("dry",), "sensitive": ("sensitive",), "combination": ("combination",),
         "油皮": ("油性",), "干皮": ("干性",), "敏感肌": ("敏感性",), "混油皮": ("混合性",)}
_DEVICE = {"iphone": ("ios", "iphone"), "android": ("android",), "my laptop": ("laptop", "windows", "macos"),
           "ipad": ("ipados", "ipad", "tablet"), "安卓": ("安卓", "android"), "苹果": ("ios", "iphone"),
           "笔记本": ("笔记本", "电脑", "windows", "macos"), "平板": ("平板", "ipados")}
# A tablet runs a phone's system (iPadOS grew out of iOS), but a watch that pairs with an
# iPhone does not pair with an iPad: a list of phone systems leaves a tablet undecided. 苹果
# may be a Mac or an iPad as well as an iPhone: a list with those but not iOS leaves it undecided.
_KIN_SYSTEMS = {"ipad": ("ios",), "平板": ("ios", "安卓", "android"), "苹果": ("macos", "ipados", "mac")}
#: A compatibility entry that names a port only: it decides no device the list leaves out.
_BARE_PORTS = frozenset({"usb-c", "usb c", "type-c", "usb"})


def _cotton(p, _m, _s):
    material = p.material.lower()
    if "cotton" not in material and "棉" not in material:
        return False
    pure = re.fullmatch(r"(100%\s*)?(organic\s+)?(纯)?(cotton|棉)[\s\w]*", material.strip()) is not None
    return True if pure else None  # a blend is cotton in part: no plain yes or no


def _machine(p, _m, _s):
    care = p.care.lower()
    if "不可机洗" in care or "do not machine" in care:
        return False
    if "machine wash" in care or "机洗" in care or "gentle cycle" in care:
        return True
    return False if any(w in care for w in ("hand wash", "spot clean", "dry clean", "手洗", "干洗")) else None


def _dryer(p, _m, _s):
    care = p.care.lower()
    if "do not tumble" in care or "不可烘干" in care:
        return False
    if "tumble dry" in care:
        return True
    return False if any(w in care for w in ("hang dry", "line dry", "dry flat", "晾干")) else None


def _refrigerate(p, _m, _s):
    s = p.storage.lower()
    if "do not refrigerate" in s or "不宜冷藏" in s:
        return False
    if "refrigerate" in s or "冷藏" in s:
        return None  # "after opening": neither a plain yes nor a plain no
    return False


def _works_with(p, _m, slot):
    listed = _low(p.compatibility)
    if any(w in listed for w in _DEVICE.get(slot, (slot,))):
        return True
    if any(w in listed for w in _KIN_SYSTEMS.get(slot, ())):
        return None
    if any(c.strip().lower() in _BARE_PORTS for c in p.compatibility):
        return None  # "USB-C" alone: any device with the port, a laptop among them, or not
    # A list of phone systems that leaves the device out says no; a port or a size says nothing.
    return False if any(w in listed for w in ("ios", "android", "windows", "安卓", "macos")) else None


def _has_color(p, _m, slot):
    key = _COLOR_ZH.get(slot, slot).lower()
    return any(key in c.lower() for c in p.colors)


#: Catalog tests of yes/no asks: (product, market, slot) -> True, False or None (undecided).
TESTS = {
    "in_stock": lambda p, m, s: m.stock[p.id] > 0,
    "sold_out": lambda p, m, s: m.stock[p.id] == 0,
    "has_flash": lambda p, m, s: p.id in m.flash,
    "has_coupon": lambda p, m, s: bool(m.coupons_for(p.id)),
    "has_deal": lambda p, m, s: bool(m.coupons_for(p.id)) or p.id in m.flash,
    # a deal of any kind: yes with a coupon or a flash sale, no without one only when the
    # price is the list price (a standing markdown is a deal to some and not to others)
    "any_deal": lambda p, m, s: True if m.coupons_for(p.id) or p.id in m.flash
    else (False if m.prices[p.id] >= p.list_price else None),
    "free_shipping": lambda p, m, s: p.shipping.fee == 0,
    "ships_next_day": lambda p, m, s: True if p.shipping.ships_within_hours <= 24 else None,
    "returnable": lambda p, m, s: p.returns.days > 0,
    "seven_day": lambda p, m, s: p.returns.days >= 7,
    "returns_unconditional": lambda p, m, s: p.returns.days > 0 and not p.returns.condition.strip(),
    "returnable_opened": lambda p, m, s: (False if p.returns.days == 0 or any(w in p.returns.condition.lower()
                                                                             for w in _OPENED_ONLY) else None),
    "has_warranty": lambda p, m, s: bool(p.warranty_months),
    "has_size": lambda p, m, s: s.upper() in {x.upper() for x in p.sizes},
    "has_color": _has_color,
    "cotton": _cotton,
    "machine_washable": _machine,
    "dryer_safe": _dryer,
    "fragrance_or_alcohol": lambda p, m, s: any(w in _low(p.ingredients) for w in ("fragrance", "parfum", "alcohol")),
    "alcohol": lambda p, m, s: any(w in _low(p.ingredients) for w in ("alcohol", "酒精", "乙醇")),
    "fragrance": lambda p, m, s: any(w in _low(p.ingredients) for w in ("fragrance", "parfum", "香精", "香料")),
    "skin_ok": lambda p, m, s: any(w in _low(p.skin_types) for w in _SKIN.get(s, (s,))),
    "pregnancy_safe": lambda p, m, s: bool(p.pregnancy_safe),
    "dairy_free": lambda p, m, s: not any(w in _low(p.allergens) for w in ("milk", "dairy", "牛奶", "乳")),
    "peanut_free": lambda p, m, s: not any(w in _low(p.allergens) for w in ("peanut", "花生")),
    "nut_free": lambda p, m, s: not any(w in _low(p.allergens) for w in ("peanut", "tree nut", "花生", "坚果")),
    "has_peanut": lambda p, m, s: any(w in _low(p.allergens) for w in ("peanut", "花生")),
    "refrigerate": _refrigerate,
    "heat_ok": lambda p, m, s: False if any(w in p.storage.lower() for w in ("cool", "below", "away from")) else None,
    "works_with": _works_with,
}


def form_of(text: str, intent: str, language: str) -> dict | None:
    """The first form of ``asks.yaml`` for ``intent`` whose pattern matches ``text``."""
    for form in table()["asks"].get(language, {}).get(intent, ()):
        if form["re"].search(text.lower()):
            return form
    return None


def _facts_asked_too(form: dict, text: str) -> bool:
    """A form's ``with_facts`` pattern matches the question: it asks for the intent's facts
    as well ("起球吗 什么材质", "是纯棉的吗 什么面料")."""
    pattern = form.get("with_facts")
    return isinstance(pattern, str) and pattern != "if_yes" and re.search(pattern, text.lower()) is not None


def expected(text: str, intent: str, product, market, language: str, facts: tuple) -> Answer:
    """What an ask expects (see the module docstring); ``facts``: the reward's ground truth
    for it (:class:`~liveroom_sim.world.facts.Fact`, as of now).

    Raises:
        Underivable: the catalog does not decide the ask's yes or no.
    """
    labels = tuple(f.label for f in facts)
    form = form_of(text, intent, language)
    if intent == "order_status":
        # The status answers; its arrival is welcome (a delivered order's "0 days" is none).
        status = tuple(f.label for f in facts if f.key != "eta")
        eta = tuple(f.label for f in facts if f.key == "eta" and f.number)
        return Answer(intent=intent, form="facts", facts=status, backing=eta)
    if intent in ("shipping", "price") and product is not None and market.stock.get(product.id, 0) == 0:
        # "how fast does it ship?", "how much, buying now!" of a sold-out product: the answer
        # a buyer needs is that it is sold out, which the price or the dispatch time is not.
        raise Underivable(f"{intent}: {product.id} is sold out")
    if form is None:
        return Answer(intent=intent, form="facts", facts=labels)
    if form.get("skip"):
        raise Underivable(f"{intent}: {form['text']!r} asks what the catalog says only in passing, if at all")
    if form.get("unknown") and form.get("one_size") and len(getattr(product, "sizes", ())) == 1:
        # "how do sizes run?" of a one-size cap: its one size is the whole answer
        return Answer(intent=intent, form="facts", facts=labels)
    if form.get("unknown"):
        wants = _facts_asked_too(form, text)
        return Answer(intent=intent, form="unknown", backing=() if wants else labels, facts=labels if wants else ())
    if "facts" in form:
        if intent == "specs":  # a row of the spec sheet, by its key's words
            rows = tuple(str(v) for k, v in product.specs.items() if any(w in k.lower() for w in form["facts"]))
        else:  # the facts of these keys (liveroom_sim.world.facts: ships_within, shipping_fee...)
            rows = tuple(f.label for f in facts if f.key in form["facts"])
        if not rows:
            raise Underivable(f"{intent}: the catalog has no {form['facts']} for {product.id}")
        return Answer(intent=intent, form="facts", facts=rows)
    m = form["re"].search(text.lower())
    slot = m.groupdict().get("slot") if m else None
    verdict = TESTS[form["test"]](product, market, slot)
    if verdict is None:
        raise Underivable(f"{intent}: the catalog does not decide {form['test']} for {product.id}")
    # ``with_facts``: the question asks for the list too ("ingredient list? any fragrance?").
    wants = form.get("with_facts") is True or (form.get("with_facts") == "if_yes" and bool(verdict)) \
        or _facts_asked_too(form, text) or re.search(table()["words"][language]["specifics"], text.lower()) is not None
    return Answer(intent=intent, form="yes_no", yes=bool(verdict), test=form["test"], concept=form["concept"],
                  slot=slot, backing=labels, facts=labels if wants else ())
