"""Ground truth: the catalog facts a correct answer to a question must contain, as of now.

A :class:`Fact` is either a number with a dimension (matched against the quantities in
a reply, in any written form) or a term (matched against the reply's words, in any of
its accepted forms). :func:`required_facts` is the single source of what each question
intent asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from liveroom_sim.world.derived import Same
from liveroom_sim.world.market import Market
from liveroom_sim.world.text import Quantity, normalize_phrase, phrase_pattern, whole_words

_LEADING_AMOUNT = re.compile(r"^[\d.%\s]+")
#: A negation just before a phrase ("not sold out", "no peanuts", 没有售罄, 不含花生, 不可机洗) ...
NEGATION = re.compile(
    r"(?:\b(?:not|no|never|isn't|aren't|doesn't|don't|hasn't|haven't|wasn't|weren't|didn't|won't|without|zero|nor)\b"
    r"(?:\s+\w+)?(?:\s+(?:or|nor))?\s*"  # "no coupon or flash sale" negates both
    r"|(?:不(?:含有?|是|可以?|能|要|宜|建议|适合|支持|用|需要?|会)?|没有|没|未|无需?|无须|非|请?勿|切勿|禁止|严禁)\s*)$")
#: ... or just after it ("peanut-free", "free of gluten", 优惠券目前没有; not 包邮没问题, 七天无理由).
NEGATED_AFTER = re.compile(r"^\s*(?:-?free\b|free of\b"
                           r"|(?:目前|暂时|现在|这次|今天|今晚|还)?[也都]?(?:没有|没|无)"
                           r"(?!问题|关系|事|门槛|限制|影响|得说|毛病|理由|忧|障碍|所谓|几|多少))")


def occurrences(norm: str, phrase: str):
    """Start and end of each whole-word occurrence of ``phrase`` in normalised text, and
    whether that occurrence is negated: before it, just after it, or (of a phrase that
    says "X is Y") at its verb: "shipping isn't free", "shipping's not free".

    >>> [neg for _, _, neg in occurrences("shipping isn't free, sorry", "shipping is free")]
    [True]
    """
    # The phrase is folded as the reply was (full-width commas in a care label are ASCII
    # in the normalised reply), so the quick test cannot miss what the pattern finds.
    if not phrase:
        return
    if normalize_phrase(phrase) in norm:
        for m in phrase_pattern(phrase).finditer(norm):
            neg = bool(NEGATION.search(norm[max(0, m.start() - 16):m.start()])) or \
                bool(NEGATED_AFTER.match(norm[m.end():m.end() + 9]))
            yield m.start(), m.end(), neg
    denied = denied_copula(phrase)
    if denied is not None and any(start in norm for start in denied[0]):
        for m in denied[1].finditer(norm):
            yield m.start(), m.end(), True


#: The verb of a phrase that says "X is Y", and the ways it is negated.
_COPULA = re.compile(r" is |'s ")
_NOTS = (" is not ", " isn't ", "'s not ", " is never ")


@lru_cache(maxsize=1024)
def denied_copula(phrase: str) -> tuple[tuple[str, ...], re.Pattern] | None:
    """For a phrase "X is Y" ("shipping is free", "shipping's free"): the phrase's start
    as it is negated ("shipping isn't", "shipping is not", a text holding none of which
    does not deny it) and a pattern of it negated at the verb ("shipping isn't free");
    ``None`` for any other phrase."""
    text = normalize_phrase(phrase)
    m = _COPULA.search(text)
    if m is None or not text.isascii():
        return None
    subject, rest = text[:m.start()], text[m.end():]
    starts = tuple(subject + n.rstrip() for n in _NOTS)
    body = re.escape(subject) + "(?:" + "|".join(map(re.escape, _NOTS)) + ")" + re.escape(rest)
    return starts, re.compile(whole_words(text, body))


def affirms(norm: str, phrase: str) -> bool:
    """Whether normalised text says ``phrase`` without negating it.

    >>> affirms("it is not sold out", "sold out"), affirms("sorry, sold out", "sold out")
    (False, True)
    """
    return any(not neg for _, _, neg in occurrences(norm, phrase))


@dataclass(frozen=True, slots=True)
class Fact:
    """One fact a reply must state. ``number`` and ``dim`` for quantities, else ``forms``."""

    key: str
    label: str
    number: float | None = None
    dim: str | None = None
    forms: tuple[str, ...] = ()
    about: str | None = None  # the product (or order) the fact is of
    parts: tuple[str, ...] = ()  # a list's items ("70% wool", "30% nylon"): all said, in any words around them

    @property
    def tag(self) -> str:
        """What tells this fact from every other of a request (two asks about two
        products may share a label: both ship free, both cost 29)."""
        return f"{self.about or ''}|{self.key}|{self.label}"

    def stated_in(self, norm_reply: str, found: list[Quantity]) -> bool:
        """Whether the normalised reply (with its quantities ``found``) states this fact."""
        if self.number is not None:  # a number without its unit states nothing
            return any(abs(q.value - self.number) < 0.011 and q.dim == self.dim for q in found)
        if any(affirms(norm_reply, form) for form in self.forms):
            return True
        if any(said_loosely(norm_reply, form) for form in self.forms if _UNIT_AFTER_NUMBER.search(form)):
            return True
        if not self.parts:
            return False
        said = 0
        for part in self.parts:
            told = 1 if said_loosely(norm_reply, part) else told_in_other_words(norm_reply, part)
            if told < 0:
                return False  # "bleach is fine" of "do not bleach": the label told wrong
            said += told
        # A label of three or more instructions ("machine wash cold, tumble dry low, do not
        # bleach") is told when two in three of them are and none is contradicted, a
        # shorter list when all are.
        return said == len(self.parts) or len(self.parts) >= 3 and 3 * said >= 2 * len(self.parts)


def number(key: str, value: float, dim: str, label: str | None = None) -> Fact:
    return Fact(key, label or f"{value:g}", number=float(value), dim=dim)


def term(key: str, text: str, *extra: str) -> Fact:
    """A term fact accepting the text itself, the text without a leading amount
    ("100% cotton" -> "cotton"), the name before a parenthesis ("soy sauce (water,
    soybeans, wheat, salt)" -> "soy sauce") and any ``extra`` forms."""
    stripped = _LEADING_AMOUNT.sub("", text).strip()
    named = text.split("(")[0].strip() if "(" in text else ""
    forms = tuple(dict.fromkeys(f for f in (text, stripped, named, *extra) if f))
    parts = () if "(" in text else tuple(p.strip() for p in _ITEMS.split(text) if p.strip())
    return Fact(key, text, forms=forms, parts=parts if len(parts) > 1 else ())


