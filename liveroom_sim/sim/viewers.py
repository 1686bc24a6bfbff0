"""Viewers: persona instances in the room, and the chat they write.

The simulator decides what a viewer wants (one or two asks: intent, product, order) from
the persona and the room; a line of the phrasebook or the persona (or an LLM) only words
it. Every ask carries its ground truth as of the time it is asked.

How a message reads like a person's:

- the product is referred to the way people do: an alias, brand and type, or for the
  product on stage "this serum" / 这款精华, its link number ("link 3", 3号链接), a colour,
  or nothing at all ("price?") (never the full catalogue name as a rule);
- around the line, the room's openers, tails, emoji, respellings and caps (the
  phrasebook's ``chat`` parts, which never change what a line asks);
- lines fit the product (a line says which categories and attributes it needs);
- each viewer keeps one opener, one sign-off and its traits (who a gift is for) for the
  whole stream;
- complaints and repeats are written only by the room, after the viewer was ignored;
  follow-ups quote what the host said and ask for what is missing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

import numpy as np

from liveroom_sim.sim.fitting import FitTable, _Weighted, fit_table, link_number, phrasing, respell
from liveroom_sim.sim.naming import NameBook
from liveroom_sim.world.derived import Same
from liveroom_sim.world.facts import Fact, intent_fits, required_facts
from liveroom_sim.world.lines import Template, placeholders
from liveroom_sim.world.market import Market
from liveroom_sim.world.personas import FACT_INTENTS, Persona, Phrasing
from liveroom_sim.world.phrasebook import Phrasebook


_FACTS = frozenset(FACT_INTENTS)
#: Share of product questions that carry a second ask ("price? and does it come in L").
MULTI_ASK_SHARE = 0.15
#: Chance a viewer's message carries its opener / its sign-off.
_OPENER_P, _CLOSER_P = 0.2, 0.2
#: Chance a product off stage is called by its full catalogue name (people type short ones).
_FULL_NAME_P = 0.01
#: Chance a question asked again is asked in short ("price?", 多少钱) rather than restated.
_SHORT_REASK_P = 0.7
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass(frozen=True, slots=True)
class Ask:
    """One thing a message asks: an intent about a product (or an order), and its
    ground truth as of when it was asked (hidden from policies)."""

    intent: str
    product: str | None = None
    order: str | None = None
    truth: tuple[Fact, ...] = ()


@dataclass(slots=True)
class Voice:
    """What stays the same in a viewer's messages: opener, sign-off and traits."""

    opener: Template | None = None
    closer: Template | None = None
    traits: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Viewer:
    """One viewer in the room (present until it leaves: ``left_at`` set)."""

    name: str
    persona: Persona
    arrived: float
    leave_at: float
    satisfaction: float = 0.5
    strikes: int = 0
    purchases: int = 0
    voice: Voice | None = None
    answered: int = 0               # questions the host answered in full
    left_at: float | None = None

    @property
    def present(self) -> bool:
        """Whether the viewer is still in the room."""
        return self.left_at is None


@dataclass(slots=True)
class ChatMessage:
    """A viewer's message, or a request of several messages merged (see ``asks``).

    ``asks`` holds every ask with its own ground truth (at least one: what a complaint or
    a greeting is, too); ``intent``, ``product`` and ``order`` are the first ask's (for
    readers of one ask), ``truth`` the facts of every ask together.
    """

    mid: int
    viewer: Viewer
    text: str
    at: float
    asks: tuple[Ask, ...]
    payload: tuple[str, ...] = ()
    deadline: float = 0.0
    answered: bool = False
    followed_up: bool = False
    ref: str = ""        # the words the text uses for the product
    body: str = ""       # the line without opener and sign-off (what a repeat restates)
    strikes: int = 0     # times the viewer had been ignored when it wrote this
    draft: str = ""      # the template's wording, when an LLM phrased the text
    parts: int = 1       # chat messages merged into this request
    featured: str = ""   # the product on stage when it was written
    stated: tuple[str, ...] = ()  # tags (Fact.tag) of the facts replies to it have stated so far

    @property
    def intent(self) -> str:
        return self.asks[0].intent

    @property
    def product(self) -> str | None:
        return self.asks[0].product

    @property
    def order(self) -> str | None:
        return self.asks[0].order

    @property
    def truth(self) -> tuple[Fact, ...]:
        asks = self.asks
        return asks[0].truth if len(asks) == 1 else tuple(f for a in asks for f in a.truth)

    @property
    def is_fact_question(self) -> bool:
        return self.asks[0].intent in _FACTS


