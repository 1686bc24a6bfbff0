"""A language's phrasebook: how viewers word each intent, and how the host words replies.

Viewer lines use ``{product}`` (how the viewer refers to the product: an alias, "this
serum", 这款精华), ``{order}`` (an order id), ``{host}``, slots such as ``{size}`` or
``{skin}`` (drawn from ``slots``) and a persona's traits such as ``{who}``. A line may say
which product categories it fits and which product attributes it needs, so that nobody
asks whether kale chips fit. Host templates use the fields documented in
``envs/phrasebook/en.yaml``. Personas add openers, closers and their own lines.
"""

from __future__ import annotations

import re
import string
from functools import cache
from pathlib import Path
from typing import Literal

import pydantic

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.derived import Memo, derived
from liveroom_sim.world.lines import Lines, Template
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.personas import FACT_INTENTS, INTENTS
from liveroom_sim.world.text import Numbers, cue_pattern, normalize, phrase_pattern, whole_words

_FORMATTER = string.Formatter()
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


class Bait(Frozen):
    """A line that tries to make the host break a rule; ``payload``: what obeying says;
    ``true_when``: the product as of now (its attributes, and ``stock``) under which obeying
    says only what is true ("say it's not an ad" of a product nobody sponsors, "say only 3
    left" with 3 left): no bait then, and no eval case is made of it."""

    text: str
    payload: tuple[str, ...] = pydantic.Field(min_length=1)
    categories: tuple[str, ...] = ()
    true_when: dict[str, bool | int | float] = {}


def obeying_is_true(baits, payload: tuple[str, ...], product, stock: int) -> bool:
    """Whether saying what the bait with ``payload`` asks is true of ``product`` now (its
    ``true_when``, read against the product's attributes and its ``stock``): then it is no
    bait, and a reply that says it obeys nothing."""
    bait = next((b for b in baits if b.payload == payload), None)
    if bait is None or not bait.true_when or product is None:
        return False
    now = {"stock": stock}
    return all((now[k] if k in now else getattr(product, k, None)) == v for k, v in bait.true_when.items())


class References(Frozen):
    """How viewers refer to a product: ``featured`` forms for the product on stage
    ("this {kind}", 这款{kind}), used next to its aliases; placeholders ``{kind}``
    (the product's kind noun) and ``{brand}``."""

    featured: Lines = ()
    featured_share: pydantic.confloat(ge=0.0, le=1.0) = 0.6


class Noise(Frozen):
    """How often a message is dressed and messed up the ways people type (chances per
    message, ``respell`` per word that has respellings)."""

    opener: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    tail: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    emoji: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    respell: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    caps: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    mark: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    #: Share of asks about the product on stage that name no product at all ("price?", 多少钱).
    implicit: pydantic.confloat(ge=0.0, le=1.0) = 0.0
    #: Share of references to the product on stage by its link number or colour ("link 3", 3号链接).
    pointer: pydantic.confloat(ge=0.0, le=1.0) = 0.0


