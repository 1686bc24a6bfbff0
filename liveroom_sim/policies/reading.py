"""What the built-in avatars read from a prompt: the waiting chat, the lineup, the
language, the phrasebook, and which tool plays which role, under any harness."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from liveroom_sim.harness.prompt import LABELS
from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.world.paths import ENVS_DIR
from liveroom_sim.world.phrasebook import Phrasebook, load_phrasebook
from liveroom_sim.world.text import normalize

WAITING = re.compile(r"^- (.+?) \((\d+)s\): (.*)$", re.M)
LINEUP = re.compile(r"^- ([a-z0-9][a-z0-9-]*): (.+?) \((.+)\)$", re.M)
FEATURED = re.compile(r"featured: .*\(([a-z0-9][a-z0-9-]*)\)")
_ORDER = re.compile(r"(?<![A-Za-z0-9])(LR-\d+)(?!\d)", re.I)
_QUOTED = re.compile(r"\"([^\"]+)\"")


def _label_pattern(key: str, slot: str, capture: str) -> re.Pattern:
    """A pattern for the prompt line the harness renders from label ``key`` (in any
    language), ``{slot}`` captured by ``capture``: the prompt's words are read from where
    they are written (``harness.prompt``), never spelled here again."""
    forms = []
    for labels in LABELS.values():
        before, _, after = labels[key].partition("{" + slot + "}")
        forms.append(re.escape(before.strip()) + r"\s*" + capture + r"\s*" + re.escape(after.strip().rstrip(".。")))
    return re.compile("|".join(f"(?:{f})" for f in forms))


_LIMIT = re.compile(r"(\d+)\s*(?:" + "|".join(re.escape(L["max"].split("{n}")[1].strip()) for L in LABELS.values()) + ")")
_SLOGAN = _label_pattern("slogan", "slogan", r"(.+?)")
_GREETING = _label_pattern("greeting", "text", r"([^\"]+)")
_SIGN_OFF = _label_pattern("sign_off", "text", r"([^\"]+)")
_TURN_CAP = _label_pattern("max_tool_turns", "text", r"(\d+)")
_CJK = re.compile(r"[\u4e00-\u9fff]")
CLOCK = re.compile(r"^\[(\d+):(\d+)\]", re.M)
_IDLE_TOPICS = ("price", "stock", "shipping", "returns")


def stream_second(update: str, default: int = 0) -> int:
    """The stream second a room update's clock shows ("[05:12]" -> 312), or ``default``
    for a message without one."""
    clock = CLOCK.match(update)
    return int(clock.group(1)) * 60 + int(clock.group(2)) if clock else default


@dataclass(frozen=True)
class Terms:
    """What the system prompt asks of every reply: the length limit (the tightest it
    states; 280 when none), the greeting, the sign-off and the slogan ("" when none), and the
    tool turns allowed before a reply (``None`` when unlimited)."""

    limit: int
    greeting: str
    sign_off: str
    slogan: str
    turn_cap: int | None = None


@lru_cache(maxsize=64)
def terms(system: str) -> Terms:
    """The :class:`Terms` of a system prompt (plain text), read once per prompt."""
    limits = [int(n) for n in _LIMIT.findall(system)]
    first = lambda pattern: next((g for m in pattern.finditer(system) for g in m.groups() if g), "")  # noqa: E731
    cap = first(_TURN_CAP)
    return Terms(min(limits) if limits else 280, first(_GREETING), first(_SIGN_OFF), first(_SLOGAN),
                 int(cap) if cap else None)


@lru_cache(maxsize=8)
def phrasebook(language: str) -> Phrasebook:
    """The built-in phrasebook of a language (the avatars' wording and intent cues)."""
    return load_phrasebook(ENVS_DIR / "phrasebook" / f"{language}.yaml")


_DISCLOSE = {lang: re.compile("^" + re.escape(L["disclose"]).replace(re.escape("{forms}"), "(?P<forms>.+)")
                              .replace(re.escape("{when}"), "(?P<when>.+?)") + "$", re.M) for lang, L in LABELS.items()}


@lru_cache(maxsize=64)
def disclosure_rules(system: str, language: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``(when, forms)`` of each disclosure rule the system prompt states: ``when`` as the
    rules name it (``sponsored``, ``health_food``, a category), ``forms`` the words that
    make it, the first the plainest."""
    labels = {label: key for key, label in LABELS[language].get("when", {}).items()}
    out = []
    for m in _DISCLOSE[language].finditer(system):
        when = labels.get(m.group("when"), m.group("when")).replace(" ", "_")
        out.append((when, tuple(_QUOTED.findall(m.group("forms")))))
    return tuple(out)


def system_text(messages: list[dict]) -> str:
    """The system prompt as plain text, whatever format the harness renders it in."""
    return _plain(messages[0].get("content") or "")


@lru_cache(maxsize=64)
def _plain(system: str) -> str:
    # Cached: the prompt changes a few times a stream and is read on every step.
    if system.lstrip().startswith("{"):
        try:
            data = json.loads(system)
        except json.JSONDecodeError:
            return system
        if isinstance(data, dict):
            return "\n".join(str(v) for v in data.values())
    return system


def at_tool_turn_limit(messages: list[dict]) -> bool:
    """Whether the tool turns since the last reply (or room update) have reached the
    limit the system prompt states (``False`` when it states none)."""
    cap = terms(system_text(messages)).turn_cap
    if cap is None:
        return False
    used, i = 0, len(messages) - 1
    while i > 0 and messages[i]["role"] in ("tool", "assistant"):
        if messages[i]["role"] == "assistant":
            if not messages[i].get("tool_calls"):
                break
            used += 1
        i -= 1
    return used >= cap


def language_of(info: dict) -> str:
    """The room's language (from ``info["room"]``, else guessed from the system prompt)."""
    language = info.get("room", {}).get("language")
    if language:
        return language
    system = info["messages"][0].get("content") or "" if info.get("messages") else ""
    return "zh" if _CJK.search(system[:400]) else "en"


def room_update(messages: list[dict]) -> str:
    """The latest room update (clock, featured product, chat, waiting list): the last
    user message that is not a hook's note on a blocked reply."""
    return next((m["content"] or "" for m in reversed(messages)
                 if m["role"] == "user" and not (m["content"] or "").startswith("[hook]")), "")


def _stage(messages: list[dict]) -> list[tuple[int, str]]:
    """``(stream second, product featured)`` of each room update in view, oldest first."""
    shown = []
    for m in messages:
        text = m.get("content") or "" if m["role"] == "user" else ""
        featured = FEATURED.search(text) if CLOCK.match(text) else None
        if featured:
            shown.append((stream_second(text), featured.group(1)))
    return shown


def _featured_at(shown: list[tuple[int, str]], seconds: float) -> str:
    """The product on stage at stream time ``seconds``, as the room updates in view show
    it (``shown``: :func:`_stage`; the earliest in view when the time is before them):
    "this one" means the product that was featured when the viewer wrote, not the one
    featured now."""
    if not shown:
        return ""
    return next((pid for t, pid in reversed(shown) if t <= seconds), shown[0][1])


def waiting_in(messages: list[dict]) -> list[tuple[str, int, str]]:
    return [(m, int(s), t) for m, s, t in WAITING.findall(room_update(messages))]


def _tool_roles() -> tuple[tuple[str, tuple[str, ...]], ...]:
    """What each kind of tool is called in descriptions, in every language
    (``tool_roles`` of ``envs/host/<lang>.yaml``), the order kept: the first
    role wins a tie."""
    roles: dict[str, list[str]] = {}
    for language in ("en", "zh"):
        for role, words in host_lines(language).tool_roles.items():
            roles.setdefault(role, []).extend(words)
    return tuple((role, tuple(words)) for role, words in roles.items())


_TOOLS_FOR = {
    "price": ("price", "promotions"), "pitch": ("price", "promotions"), "stock": ("price", "promotions"),
    "promotion": ("price", "promotions"), "shipping": ("policy",), "returns": ("policy",), "warranty": ("policy",),
    "damaged": ("policy",),
}


def params_of(fn: dict) -> list[str]:
    return list(fn.get("parameters", {}).get("properties", {}))


def tool_role(fn: dict) -> str:
    """Which kind of tool ``fn`` is, from its parameters, name and description."""
    return _role_of(fn["name"], fn.get("description", ""), tuple(params_of(fn)))


@lru_cache(maxsize=1024)
def _role_of(name: str, description: str, params: tuple[str, ...]) -> str:
    # Cached: a harness has a handful of tools, asked about on every turn.
    text = f"{name} {description} {' '.join(params)}".lower()
    if not params:
        return "promotions"
    hits = {role: sum(w in text for w in words) for role, words in _tool_roles()}
    best = max(hits, key=hits.get)  # the first role wins a tie: order is checked first
    return best if hits[best] else "unknown"


@lru_cache(maxsize=16)
def lineup_names(system: str) -> dict[str, list[str]]:
    """Product id -> its names, read from the system prompt's lineup (cached: the avatar
    asks several times per reply, and the prompt changes rarely)."""
    return {pid: [name, *[a.strip() for a in extra.split(";")[1:]]] for pid, name, extra, _ in lineup_entries(system)}


@lru_cache(maxsize=16)
def lineup_entries(system: str) -> tuple[tuple[str, str, str, str], ...]:
    """``(product id, full name, "brand; aliases", brand)`` of each lineup line."""
    return tuple((pid, name, extra, extra.split(";")[0].strip()) for pid, name, extra in LINEUP.findall(system))


#: Intents that take a whole message: a bait, an injection or an after-sales case is
#: one ask, whatever else its words touch.
_WHOLE = ("inject", "bait", "damaged", "refund", "order_status")


def _product_in(low: str, lineup: dict[str, list[str]], featured: str = "",
                cues: frozenset[str] = frozenset()) -> tuple[str | None, str]:
    """The product whose longest name or alias appears in lower-cased ``low``, and that
    name; else the product a short reference means ("the watch", 这款精华: the kind a
    name ends with; the product on stage first, since viewers call it so), and the kind
    word said (read as no cue: "this charger how much" asks no battery question). A kind
    word that is one of ``cues`` (a one-word cue: "battery") names a product only as the
    kind its full name ends with ("the nuts" of the mixed nuts; not "battery" of the power
    bank, an alias's word): else it asks, and names nothing."""
    pid, best = None, ""
    for product_id, names in lineup.items():
        for n in names:
            if len(n) > len(best) and n.lower() in low:
                pid, best = product_id, n
    if pid is not None:
        return pid, best
    words = set(_WORD.findall(low))
    kinds: dict[str, str] = {}
    for product_id, names in lineup.items():
        said = next((w for n in names if (w := _kind_in(n.lower(), low, words))), "")
        if said and (said not in cues or _kind_in(names[0].lower(), low, {said})):
            kinds[product_id] = said
    if any(w not in cues for w in kinds.values()):  # "any nuts in the cookies?": the cookies
        kinds = {p: w for p, w in kinds.items() if w not in cues}
    if kinds:
        chosen = featured if featured in kinds else next(iter(kinds))
        return chosen, kinds[chosen]
    return None, ""


_WORD = re.compile(r"[a-z]{4,}")


def _kind_in(name: str, low: str, words: set[str]) -> str:
    """The word by which ``low`` refers to a product called ``name`` by its kind: the
    last word of the name ("serum", "watch" of "smartwatch"), or its last two or three
    Chinese characters (精华, 手表); ``""`` when it does not."""
    if name.isascii():
        last = name.rsplit(" ", 1)[-1]
        return next((w for w in words if last == w or (last.endswith(w) and len(w) >= 5)), "")
    tail = "".join(_CJK.findall(name))[-3:]
    if tail and tail in low:
        return tail
    return tail[1:] if len(tail) == 3 and tail[1:] in low else ""


def short_name(pid: str, lineup: dict[str, list[str]], fallback: str) -> str:
    """The shortest name the lineup gives ``pid`` (an alias: replies stay within the
    length limit, and the reward knows aliases as well as full names)."""
    names = lineup.get(pid)
    return min(names, key=len) if names else fallback


def _intent_of(low: str, book: Phrasebook) -> str | None:
    """The first intent with a cue in ``low``, a Latin cue read at the start of a word
    ("skin" is not in "asking for a friend")."""
    norm = normalize(low)
    return next((intent for intent, pattern in book.cue_patterns if pattern.search(norm)), None)


@lru_cache(maxsize=4096)
def asks_in(text: str, system: str, language: str, featured: str = "") -> tuple[tuple[str, str | None, tuple[str, ...]], ...]:
    """:func:`_asks` of a waiting request under the lineup of ``system`` (plain text),
    cached: a request waits, and is read again, for many steps."""
    return tuple((i, p, tuple(o)) for i, p, o in _asks(text, lineup_names(system), phrasebook(language), featured))


def _asks(text: str, lineup: dict[str, list[str]], book: Phrasebook,
          featured: str = "") -> list[tuple[str, str | None, list[str]]]:
    """What a waiting request asks, as ``(intent, product id or None, order ids)`` per ask.

    A merged request shows its messages as ``"A / B"``; a message may carry a second ask
    after one of the phrasebook's joiners ("price? and any left", "多少钱 另外还剩几件").
    Each part is read on its own: its product is the one it names, else the one named
    earlier in the same message, else none (the product on stage: "this one", 这款).
    """
    out: list[tuple[str, str | None, list[str]]] = []
    split = book.joiner_pattern
    for part in text.split(" / "):
        low = part.lower()
        if book.pointer_pattern is not None:  # "the light wash one": the product on stage
            low = book.pointer_pattern.sub(lambda m: m.group() if _intent_of(m.group(), book) else "this one", low)
        pid, name = _product_in(low, lineup, featured, book.cue_words)
        rest = low.replace(name.lower(), " ") if name else low
        whole = _intent_of(rest, book) or (_intent_of(low, book) if name else None)  # "the magnetic battery last?"
        orders = _ORDER.findall(part)
        if whole in ("inject", "bait") or split is None:
            out.append((whole or ("price" if pid else "social"), pid, orders))
            continue
        segments = book.split_asks(low)
        found = []
        if whole in _WHOLE:  # "came damaged, how do i return it + free shipping?": after-sales first
            found.append((whole, pid, orders))
            segments = segments[1:]
        for segment in segments:
            own, own_name = _product_in(segment, lineup, featured, book.cue_words) if segment.strip() else (None, "")
            seg_rest = segment.replace(own_name.lower(), " ") if own_name else segment
            intent = _intent_of(seg_rest, book) or (_intent_of(segment, book) if own_name else None)
            if intent is not None and intent not in _WHOLE:
                found.append((intent, own or pid, orders))
        out.extend(found or [(whole or ("price" if pid else "social"), pid, orders)])
    return [(i, p, list(o)) for i, p, o in dict.fromkeys((i, p, tuple(o)) for i, p, o in out)]