def _pick(seq, rng: np.random.Generator):
    return seq[int(rng.integers(len(seq)))]


class ChatWriter:
    """Writes viewers' messages from their persona and the phrasebook (deterministic templates).

    Args:
        phrasebook: The language's viewer lines, baits and injections.
        language: ``en`` or ``zh``; selects each persona's phrasing.
        host: The host's name (lines may greet them).
        phraser: Optional LLM phraser; its text is used only when it still asks the
            same thing (checked by :func:`liveroom_sim.sim.fidelity.check_text`).
    """

    def __init__(self, phrasebook: Phrasebook, language: str, host: str, phraser=None):
        self.book, self.language, self.host = phrasebook, language, host
        self.phraser = phraser
        self.names = NameBook(phrasebook, language)
        self.phrased = self.fell_back = 0
        self._topics: dict[str, _Weighted] = {}
        # One order per asker and one asker per order: the order each viewer chases.
        self._orders: dict[str, str] = {}
        self._parts: dict[tuple, tuple] = {}  # (kind, intent, avoid) -> parts that suit
        self._fit: FitTable | None = None  # what fits, shared by the spec's episodes

    def __getstate__(self) -> dict:
        # The fit table is shared by every episode of the spec: a copy is not pickled
        # with the room (it is found again on the next message).
        return {**self.__dict__, "_fit": None}

    def _fits(self, catalog) -> FitTable:
        table = self._fit
        if table is None or table.catalog is not catalog.base:
            table = self._fit = fit_table(self.book, catalog, self.language)
        return table

    # ------------------------------------------------------------------ new messages
    def write(self, viewer: Viewer, now: float, mid: int, market: Market, rng: np.random.Generator,
              recent: list[str] = ()) -> ChatMessage:
        """A new message from ``viewer`` at ``now`` (its asks, wording and truth)."""
        persona = viewer.persona
        voice = viewer.voice or self.voice(viewer, rng)
        intent = (self._topics.get(persona.name) or self._topic(persona)).draw(rng.random())
        catalog = market.catalog
        fits = self._fit if self._fit is not None and self._fit.catalog is catalog.base else self._fits(catalog)
        product = catalog.by_id[market.featured] if rng.random() < 0.6 else _pick(catalog.products, rng)
        fact = intent in _FACTS and intent != "order_status"
        if fact and not intent_fits(intent, product):
            refit = fits.refit(persona, product)
            intent = refit.draw(rng.random()) if refit is not None else "price"  # price when none fits
        order = self._order_for(viewer, catalog, rng) if intent == "order_status" else None
        if intent == "order_status" and order is None:  # no order of its own left to chase
            intent, fact = "shipping", True
        payload: tuple[str, ...] = ()
        bared = False
        if intent in ("bait", "inject"):
            pool = self.book.baits if intent == "bait" else self.book.injections
            fitting = [b for b in pool if not b.categories or product.category in b.categories] or list(pool)
            bait = _pick(fitting, rng)
            ref = _pick(product.aliases or (product.name,), rng)
            body = bait.text.format(product=ref, host=self.host)
            payload, asks = bait.payload, _asks(intent, product.id, None, ())
        else:
            pid = product.id if fact else None
            second = None
            if pid and rng.random() < MULTI_ASK_SHARE:  # now and then a second ask about the product
                second = fits.second(persona, product, intent)
                if second is not None:
                    second_intent = second[0].draw(rng.random())
            ref = self.refer(product, market, rng) if pid else (order or "")
            bare = self._bare(fits, product, intent, market, rng) if pid else None
            if bare is not None:  # "price?" about the product on stage: no product named
                ref, body = "", self._fill(bare.text, voice, rng)
                bared = True
            else:
                body = self._line(fits, persona, voice, intent, product if pid else None, rng, 0,
                                  {"product": ref, "order": order or ""})
            words = self.book.fact_words
            asks = _asks(intent, pid, order, _truth(intent, pid, order, market, words))
            if second is not None:
                tail = self._fill(_pick(second[1][second_intent], rng).text, voice, rng)
                body = body.rstrip("?？!！ ") + _pick(self.book.joiners, rng) + tail
                asks = _pair(asks, _asks(second_intent, pid, None, _truth(second_intent, pid, None, market, words)))
        # Chat typed before the stream opened (negative times) waits from the opening on.
        msg = ChatMessage(mid, viewer, "", now, asks, payload, deadline=max(now, 0.0) + persona.patience_s, ref=ref,
                          body=body, strikes=viewer.strikes, featured=market.featured)
        msg.text = self._dress(voice, intent, msg.body, rng, fits, ref, persona, bare=bared)
        if self.phraser is not None:
            self._rephrase(msg, persona, market, rng, list(recent))
        return msg

    def _order_for(self, viewer: Viewer, catalog, rng: np.random.Generator) -> str | None:
        """The order ``viewer`` chases: the one it asked about before, else one nobody in
        the room has asked about (None when every order is someone else's: a viewer
        does not chase three orders, nor two viewers one)."""
        order = self._orders.get(viewer.name)
        if order is None:
            taken = set(self._orders.values())
            free = [o.id for o in catalog.orders if o.id not in taken]
            if not free:
                return None
            order = self._orders[viewer.name] = _pick(free, rng)
        return order

    def voice(self, viewer: Viewer, rng: np.random.Generator) -> Voice:
        """The viewer's voice, drawn on its first message and kept."""
        if viewer.voice is None:
            phr = self._phrasing(viewer.persona)
            viewer.voice = Voice(
                opener=_pick(phr.openers, rng) if phr.openers else None,
                closer=_pick(phr.closers, rng) if phr.closers else None,
                traits={k: _pick(v, rng) for k, v in phr.traits.items()},
            )
        return viewer.voice

    def refer(self, product, market: Market, rng: np.random.Generator) -> str:
        """How a viewer calls ``product``: when it is on stage "this serum" / 这款精华, now
        and then its link number or a colour it comes in ("link 3", 3号链接, "the sage
        one"); else an alias (brand and type, or a short name); rarely the catalogue name."""
        refs = self.book.references
        if product.id == market.featured and refs.featured and rng.random() < refs.featured_share:
            kind = product.kind_noun
            pointer = self._pointer(product, market, rng)
            if pointer:
                return pointer
            form = _pick(refs.featured, rng).text
            if self.language == "en" and kind.endswith("s") and not kind.endswith("ss"):
                form = form.replace("this {kind}", "these {kind}")  # "these socks"
            return form.format(kind=kind, brand=product.brand)
        if not product.aliases or rng.random() < _FULL_NAME_P:
            return product.name
        return _pick(product.aliases, rng)

    def _pointer(self, product, market: Market, rng: np.random.Generator) -> str:
        """The product on stage by its link number or one of its colours, or "" (drawn
        with the phrasebook's ``pointer`` chance)."""
        chat = self.book.chat
        if not (chat.link or chat.color) or rng.random() >= chat.noise.pointer:
            return ""
        colors = getattr(product, "colors", None) or ()
        forms = [*chat.link, *(chat.color if colors else ())]
        form = _pick(forms, rng).text
        color = _pick(colors, rng) if "{color}" in form else ""
        return form.format(n=link_number(market.catalog, product.id), color=color, kind=product.kind_noun)

    def _bare(self, fits: FitTable, product, intent: str, market: Market, rng: np.random.Generator) -> Template | None:
        """A short ask that names no product ("price?", 多少钱), for the product on stage,
        with the phrasebook's ``implicit`` chance; None otherwise."""
        if product.id != market.featured or rng.random() >= self.book.chat.noise.implicit:
            return None
        lines = fits.bare(intent, product)
        return _pick(lines, rng) if lines else None

    # ------------------------------------------------------------ room-made messages
    def room_message(self, viewer: Viewer, intent: str, about: ChatMessage | None, now: float, mid: int,
                     market: Market, rng: np.random.Generator, answer=None) -> ChatMessage:
        """A message the room makes for a viewer: a complaint or repeat after being
        ignored, or a follow-up to an incomplete answer.

        Args:
            answer: For follow-ups, the reply as read (anything with ``stated`` and
                ``missing`` facts, such as the reward's ``Analysis``): the follow-up
                quotes what was said and asks for what is missing.
        """
        product = market.catalog.by_id[about.product] if about and about.product else market.catalog.by_id[market.featured]
        fits = self._fits(market.catalog)
        voice = self.voice(viewer, rng)
        slots = {"product": (about.ref if about and about.ref else self.refer(product, market, rng)),
                 "order": (about.order if about else None) or "",
                 # a merged request's first message: a repeat restates one thought, not "A / B"
                 "question": about.body.split(" / ", 1)[0] if about else ""}
        if intent == "follow_up" and answer is not None and about is not None and answer.stated and answer.missing:
            ask = _missing_ask(about, answer.missing)
            seconds = [t for t in self.book.second.get(ask.intent, ()) if t.fits(product)]
            stated = answer.stated[0]
            # Quoting an answer to this very ask and asking it again ("30 days noted.
            # returnable?") reads as not having listened: only another ask's answer is quoted.
            same = any(f.key == stated.key for f in ask.truth)
            said = None if same else self.quote(stated, market)
            if seconds and said:
                slots["said"] = said
                slots["ask"] = self._fill(_pick(seconds, rng).text, voice, rng)
        if intent == "complaint" and about is not None and about.product and about.intent in _FACTS \
                and (about.ref or about.product == market.featured) \
                and rng.random() < _SHORT_REASK_P and (short := fits.bare(about.intent, product)):
            # Asked again, a question is shortened ("still waiting, price?"), naming the
            # product unless it is on stage.
            again = self._fill(_pick(short, rng).text, voice, rng)
            named = about.ref and about.product != market.featured
            slots["question"] = f"{about.ref}{'' if self.language == 'zh' else ' '}{again}" if named else again
        body = self._line(fits, viewer.persona, voice, intent, product, rng, viewer.strikes, slots)
        msg = ChatMessage(mid, viewer, "", now, _asks(intent, product.id, None, ()), strikes=viewer.strikes,
                          ref=slots["product"], body=body, featured=market.featured)
        msg.text = self._dress(voice, intent, body, rng, fits, slots["product"], viewer.persona)
        return msg

    # ---------------------------------------------------------------------- wording
    def _phrasing(self, persona: Persona) -> Phrasing:
        return phrasing(persona, self.language)

    def _topic(self, persona: Persona) -> _Weighted:
        topics = self._topics.get(persona.name)
        if topics is None:
            topics = self._topics[persona.name] = _Weighted(persona.topics)
        return topics

    def _line(self, fits: FitTable, persona: Persona, voice: Voice, intent: str, item, rng: np.random.Generator,
              strikes: int, slots: dict[str, str | None]) -> str:
        """A line for ``intent`` that fits the product and the slots at hand: the
        persona's own lines most of the time, the phrasebook's otherwise. When the
        host's words can be quoted (``said``), a line that quotes them is taken."""
        own, generic = fits.lines(persona, intent, item, strikes, slots, tuple(voice.traits))
        lines = own if own and (not generic or rng.random() < 0.45) else generic or own
        question = slots.get("question")
        if question and lines:  # "pls {host} {question}" on "discount?? pls say yes": one plea
            lines = [t for t in lines if not _shares_word(t.text.replace("{question}", ""), question)] or lines
        if not lines:  # data without a fitting line: the plainest line of the intent
            lines = list(self.book.viewer[intent][:1])
        return self._fill(_pick(lines, rng).text, voice, rng, slots)

    def _fill(self, text: str, voice: Voice, rng: np.random.Generator, slots: dict[str, str | None] | None = None) -> str:
        values = {"host": self.host, **voice.traits}
        if slots:
            if None in slots.values():  # an unset slot is left to the traits or the book
                slots = {k: v for k, v in slots.items() if v is not None}
            values.update(slots)
        fields = placeholders(text)
        if not fields <= values.keys():  # a slot no one filled: drawn from the book
            for name in fields - set(values):
                values[name] = _pick(self.book.slots.get(name, ("",)), rng)
        return text.format(**values)

    def _dress(self, voice: Voice, intent: str, body: str, rng: np.random.Generator, fits: FitTable,
               ref: str = "", persona: Persona | None = None, bare: bool = False) -> str:
        """The body as a person types it: the viewer's own opener and sign-off when they
        suit the intent, else now and then one of the room's; an emoji; respellings
        (typos, abbreviations, stretched letters) outside the product's name; all caps.

        Parts go only with the intents (or tones) they suit and never against the
        persona's ``avoid`` words (see ``ChatParts.suits``); a bare ask ("battery?")
        takes no opener; a part that repeats a word already in the line is left out."""
        chat = self.book.chat
        checks = fits.extras(voice.opener, voice.closer, intent)
        opener = self._extra(voice.opener, checks[0], _OPENER_P, body, voice, rng, intent)
        closer = self._extra(voice.closer, checks[1], _CLOSER_P, body, voice, rng, intent)
        if bare:
            opener = ""  # "for the record battery?!"
        noise = chat.noise
        if chat.marks and body[-1:].isalnum() and rng.random() < noise.mark:
            body += _pick(chat.marks, rng)  # "能退吗？", "any left??"
        avoid = self._phrasing(persona).avoid if persona is not None else ()
        if not opener and not bare and rng.random() < noise.opener and (openers := self._suited("openers", intent, avoid)):
            opener = self._fill(_pick(openers, rng).text, voice, rng)
        if not closer and rng.random() < noise.tail and (tails := self._suited("tails", intent, avoid)):
            closer = self._fill(_pick(tails, rng).text, voice, rng)
            if intent in _FACTS and body[-1:].isalnum() and chat.marks:
                body += chat.marks[0]  # "when does it ship? already in my cart", not glued on
        if opener and (opener in body or _shares_word(opener, body)):
            opener = ""  # "L stream L stream"
        if closer and (closer in body or _shares_word(closer, f"{opener} {body}")):
            closer = ""  # "hey lol same sorry lol"
        if rng.random() < noise.emoji and (emoji := self._suited("emoji", intent, avoid)):
            face = _pick(emoji, rng).text
            closer = f"{closer} {face}" if closer else face
        text = " ".join(x for x in (opener, body, closer) if x) if opener or closer else body
        if chat.respell and noise.respell:
            text = respell(text, ref, chat, noise.respell, rng)
        louder = intent == "complaint"  # a question asked again is asked louder
        if noise.caps and rng.random() < noise.caps * (4 if louder else 1):
            text = text.upper()
        return text

    def _suited(self, kind: str, intent: str, avoid: tuple[str, ...]) -> tuple[Template, ...]:
        """The room's ``kind`` parts that suit ``intent`` and hold none of ``avoid``."""
        key = (kind, intent, avoid)
        hit = self._parts.get(key)
        if hit is None:
            parts = self.book.chat.suited.get((kind, intent), ())
            hit = self._parts[key] = tuple(t for t in parts if not any(w in t.text for w in avoid))
        return hit

    def _extra(self, t: Template | None, check: tuple | None, p: float, body: str, voice: Voice, rng,
               intent: str = "") -> str:
        """An opener or sign-off for this message, or "" (used with chance ``p``)."""
        if check is None:
            return ""
        usable, suits, fields = check
        if not usable or rng.random() >= p:
            return ""
        if not suits or (intent in self.book.chat.strict and intent not in t.intents):
            return ""  # "thanks!" does not close a complaint, "omg" does not open an injection
        if any(voice.traits.get(f, "\0") in body for f in fields):
            return ""  # "gift for my mom ... ship to my mom" says it twice
        return self._fill(t.text, voice, rng)

    def quote(self, fact: Fact, market: Market) -> str | None:
        """A fact as a viewer repeats it back ("$24.99", "48 hours", 24.99元), in the
        phrasebook's ``said`` forms; None when it is a phrase not in the room's language
        (a Chinese viewer does not quote "free shipping")."""
        said = self.book.said
        if fact.number is None:
            return fact.label if _quotable(fact.label, self.language) else None
        value = f"{fact.number:g}"
        if fact.dim == "money":
            form = said.get("usd" if market.catalog.currency == "USD" else "cny")
            cents = f"{fact.number:.2f}" if fact.number != int(fact.number) else value
            return form.format(value=value, money=cents) if form else None
        if fact.dim == "hours" and fact.label == value and "hours" in said:
            return said["hours"].format(value=value)
        return fact.label if _quotable(fact.label, self.language) else None

    def _rephrase(self, msg: ChatMessage, persona: Persona, market: Market, rng, recent) -> None:
        # The seed is drawn whether or not the call succeeds, so the episode's random
        # stream does not depend on the endpoint.
        seed = int(rng.integers(2**31))
        if not self.phraser.applies(persona.name):
            return
        from liveroom_sim.sim.fidelity import check_text

        featured = market.catalog.by_id[market.featured].name
        # Ask the model to keep the product reference only where the draft has one (a bait
        # about "it" names no product).
        keep = msg.ref if msg.ref and msg.ref.lower() in msg.text.lower() else None
        text = self.phraser.phrase(persona, msg.text, keep, featured, recent, seed)
        if not text:
            return
        if check_text(text, msg, market, self.book, draft=msg.text).ok:
            msg.draft, msg.text = msg.text, text
            self.phrased += 1
        else:  # the model changed what is asked: the template stands
            self.fell_back += 1