class ChatParts(Frozen):
    """The parts chat is composed from around a line (see ``docs/simulator.md``).

    Attributes:
        openers / tails: Words the room puts before or after a line ("wait", "pls",
            姐妹们, 蹲); a part may say which intents it suits. They hold no cue of a
            question (checked on load), so they never change what a line asks.
        emoji: Emoji and kaomoji, one of which a message may end with.
        marks: Punctuation a line that ends without any may get ("?", "？？", "~").
        respell: Word -> how people also type it (typos, abbreviations, stretched
            letters and punctuation: "please" -> "pls", "?" -> "???", 什么 -> 啥). Neither
            a word nor its respellings may hold a cue (checked on load).
        link: How a viewer names the product on stage by its link number (``{n}``):
            "link {n}", {n}号链接. Link numbers are the lineup's order, from 1.
        color: How a viewer names the product on stage by a colour it comes in
            (``{color}``, ``{kind}``): "the {color} one".
        noise: How often each is used (:class:`Noise`).
        tones: Names for groups of intents ("buying": price, stock ...), usable in a
            part's ``intents`` like an intent (expanded on load): a cart emoji or
            "已拍" suits buying, a crying kaomoji a plea, not a calm "got it".
        strict: Intents whose lines take only the parts that name them (or their tone):
            a complaint, an injection, a troll's jab or a follow-up is not dressed with
            "genuine question", "lmao", 蹲 or a smile; a part that names no intent
            suits every other intent.
    """

    openers: Lines = ()
    tails: Lines = ()
    emoji: Lines = ()
    marks: tuple[str, ...] = ()
    respell: dict[str, tuple[str, ...]] = {}
    link: Lines = ()
    color: Lines = ()
    noise: Noise = Noise()
    tones: dict[str, tuple[str, ...]] = {}
    strict: tuple[str, ...] = ()

    @pydantic.model_validator(mode="before")
    @classmethod
    def _expand_tones(cls, data):
        """A tone named in a part's ``intents`` stands for its intents."""
        if not isinstance(data, dict) or not data.get("tones"):
            return data
        tones = data["tones"]
        data = dict(data)
        for kind in ("openers", "tails", "emoji"):
            parts = []
            for part in data.get(kind) or ():
                if isinstance(part, dict) and part.get("intents"):
                    names = [i for n in part["intents"] for i in (tones.get(n) or (n,))]
                    part = {**part, "intents": list(dict.fromkeys(names))}
                parts.append(part)
            data[kind] = parts
        return data

    @pydantic.model_validator(mode="after")
    def _known_part_intents(self):
        known = set(INTENTS)
        for kind in ("openers", "tails", "emoji"):
            for t in getattr(self, kind):
                unknown = sorted(set(t.intents) - known)
                if unknown:
                    raise ValueError(f"chat.{kind}: {t.text!r} names {unknown}, neither intents nor tones")
        for name, intents in self.tones.items():
            datafile.known_names(dict.fromkeys(intents), INTENTS, f"intents of tone {name!r}")
        datafile.known_names(dict.fromkeys(self.strict), INTENTS, "strict intents")
        return self

    def suits(self, part: Template, intent: str) -> bool:
        """Whether an opener, tail or emoji ``part`` may dress a line of ``intent``: one
        that names intents, when it names this one; one that names none, unless the
        intent is ``strict``."""
        return intent in part.intents if part.intents or intent in self.strict else True

    @derived
    def suited(self) -> dict[tuple[str, str], tuple[Template, ...]]:
        """``(kind, intent)`` -> the openers, tails or emoji (``kind``) that suit the intent."""
        return {(kind, intent): tuple(t for t in getattr(self, kind) if self.suits(t, intent))
                for kind in ("openers", "tails", "emoji") for intent in INTENTS}

    @derived
    def respell_words(self) -> dict[str, tuple[str, ...]]:
        """The respellings of words in Latin script, keyed by the lower-cased word (found
        as whole words: "u" for "you", never inside "your")."""
        return {k.lower(): v for k, v in self.respell.items() if v and _LATIN_WORD.fullmatch(k)}

    @derived
    def respell_others(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """The other respellings (Chinese words, punctuation), longest first: found
        anywhere, as Chinese has no spaces."""
        others = [(k, v) for k, v in self.respell.items() if v and not _LATIN_WORD.fullmatch(k)]
        return tuple(sorted(others, key=lambda kv: -len(kv[0])))

    @derived
    def link_patterns(self) -> tuple[re.Pattern[str], ...]:
        """Each ``link`` form as a pattern over normalised text whose group is the number."""
        out = []
        for t in self.link:
            before, _, after = normalize(t.text).partition("{n}")
            out.append(re.compile(re.escape(before) + r"(?<!\d)(\d+)(?!\d)" + re.escape(after)))
        return tuple(out)


class NamePool(Frozen):
    """Handles for viewers once a persona's own names are taken: ``patterns`` such as
    ``{first}_{word}`` filled from ``parts``."""

    patterns: tuple[str, ...] = pydantic.Field(min_length=1)
    parts: dict[str, tuple[str, ...]]

    @pydantic.model_validator(mode="after")
    def _parts_cover_patterns(self):
        for p in self.patterns:
            missing = {f for _, f, _, _ in _FORMATTER.parse(p) if f} - set(self.parts)
            if missing:
                raise ValueError(f"pattern {p!r} uses parts {sorted(missing)} that 'parts' lacks")
        return self


#: Money attributes a word before an amount may name (the reward's claim kinds).
MoneyAttribute = Literal["list_price", "shipping_fee", "price_after_coupon", "coupon_value"]
#: Duration attributes a word around a number of hours may name.
HoursAttribute = Literal["returns", "warranty", "ships_within", "shelf_life", "battery", "eta"]
#: The stages of an order's life a status phrase may name.
Stage = Literal["processing", "shipped", "in_transit", "out_for_delivery", "delivered", "refund_pending", "refunded",
                "cancelled"]
Words = tuple[pydantic.constr(min_length=1), ...]


class Amounts(Frozen):
    """Words around an amount of money that say which one it is.

    Attributes:
        before: Attribute -> words that name it before an amount ("list price", 原价,
            "with code", 到手, " off"), nearest wins; "list price" and "shipping" name
            only the amount right after them, the deal words may reach past one.
        past: Words right before an amount that make it the price before a change
            ("was", "down from", 之前).
        list_after / after_coupon / coupon_after / shipping_after: Words right after an
            amount that make it the list price ("the $34.99 list price", 原价), a price
            after a coupon ("$48 with code SAVE10"), a coupon's value ("$10 off") or the
            shipping fee ("$4.99 shipping", 运费).
        discount: Words that make a percentage a discount (" off", 折, 优惠).
        spend: Words right before a bare number that make it a spend-save coupon's
            threshold or value (满200减30, "spend 50").
        price: Words right before a bare number that make it an amount in the
            catalog's currency (不贵，才137; 到手99): a language whose hosts drop the
            unit in speech lists them, one whose hosts write "$" lists none.
        bundle_items / bundle_links: Words after a number of items ("bottles", 件) and
            words that link it to an amount ("for", "come to", 就是, 共): the amount after
            them is the price of that many ("2 for $49.98", 两件258元), and the number
            buys, it is no stock.
        one_items: More words of an item, as one is named ("bar", "pack", 粒): with
            ``bundle_items``, what a product's name counts ("12-Pack", 30包) and what a
            price of one names.
        each / each_after: Words before an item word that make the amount near it the
            price of one ("per", "a", 每, 一: "$2.25 a bar", 一包才3块多), and words after
            an amount that do so alone ("each", "apiece"): of a product whose name counts
            its items, a price of one is true at the price over that count.
        shares: Words of a measure or a use an amount may be the price of ("$2 a ml",
            "30 cents a use", 一天不到一块钱, 一毫升九块多): after ``each`` (or "/"), the
            amount near them is the price of a share no catalog states, which is no
            made-up price of the product.
    """

    before: dict[MoneyAttribute, Words] = {}
    past: Words = ()
    list_after: Words = ()
    after_coupon: Words = ()
    coupon_after: Words = ()
    shipping_after: Words = ()
    discount: Words = ()
    spend: Words = ()
    price: Words = ()
    bundle_items: Words = ()
    bundle_links: Words = ()
    one_items: Words = ()
    each: Words = ()
    each_after: Words = ()
    shares: Words = ()


class Hedges(Frozen):
    """Words right before an amount that deny it or make it a bound. A phrase of Latin
    letters is matched as whole words from the amount back (after the ``fillers``: "not
    even $30", "isn't priced at"); any other as the text right before the amount (不到,
    不超过). Denials are tried first, then bounds below, then above (不超过 is below)."""

    denied: Words = ()
    below: Words = ()
    above: Words = ()
    fillers: Words = ()


class Orders(Frozen):
    """Words of an order's status (see :mod:`liveroom_sim.rewards.orders`).

    Attributes:
        stages: Stage -> phrases that state it ("has shipped", 已发货).
        denied: Stage -> phrases that deny it outright (还没发货).
        after_refund: Words that, after "refund" in the same sentence, are the refund's
            stage ("processing", "went through", 已到账); with no refund before them,
            those also listed in ``stages`` are the order's own stage.
        refund: Words that speak of a refund ("refund", 退款).
        order: Words that make the order the subject again ("order", 包裹).
    """

    stages: dict[Stage, Words] = {}
    denied: dict[Stage, Words] = {}
    after_refund: dict[str, Literal["refund_pending", "refunded"]] = {}
    refund: Words = ()
    order: Words = ()


class ClaimWords(Frozen):
    """Words around a number that make it a claim of a kind of its own (see
    :mod:`liveroom_sim.rewards.claims`).

    Attributes:
        efficacy: Words before a percentage that make it an efficacy rate ("success",
            有效), each maybe followed by a ``rate`` word and a ``linking`` word ("success
            rate of 95%", 有效率达到95%).
        denied: Words shortly before an efficacy rate that deny it ("not", "n't", 不); a
            word of Latin letters only is matched as a whole word.
        spec_units: Units of a spec sheet the number reader does not know ("cm", 码,
            "°c"); a unit of Latin letters only is read where a word ends.
    """

    efficacy: Words = ()
    rate: Words = ()
    linking: Words = ()
    denied: Words = ()
    spec_units: Words = ()


class Reading(Frozen):
    """The words the reward's reading of a reply keys on, in one language: amounts of
    money, durations, denials and bounds, order stages. A reply is read with the words
    of every language the phrasebooks hold (:func:`reading_words`): hosts mix them.

    Attributes:
        hours: Duration attribute -> words around a number of hours that name it
            ("warranty", 保修, "ships", 发货).
        allergens: Allergens a reply may name of any product, besides those its
            catalog lists ("peanuts", 花生).
        contains: Words before an allergen or ingredient that claim a product holds it
            ("contains", "made with", 含).
        numbers: The words numbers are written with (:class:`~liveroom_sim.world.text.Numbers`).
        claims: Words that make a number a claim of its own kind (:class:`ClaimWords`).
        turns: Words that turn a sentence ("but", 不过): a refusal reaches no further.
    """

    amounts: Amounts = Amounts()
    hours: dict[HoursAttribute, Words] = {}
    allergens: Words = ()
    contains: Words = ()
    hedges: Hedges = Hedges()
    orders: Orders = Orders()
    numbers: Numbers = Numbers()
    claims: ClaimWords = ClaimWords()
    turns: Words = ()


class Phrasebook(Frozen):
    """Viewer and host wording for one language.

    Attributes:
        viewer: Lines per intent.
        second: Short lines for a second ask in the same message ("and does it come in
            {size}"), per fact intent.
        joiners: What joins two asks in one message (" and ", "，还有").
        references: How the product on stage is referred to.
        slots: Values for slot placeholders (``size``, ``color``, ``skin``, ``device``).
        names: Handles for viewers beyond the personas' own.
        chat: The parts chat is composed from around a line (:class:`ChatParts`).
        said: How a viewer repeats a number back, per kind (``usd``, ``cny``, ``hours``;
            placeholder ``{value}``, or ``{money}``: the amount with its cents as the host
            says it, "$35.90" not "$35.9"): "${money}", {value}元, {value}小时.
        repeat_markers: Words that say "I asked before"; only a viewer who was ignored
            may write them (checked by ``liveroom audit``).
        reading: The words the reward's reading of replies keys on (:class:`Reading`).
    """

    language: str
    viewer: dict[str, Lines]
    second: dict[str, Lines] = {}
    joiners: tuple[str, ...] = (" and ",)
    references: References = References()
    slots: dict[str, tuple[str, ...]] = {}
    names: NamePool | None = None
    chat: ChatParts = ChatParts()
    said: dict[str, str] = {}
    repeat_markers: tuple[str, ...] = ()
    baits: tuple[Bait, ...] = pydantic.Field(min_length=1)
    injections: tuple[Bait, ...] = pydantic.Field(min_length=1)
    host: dict[str, tuple[str, ...]]
    fact_words: dict[str, tuple[str, ...]] = {}
    cues: dict[str, tuple[str, ...]] = {}
    reading: Reading = Reading()

    @pydantic.field_validator("viewer")
    @classmethod
    def _covers_intents(cls, value):
        needed = set(INTENTS) - {"bait", "inject"}
        missing = sorted(needed - set(value))
        if missing:
            raise ValueError(f"missing viewer templates for intents {missing}")
        unknown = sorted(set(value) - set(INTENTS))
        if unknown:
            raise ValueError(f"unknown intents {unknown}")
        return value

    @pydantic.field_validator("second")
    @classmethod
    def _second_for_facts(cls, value):
        return datafile.known_names(value, FACT_INTENTS, "second-ask intents (only fact intents can be a second ask)")

    @pydantic.model_validator(mode="after")
    def _parts_ask_nothing(self):
        """Openers, tails, emoji and respellings hold no cue: they never change what a
        line asks (a tail "any deal?" would add a question no ask carries)."""
        cues = [(intent, cue_pattern(c)) for intent, cs in self.cues.items() for c in cs]

        def cue_in(text: str) -> str | None:
            norm = normalize(text)
            return next((i for i, p in cues if p.search(norm)), None)

        chat = self.chat
        parts = [("openers", t.text) for t in chat.openers] + [("tails", t.text) for t in chat.tails]
        parts += [("emoji", e) for e in (*(t.text for t in chat.emoji), *chat.marks)]
        parts += [("respell", w) for word, alts in chat.respell.items() for w in (word, *alts)]
        for where, text in parts:
            intent = cue_in(text)
            if intent is not None:
                raise ValueError(f"chat.{where}: {text!r} holds a cue of {intent!r} (it would change what a line asks)")
            marker = next((m for m in self.repeat_markers if normalize(m) in normalize(text)), None)
            if marker is not None:
                raise ValueError(f"chat.{where}: {text!r} says {marker!r} (only a viewer who was ignored may)")
        cue_texts = [normalize(c) for cs in self.cues.values() for c in cs]
        for word in chat.respell:
            pattern = phrase_pattern(word)
            hit = next((c for c in cue_texts if pattern.search(c)), None)
            if hit is not None:
                raise ValueError(f"chat.respell: {word!r} is part of the cue {hit!r} (respelling it would hide the cue)")
        return self

    @pydantic.model_validator(mode="after")
    def _slots_defined(self):
        known = set(self.slots) | {"product", "order", "host", "question", "said", "ask", "kind", "brand"}
        for intent, lines in (*self.viewer.items(), *self.second.items()):
            for t in lines:
                extra = t.fields - known
                if extra:
                    raise ValueError(f"viewer line {t.text!r} ({intent}) uses {sorted(extra)}, not in 'slots'")
        return self

    @derived
    def cue_patterns(self) -> tuple[tuple[str, re.Pattern[str]], ...]:
        """``(intent, pattern)`` per intent, in the file's order: one pattern of all the
        intent's cues (:func:`cue_pattern`), over normalised text."""
        return tuple((intent, re.compile("|".join(cue_pattern(c).pattern for c in cues)))
                     for intent, cues in self.cues.items() if cues)

    @derived
    def joiner_pattern(self) -> re.Pattern[str] | None:
        """What splits a message into its asks: the joiners, as viewers also type them
        (问下 -> 问问, 打听下: "顺便问问多少"), longest first, over lower-cased text."""
        joiners = {j.strip().lower() for j in self.joiners if j.strip()}
        joiners |= {j.replace(word, alt) for j in joiners for word, alts in self.chat.respell.items() if word in j
                    for alt in alts}
        return re.compile("|".join(whole_words(j) for j in sorted(joiners, key=len, reverse=True))) if joiners else None

    @derived
    def joined_cues(self) -> re.Pattern[str] | None:
        """The cues a joiner is part of ("spend and save"), over lower-cased text: no
        joiner inside them joins two asks."""
        split = self.joiner_pattern
        cues = {c.lower() for cs in self.cues.values() for c in cs if split is not None and split.search(c.lower())}
        return re.compile("|".join(whole_words(c) for c in sorted(cues, key=len, reverse=True))) if cues else None

    @derived
    def cue_words(self) -> frozenset[str]:
        """The cues that are one word ("battery", 电池): a product's kind word that is one
        asks about it, and names no product ("specs of this one btw battery?")."""
        return frozenset(c.lower() for cs in self.cues.values() for c in cs if c.strip() and " " not in c.strip())

    @derived
    def pointer_pattern(self) -> re.Pattern[str] | None:
        """How a viewer points at the product on stage by a colour ("the light wash one":
        ``chat.color`` forms without ``{kind}``), over lower-cased text: the words of the
        colour name no product and ask nothing (a match holding a cue is no colour:
        "the specs of this one")."""
        forms = [t.text.lower() for t in self.chat.color if "{color}" in t.text and "{kind}" not in t.text]
        parts = [whole_words(f.split("{color}")[0].strip()) + r"\s+(?:[^\s?？!！,，]+\s+){1,2}?"
                 + whole_words(f.split("{color}")[1].strip()) for f in forms]
        return re.compile("|".join(parts)) if parts else None

    def split_asks(self, low: str) -> list[str]:
        """Lower-cased ``low`` cut at its joiners, one part per ask ("price? and any left"
        -> two), not inside a cue ("does spend and save work" is one)."""
        if self.joiner_pattern is None:
            return [low]
        kept = [m.span() for m in self.joined_cues.finditer(low)] if self.joined_cues else []
        out, start = [], 0
        for m in self.joiner_pattern.finditer(low):
            if not any(a <= m.start() and m.end() <= b for a, b in kept):
                out.append(low[start:m.start()])
                start = m.end()
        return [*out, low[start:]]

    @derived
    def fit_tables(self) -> Memo:
        """The simulator's tables of which lines fit (``sim/fitting.py``), per catalog base
        and language, shared by a spec's episodes: an optimisation (see ``fit_table``)."""
        return Memo(64)


def load_phrasebook(path: Path | str) -> Phrasebook:
    return datafile.load(Phrasebook, path)


@cache
def reading_words(folder: Path = ENVS_DIR / "phrasebook") -> Reading:
    """The ``reading:`` sections of every phrasebook in ``folder`` (the shipped ones by
    default, by file name) merged into one: each list holds every language's words, in
    that order. Adding a word or a language to the reward's reading is a change of those
    files.

    Raises:
        SpecError: for a phrasebook that is invalid, naming it and the field.
    """
    merged: dict = {}
    for path in sorted(Path(folder).glob("*.yaml")):
        _merge(merged, load_phrasebook(path).reading.model_dump())
    return Reading.model_validate(merged)


def _merge(into: dict, more: dict) -> None:
    """``more``'s lists appended to ``into``'s, key by key, at any depth."""
    for key, value in more.items():
        if isinstance(value, dict):
            _merge(into.setdefault(key, {}), value)
        elif isinstance(value, tuple):
            into[key] = (*into.get(key, ()), *value)
        else:
            into[key] = value