#: A form with a unit after a number ("72 g"): read loosely too ("72g").
_UNIT_AFTER_NUMBER = re.compile(r"\d\s?[^\d\s.,]")
#: What separates the items of a listed fact ("70% wool, 30% nylon", "75%锦纶 25%氨纶",
#: "USB-A, 5 V"): a reply may list them with other separators ("70% wool and 30% nylon").
_ITEMS = re.compile(r"\s*[,，、;；/]\s*|\s+(?=\d)")


def said_loosely(norm: str, phrase: str) -> bool:
    """Whether normalised text says ``phrase``, not negated, with a number and its unit
    written together or apart ("72 g" as "72g", "75% 锦纶" as "75%锦纶", "10 in" as "10-in")."""
    if not all(t in norm for t in _loose_keys(phrase)):  # quick: most replies lack some word of it
        return False
    return any(not (NEGATION.search(norm[max(0, m.start() - 16):m.start()]) or NEGATED_AFTER.match(norm[m.end():m.end() + 9]))
               for m in _loose_pattern(phrase).finditer(norm))


#: Where a reply's clauses end, for reading a part of a listed fact in other words.
_CLAUSE_END = re.compile(r"[,.;:!?，。；：！？、\n]+|\s(?:and|but|then)\s|然后|并且|但是?")
#: The content of a clause: its numbers, its Latin words of three letters or more, its runs
#: of Chinese characters (read as pairs).
_CONTENT = re.compile(r"\d+(?:\.\d+)?|[a-z]{3,}|[\u4e00-\u9fff]+")
#: What makes an instruction a prohibition ("do not bleach", 不可拧干, 勿用柔顺剂): not content.
_PROHIBITS = re.compile(r"\b(?:not|no|never|without|avoid|skip|don't|do not)\b|千万(?:别|不要)|不(?:可以?|要|能|得|宜)?|请?勿|禁止|避免|别")