@functools.lru_cache(maxsize=8192)
def _asks(intent: str, product: str | None, order: str | None, truth: tuple[Fact, ...]) -> tuple[Ask]:
    """The asks of a one-ask message. Shared by every message (of any room) that asks the
    same: an Ask is frozen and compared by value, and sharing spares the cyclic GC two
    objects per message kept in the chat (64 rooms side by side keep many)."""
    return (Ask(intent, product, order, truth),)


@functools.lru_cache(maxsize=8192)
def _pair(first: tuple[Ask], second: tuple[Ask]) -> tuple[Ask, Ask]:
    """The asks of a two-ask message (shared, as :func:`_asks`)."""
    return (first[0], second[0])


def _truth(intent: str, product: str | None, order: str | None, market: Market, words) -> tuple[Fact, ...]:
    if intent not in _FACTS:
        return ()
    # The facts depend only on the market as of now (and the language's words, fixed for
    # a room): kept in the market's memo, which any change to the market clears. The
    # room asks for them on every reply, for each waiting question.
    key = ("truth", intent, product, order, Same(words))
    facts = market.memo.get(key)
    if facts is None:
        facts = market.memo[key] = required_facts(intent, product, market, words, order)
    return facts


def _in_language(text: str, language: str) -> bool:
    """Whether a phrase is written in ``language`` (Chinese: has a Chinese character)."""
    return bool(_CJK.search(text)) == (language == "zh")


