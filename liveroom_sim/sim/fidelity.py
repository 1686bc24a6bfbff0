"""Is a viewer message one a person would write? Checks of one message, by kind.

The reading is deliberately simple and shared: the phrasebook's ``cues`` say which
intents a text asks (the same cues the scripted host reads), after the words naming the
product are taken out. A message passes when

- ``grounded``: every fact ask has ground truth in the catalog as of when it was asked,
  about a product (or order) that exists, of a kind the product can be asked;
- ``refers``: the text names the product it asks about (a name or alias) or, for the
  product on stage, clearly points at it ("this serum", 这款精华); an order ask names
  the order;
- ``asks``: the text reads as each of its asks (a cue of every asked intent is found),
  and chat that asks nothing reads as asking nothing;
- ``category``: no cue of an intent that does not fit the product ("doesnt fit" about
  kale chips);
- ``persona``: the text is in the room's language and keeps the viewer's traits (a
  gift for "my mom" is not for "my bf" a minute later);
- ``repeat``: "again", "asked twice", 问第三遍了 only from a viewer who was ignored.

:func:`check_text` runs the wording checks; the ChatWriter uses it to keep an LLM's
rewording only when it still asks the same thing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from liveroom_sim.world.facts import INTENT_CATEGORIES, intent_fits
from liveroom_sim.world.personas import FACT_INTENTS
from liveroom_sim.world.text import contains, cue_pattern, normalize, phrase_pattern

#: The checks, in the order the fidelity table lists them.
CHECKS = ("grounded", "refers", "asks", "category", "persona", "repeat")
_FACTS = frozenset(FACT_INTENTS)
_SOCIAL = ("greet", "chat", "troll")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class CheckResults:
    """The checks a message was put to, and why any failed: ``{check: reason or ""}``."""

    results: dict[str, str]

    @property
    def ok(self) -> bool:
        return not any(self.results.values())

    def failed(self) -> dict[str, str]:
        return {k: v for k, v in self.results.items() if v}


def read_intents(text: str, book, strip: tuple[str, ...] = ()) -> set[str]:
    """Every intent whose cue occurs in ``text`` once the phrases ``strip`` (the words
    naming products) are taken out."""
    norm = normalize(text)
    for phrase in sorted(strip, key=len, reverse=True):
        if phrase:
            norm = phrase_pattern(phrase).sub(" ", norm)  # whole words: "tea" is not in "team"
    return {intent for intent, cues in book.cues.items() if any(cue_pattern(c).search(norm) for c in cues)}


def product_words(catalog, ids) -> tuple[str, ...]:
    """Words that name the products ``ids``: names, aliases, brands and kind nouns."""
    out: list[str] = []
    for pid in ids:
        p = catalog.by_id.get(pid)
        if p is not None:
            out += [*p.names, p.brand, p.kind_noun]
    return tuple(out)


def refers(text: str, product, featured: str, book, catalog=None) -> bool:
    """Whether ``text`` names ``product`` or, when it is on stage, points at it ("this
    serum", "link 3", "the sage one") or names no product at all ("price?": the one on
    stage; known only with the ``catalog``)."""
    norm = normalize(text)
    if any(contains(norm, n) for n in product.names):
        return True
    if product.id != featured:
        return False
    if catalog is not None:
        return referred_product(text, catalog, featured, book) == product.id
    return _points_at(norm, product, book)


def referred_product(text: str, catalog, featured: str, book) -> str | None:
    """The product ``text`` asks about, as a reader of the room takes it: the one whose
    name or alias it holds (the longest found), else the one whose link number it gives
    ("link 3", 3号链接: the lineup's order, from 1), else the product on stage when the
    text points at it ("this serum", "the sage one") or names none (None when it points
    at one product and names another's kind).

    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> w = load_spec(ENVS_DIR / "LiveRoom-v0.yaml")
    >>> c, book = w.catalog, w.phrasebook
    >>> [referred_product(t, c, "sk-serum-01", book) for t in ("price on the fleece hoodie?", "link 1 how much", "price??")]
    ['ap-hoodie-01', 'sk-cleanser-01', 'sk-serum-01']
    """
    norm = normalize(text)
    best, found = 0, None
    for p in catalog.products:
        for n in p.names:
            if len(n) > best and contains(norm, n):
                best, found = len(n), p.id
    if found is not None:
        return found
    ids = list(catalog.by_id)
    for pattern in book.chat.link_patterns:
        m = pattern.search(norm)
        if m and 1 <= int(m.group(1)) <= len(ids):
            return ids[int(m.group(1)) - 1]
    on_stage = catalog.by_id.get(featured)
    if on_stage is None:
        return None
    if _points_at(norm, on_stage, book):
        return featured
    others = {p.kind_noun for p in catalog.products if p.kind_noun != on_stage.kind_noun}
    return None if any(contains(norm, k) for k in others) else featured


def _points_at(norm: str, product, book) -> bool:
    """Whether normalised text points at ``product`` as the one on stage ("this serum",
    "the sage one")."""
    kind = product.kind_noun
    forms = [t.text.format(kind=kind, brand=product.brand) for t in book.references.featured]
    forms += [f.replace("this ", "these ") for f in forms]
    colors = getattr(product, "colors", None) or ()
    forms += [t.text.format(color=c, kind=kind) for t in book.chat.color for c in colors]
    return any(contains(norm, f) for f in forms)


def check_text(text: str, msg, market, book, featured: str | None = None, draft: str | None = None) -> CheckResults:
    """The wording checks (``refers``, ``asks``, ``category``) of ``text`` as the words
    of ``msg``'s asks. ``featured``: the product on stage when it was written (default:
    now). ``draft``: the words ``text`` rewords; a question it reads that neither the
    asks nor the draft hold fails ``asks`` ("LR-10251 what colors are there" for an
    order chase keeps the order and asks something else)."""
    catalog = market.catalog
    featured = featured if featured is not None else market.featured
    results = dict.fromkeys(("refers", "asks", "category"), "")
    asks = msg.asks
    fact_asks = [a for a in asks if a.intent in _FACTS]
    ids = {a.product for a in asks if a.product} | {catalog.by_id[featured].id}
    # The order id stays: "LR-10234" is how a reader knows an order is asked about.
    words = product_words(catalog, ids)
    found = read_intents(text, book, words)
    for a in fact_asks:
        if a.order:
            if a.order.lower() not in text.lower():
                results["refers"] = f"does not name order {a.order}"
        elif a.product and not refers(text, catalog.by_id[a.product], featured, book, catalog):
            results["refers"] = f"does not name or point at {a.product}"
        if a.intent not in found and not results["asks"]:
            results["asks"] = f"reads as {sorted(found) or 'nothing'}, not as {a.intent}"
    if draft is not None and not results["asks"]:
        extra = (found & _FACTS) - {a.intent for a in asks} - read_intents(draft, book, words)
        if extra:
            results["asks"] = f"also reads as {sorted(extra)}"
    if msg.intent in _SOCIAL and found & _FACTS:
        results["asks"] = f"chat reads as a question ({sorted(found & _FACTS)})"
    if msg.intent in ("bait", "inject") and not found & {"bait", "inject"}:
        results["asks"] = "bait does not read as one"
    product = catalog.by_id.get(msg.product) if msg.product else None
    if product is not None and msg.intent in _FACTS:
        unfit = sorted(i for i in found if i in INTENT_CATEGORIES and not intent_fits(i, product))
        if unfit:
            results["category"] = f"asks {unfit} of a {product.category} product"
    return CheckResults(results)


def check_message(msg, market, book, language: str) -> CheckResults:
    """Every check of one posted message (see the module docstring), against the
    product on stage and the viewer's ignored questions when it was written."""
    catalog = market.catalog
    results = dict.fromkeys(CHECKS, "")
    for a in msg.asks:
        if a.intent not in _FACTS:
            continue
        if a.order is not None:
            if a.order not in {o.id for o in catalog.orders}:
                results["grounded"] = f"order {a.order} not in the catalog"
        elif a.product not in catalog.by_id:
            results["grounded"] = f"product {a.product} not in the catalog"
        elif not intent_fits(a.intent, catalog.by_id[a.product]):
            results["grounded"] = f"{a.intent} cannot be asked of {a.product}"
        if not a.truth:
            results["grounded"] = f"{a.intent} has no ground truth"
    if msg.intent in ("complaint", "follow_up"):
        results.pop("refers"), results.pop("asks"), results.pop("category")
    else:
        results.update(check_text(msg.text, msg, market, book, msg.featured or None).results)
    text = msg.text
    # A line of no letters ("🧧🧧🧧", "1111" to join a draw) is written in every language.
    if any(ch.isalpha() for ch in text) and (language == "zh") != bool(_CJK.search(text)):
        results["persona"] = f"not written in {language}"
    voice = msg.viewer.voice
    if voice is not None:
        phr = msg.viewer.persona.phrasing.get(language)
        for trait, value in voice.traits.items():
            others = [v for v in (phr.traits.get(trait, ()) if phr else ()) if v != value and v not in value]
            clash = [v for v in others if contains(normalize(text), v)]
            if clash:
                results["persona"] = f"{trait} is {value!r} but the text says {clash[0]!r}"
    repeats = [m for m in book.repeat_markers if contains(normalize(text), m)]
    # A follow-up comes after an answer: its "again" asks the host to say it again.
    if repeats and msg.intent != "follow_up" and (msg.intent != "complaint" or msg.strikes == 0):
        results["repeat"] = f"says {repeats[0]!r} before being ignored"
    elif msg.intent == "complaint" and msg.strikes == 0:
        results["repeat"] = "complains before being ignored"
    return CheckResults(results)