def told_in_other_words(norm: str, phrase: str) -> int:
    """1 when one clause of normalised text says ``phrase`` (one part of a listed fact: a
    care instruction, a storage step) in other words, -1 when one says the same content
    the other way round (a prohibition as a permission or the reverse), else 0. The
    content: the phrase's numbers, each of its Latin words give or take an ending
    ("washing", "washed"), half of its pairs of Chinese characters (密封保存 told as
    开封后密封). "skip the bleach" tells "do not bleach"; "wash warm" does not tell
    "wash cold"; "bleach is fine" contradicts it."""
    numbers, words, pairs, prohibits = _content(phrase)
    if not words and not pairs:
        return 0
    told = 0
    for clause in _clauses(norm):
        c_numbers, c_words, c_pairs, c_prohibits = _content(clause)
        if numbers <= c_numbers and words <= c_words and 2 * len(pairs & c_pairs) >= len(pairs):
            if prohibits != c_prohibits:
                return -1  # "bleach is fine" of "do not bleach", 开封后不用密封 of 开封后密封保存
            told = 1
    return told


@lru_cache(maxsize=256)
def _clauses(norm: str) -> tuple[str, ...]:
    return tuple(c for c in _CLAUSE_END.split(norm) if c.strip())


@lru_cache(maxsize=4096)
def _content(text: str) -> tuple[frozenset, frozenset, frozenset, bool]:
    """(numbers, Latin word stems, pairs of Chinese characters, whether it prohibits) of a clause."""
    numbers, words, pairs = set(), set(), set()
    folded = normalize_phrase(text)
    prohibits = bool(_PROHIBITS.search(folded))
    for unit in _CONTENT.findall(_PROHIBITS.sub(" ", folded) if prohibits else folded):
        if unit[0].isdigit():
            numbers.add(unit.rstrip("0").rstrip(".") if "." in unit else unit)
        elif unit.isascii():
            words.add(_stem(unit))
        else:
            pairs.update(unit[i:i + 2] for i in range(max(1, len(unit) - 1)))
    return frozenset(numbers), frozenset(words), frozenset(pairs), prohibits


def _stem(word: str) -> str:
    """A Latin word without a common ending: washing, washed, washes -> wash; dry, dried,
    dries -> dri; tumble, tumbled -> tumbl."""
    for end in ("ing", "ed", "es", "s"):
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[: -len(end)]
            break
    return word[:-1] if word.endswith("e") else word[:-1] + "i" if word.endswith("y") else word