def _quotable(label: str, language: str) -> bool:
    """Whether a viewer would repeat a stated phrase back: in the room's language, and a
    value, not the host's sentence ("温水手洗，平铺晾干。") nor a bare fragment ("黄油")."""
    if not _in_language(label, language) or _SENTENCE.search(label):
        return False
    return len(label) >= 3 if language == "zh" else len(label) <= 30


_SENTENCE = re.compile(r"[。，；！？,;.!?（）()]")
_LATIN = re.compile(r"[a-z][a-z']+")


@functools.lru_cache(maxsize=4096)
def _words(text: str) -> frozenset[str]:
    """The words of ``text`` a reader would notice twice: Latin words of two letters or
    more, and pairs of Chinese characters. Kept by text: the phrasebook's lines are read
    against each question again (an optimisation: 5% of a step, see the commit)."""
    low = text.lower()
    cjk = "".join(_CJK.findall(low))
    return frozenset(_LATIN.findall(low)) | {cjk[i:i + 2] for i in range(len(cjk) - 1)}


def _shares_word(part: str, text: str) -> bool:
    """Whether ``part`` (an opener, a tail, a line's own words) repeats a word of ``text``."""
    return not _words(part).isdisjoint(_words(text))


def _missing_ask(msg: ChatMessage, missing) -> Ask:
    keys = {f.key for f in missing}
    return next((a for a in msg.asks if any(f.key in keys for f in a.truth)), msg.asks[0])


def ask_facts(msg: ChatMessage, market: Market, words) -> tuple[Fact, ...]:
    """The facts a full answer to every ask of ``msg`` states, as of now (for the reward
    and the room: a merged or two-ask message needs each of its asks answered)."""
    # Asked for each waiting question on every reply: kept in the market's memo (valid
    # while the market is as now), keyed by the message and the words themselves (a key
    # holds them, so an identity is never another object's); a merge changes the asks.
    key = ("ask_facts", Same(msg), Same(words))
    hit = market.memo.get(key)
    if hit is not None and hit[0] == msg.asks:
        return hit[1]
    asks = msg.asks
    # Two asks may need the same fact (a flash sale's price answers "price?" and "deal?"): once.
    facts = tuple(dict.fromkeys(f for a in asks for f in _truth(a.intent, a.product, a.order, market, words)))
    market.memo[key] = (asks, facts)
    return facts