@lru_cache(maxsize=4096)
def _loose_keys(phrase: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\d+|[^\W\d_]+", normalize_phrase(phrase)))


@lru_cache(maxsize=4096)
def _loose_pattern(phrase: str) -> re.Pattern[str]:
    p = normalize_phrase(phrase)
    body = re.sub(r"(?<=[\d%])(?:\\ )?(?=[^\d\s.,\\])", r"[\\s-]?", re.escape(p))  # a unit after a number, spaced or not
    return re.compile(whole_words(p, body))


#: Intents whose facts move with the market: they read what :func:`_market_state` gives.
MARKET_INTENTS = frozenset({"price", "stock", "promotion"})
#: The label of the fact that nothing is on offer for a product (a promotion ask's answer).
NO_PROMOTION = "no promotion"


def required_facts(intent: str, product_id: str | None, market: Market, words: dict[str, tuple[str, ...]],
                   order_id: str | None = None) -> tuple[Fact, ...]:
    """The facts a correct answer to ``intent`` about the product (or order) contains now.

    Args:
        intent: A fact intent (see :data:`liveroom_sim.world.personas.FACT_INTENTS`).
        product_id: The product asked about (``None`` for order questions).
        market: The market as of now.
        words: The language's fixed phrases (phrasebook ``fact_words``), e.g. "sold out".
        order_id: The order asked about, for ``order_status``.
    """
    # The facts read the product's (or order's) attributes, the words and, for a market
    # intent, the little of the market its state holds: kept on the catalog's base (a
    # drawn catalog differs from it only in prices and stock, which no attribute read
    # here is), by words, question and state. (A purchase changes the market, but rarely
    # what a question's answer is.)
    state = _market_state(intent, product_id, market) if intent in MARKET_INTENTS else None
    kept = market.catalog.base.facts
    key = (Same(words), intent, product_id, order_id, state)
    facts = kept.get(key)
    if facts is None:
        facts = kept.keep(key, _about(intent, product_id, market, words, order_id))
    return facts


def _market_state(intent: str, product_id: str, market: Market):
    """All that the facts of a market intent about ``product_id`` read of the market."""
    if intent == "price":
        return market.price(product_id)
    if intent == "stock":
        return market.stock[product_id]
    codes = tuple(c.code for c in market.coupons_for(product_id))  # promotion: the codes, else a flash price
    return codes, (market.price(product_id) if not codes and product_id in market.flash else None)


def _about(intent: str, product_id: str | None, market: Market, words: dict[str, tuple[str, ...]],
           order_id: str | None) -> tuple[Fact, ...]:
    about = order_id if intent == "order_status" else product_id
    # (Fact(...) rather than dataclasses.replace: the same fact, without replace's field walk)
    return tuple(Fact(f.key, f.label, f.number, f.dim, f.forms, about, f.parts)
                 for f in _required(intent, product_id, market, words, order_id))


def _required(intent: str, product_id: str | None, market: Market, words: dict[str, tuple[str, ...]],
              order_id: str | None) -> tuple[Fact, ...]:
    if intent == "order_status":
        order = market.catalog.order(order_id)
        facts = [term("order_status", order.status)]
        if order.eta_days is not None:
            facts.append(number("eta", order.eta_days * 24, "hours", f"{order.eta_days} days"))
        return tuple(facts)
    p = market.catalog.by_id[product_id]
    w = lambda key: words.get(key, (key.replace("_", " "),))  # noqa: E731
    stock = market.stock[p.id]
    match intent:
        case "price":
            return (number("price", market.price(p.id), "money"),)
        case "stock":
            return (Fact("stock", "sold out", forms=w("sold_out")),) if stock == 0 else (number("stock", stock, "count"),)
        case "promotion":
            codes = [c.code for c in market.coupons_for(p.id)]
            if codes:
                return tuple(Fact("coupon", c, forms=(c,)) for c in codes)
            if p.id in market.flash:
                return (number("price", market.price(p.id), "money"),)
            return (Fact("promotion", NO_PROMOTION, forms=w("no_promotion")),)
        case "shipping":
            fee = (Fact("shipping_fee", "free shipping", forms=w("free_shipping")) if p.shipping.fee == 0
                   else number("shipping_fee", p.shipping.fee, "money"))
            return (number("ships_within", p.shipping.ships_within_hours, "hours"), fee)
        case "returns":
            return (number("return_days", p.returns.days * 24, "hours", f"{p.returns.days} days"),)
        case "warranty":
            if p.warranty_months is None:
                return (Fact("warranty", "no warranty", forms=w("no_warranty")),)
            return (number("warranty", p.warranty_months * 720, "hours", f"{p.warranty_months} months"),)
    attr = getattr(p, _ATTRIBUTE.get(intent, intent), None)
    if intent == "pregnancy":
        return (Fact("pregnancy", "safe" if attr else "not advised", forms=w("pregnancy_safe" if attr else "pregnancy_unsafe")),)
    if intent == "allergens" and not attr:
        return (Fact("allergens", "no common allergens", forms=w("no_allergens")),)
    if intent == "shelf_life":
        return (number("shelf_life", attr * 720, "hours", f"{attr} months"),)
    if intent == "battery":
        return (number("battery", attr, "hours", f"{attr:g} h"),)
    if isinstance(attr, dict):
        return tuple(term(intent, v) for v in attr.values())
    if isinstance(attr, tuple):
        return tuple(term(intent, v) for v in attr)
    return (term(intent, str(attr)),)


_ATTRIBUTE = {"size": "sizes", "skin_type": "skin_types", "pregnancy": "pregnancy_safe",
              "shelf_life": "shelf_life_months", "battery": "battery_hours"}

#: Which fact intents apply to which product categories (others are asked of any product).
INTENT_CATEGORIES = {
    "size": ("apparel",), "material": ("apparel",), "care": ("apparel",), "colors": ("apparel",),
    "ingredients": ("skincare", "snacks"), "skin_type": ("skincare",), "pregnancy": ("skincare",),
    "allergens": ("snacks",), "shelf_life": ("skincare", "snacks"), "storage": ("snacks",),
    "specs": ("electronics",), "compatibility": ("electronics",), "battery": ("electronics",),
    "warranty": ("electronics",),
}


def intent_fits(intent: str, product) -> bool:
    """Whether viewers can sensibly ask ``intent`` about ``product``."""
    cats = INTENT_CATEGORIES.get(intent)
    if intent == "battery" and getattr(product, "battery_hours", None) is None:
        return False
    return cats is None or product.category in cats
