"""What a live-commerce editor would strike from a host's reply: the text-quality check.

:func:`reply_problems` reads one reply against the messages the host was given for it
(the system prompt for the disclosures and the lineup, the room update for who waits
and what each viewer asked) and names every problem a reader would notice:

- ``count``: a number and its unit that disagree ("1 days", "3 month") or a time that
  is no time ("arriving in 0 days", 预计0天送达).
- ``money``: an amount written with one decimal or more than two ("$18.5", "121.045元").
- ``punctuation``: two sentence ends in a row ("。。", "! ."), a comma or colon ending a
  sentence (":。"), a space before a stop.
- ``capital`` (English): a sentence that begins in lower case ("@jo glow serum is ...").
- ``run_on``: a disclosure run into the next words ("广告用券码", "not evaluated by
  the FDA Code X is on today").
- ``repeat``: a fact said twice in one reply (the same amount, the same coupon code or
  order id, the same sentence), or, over a transcript (:func:`transcript_problems`),
  said again to nobody in particular within a minute.
- ``style``: a reply over the length limit in force, or without the greeting or the
  sign-off the harness asks every reply to have.
- ``empty``: a reply that says nothing beyond the mention, greeting, slogan,
  disclosures and sign-off the harness asks for.
- ``mention``: one viewer addressed twice, or a product another waiting viewer asked
  about answered under the mention of a viewer who did not ask about it.

The checks read text the way a person does; they know nothing of how the built-in hosts
compose replies, so they hold any policy (an LLM's transcripts too) to the same bar.
``tests/policies/test_text_quality.py`` runs it over the reference host's transcripts.

Example:
    >>> [p.kind for p in reply_problems("@jo glow serum is $18.5 right now. Arriving in 1 days.", [], "en")]
    ['count', 'money', 'capital']
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import cache

from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.policies.reading import FEATURED, LINEUP, system_text, waiting_in, disclosure_rules, terms

_PUNCT = (
    re.compile(r"[.!?。！？][ \t]*[.。]"),    # "。。", "! ."
    re.compile(r"[,，;；:：][ \t]*[.!?。！？]"),  # ":。"
    re.compile(r"[A-Za-z0-9)] [.,!?](?:\s|$)"),  # "word ." (English: no space before a stop)
)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)([a-z])")
_CODE = re.compile(r"\b(?:[A-Z]{3,}\d{2,}|LR-\d+)\b")
_SENTENCE_END = re.compile(r"(?:(?<=[!?。！？])|(?<=\.)(?!\d))\s*")  # not the point of "100.90元"
_MENTIONS = re.compile(r"^(?:@\S+?:?|\[to [^\]]+\]|<@[^>]+>)\s+")


@cache
def _checks(language: str) -> dict[str, tuple[re.Pattern, ...]]:
    """The language's count and money patterns (``quality`` of its host wording file)."""
    quality = host_lines(language).quality
    return {k: tuple(re.compile(p) for p in quality.get(k, ())) for k in ("count", "money")}


@cache
def _amounts() -> re.Pattern:
    """Any amount of money, in any language."""
    return re.compile("|".join(p for lang in ("en", "zh") for p in host_lines(lang).quality.get("amount", ())))


@dataclass(frozen=True)
class TextProblem:
    """One problem in one reply: its ``kind`` (see the module docstring), the words at
    fault and the reply they are in."""

    kind: str
    found: str
    reply: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.found!r} in {self.reply!r}"


def reply_problems(reply: str, messages: list[dict], language: str, staged: set[str] = frozenset()) -> list[TextProblem]:
    """Every problem of ``reply``, a reply (not a tool turn) to ``messages``, the chat the
    host was given for it (its system prompt and latest room update; ``[]`` checks the
    text alone); ``staged``: products on stage earlier this stream, before the updates
    in view (a waiting "this one" may mean one of them)."""
    system = system_text(messages) if messages else ""
    out: list[TextProblem] = []

    def flag(kind: str, found: str) -> None:
        out.append(TextProblem(kind, found, reply))

    checks = _checks(language)
    for kind in ("count", "money"):
        for pattern in checks[kind]:
            for m in pattern.finditer(reply):
                flag(kind, m.group(0))
    for pattern in _PUNCT:
        for m in pattern.finditer(reply):
            flag("punctuation", m.group(0))
    waiting = waiting_in(messages) if messages else []
    handles = {_handle(h) for h, _, _ in waiting}
    if language == "en":
        body = _without_mention(reply, handles)
        for m in _SENTENCE_START.finditer(body):
            flag("capital", body[max(0, m.start(1) - 12): m.start(1) + 12].strip())
    for form in _disclosure_forms(system):
        for m in re.finditer(re.escape(form), reply, re.I):
            after = reply[m.end(): m.end() + 1]
            ends = after == "" or after in ".!?。！？）)】" or (after.isspace() and (form.startswith("#") or " " not in form))
            if not ends and not (after in ",，" and form.startswith("#")):
                flag("run_on", reply[m.start(): m.end() + 8])
    t = terms(system)
    if len(reply) > t.limit:
        flag("style", f"{len(reply)} characters, over the limit of {t.limit}")
    if t.greeting and t.greeting not in reply:
        flag("style", f"no greeting {t.greeting!r}")
    if t.sign_off and not reply.rstrip().endswith(t.sign_off):
        flag("style", f"does not end with {t.sign_off!r}")
    if not _says_something(reply, system, handles):
        flag("empty", reply)
    for kind, found in _repeats(reply, _lineup_of(system)):
        flag(kind, found)
    for found in _mention_problems(reply, waiting, system, staged | _staged(messages)):
        flag("mention", found)
    return out


def _says_something(reply: str, system: str, handles: set[str]) -> bool:
    """Whether ``reply`` says anything beyond the mention, the greeting, the slogan, the
    disclosures and the sign-off the harness asks for."""
    rest = _without_mention(reply, handles)
    t = terms(system)
    for said in (t.greeting, t.sign_off, t.slogan, *_disclosure_forms(system)):
        if not said:
            continue
        rest = rest.replace(said, " ")
    return bool(re.search(r"[A-Za-z0-9\u4e00-\u9fff]", rest))


def _without_mention(reply: str, handles: set[str]) -> str:
    """``reply`` from its first word after any leading mention (in any harness format)."""
    m = _MENTIONS.match(reply)
    if m and (not handles or any(h in m.group(0) for h in handles)):  # no waiting list: any handle
        return reply[m.end():]
    return reply


def _disclosure_forms(system: str) -> list[str]:
    """The disclosure forms the rules in force name, in either language."""
    forms = {f for lang in ("en", "zh") for _, fs in disclosure_rules(system, lang) for f in fs}
    return sorted(forms, key=len, reverse=True)


def _repeats(reply: str, lineup: dict[str, list[str]]) -> list[tuple[str, str]]:
    """Facts said twice: the same sentence, or the same amount, coupon code or order id
    twice about the same product (a sentence that names none is about the one before
    it; a code that works on two products may be said of each)."""
    out = []
    seen: set[tuple[str, frozenset]] = set()
    about: frozenset = frozenset()
    sentences = [s.strip() for s in _SENTENCE_END.split(reply) if s.strip()]
    for sentence in sentences:
        about = frozenset(_named(sentence, lineup)) or about
        for found in (*_amounts().findall(sentence), *_CODE.findall(sentence)):
            if (found, about) in seen:
                out.append(("repeat", found))
            seen.add((found, about))
    counts = Counter(s.lower() for s in sentences if len(s) > 6)
    return out + [("repeat", s) for s, n in counts.items() if n > 1]


def _lineup_of(system: str) -> dict[str, list[str]]:
    """Product id -> ``[name, brand, *aliases]`` from the system prompt's lineup."""
    return {pid: [name, *[a.strip() for a in extra.split(";")]] for pid, name, extra in LINEUP.findall(system)}


def _named(text: str, lineup: dict[str, list[str]], kinds: bool = False) -> set[str]:
    """The products ``text`` names by their name or an alias (not the brand, which
    several products share); with ``kinds``, also by their kind ("the earbuds", 耳机)."""
    low = text.lower()
    out = set()
    for pid, names in lineup.items():
        own = [names[0], *names[2:]]
        if any(n.lower() in low for n in own) or (kinds and any(_kind(n) in low for n in own if _kind(n))):
            out.add(pid)
    return out


def _kind(name: str) -> str:
    """The word a product's kind goes by: the last English word, the last two Chinese
    characters."""
    han = re.findall(r"[\u4e00-\u9fff]", name)
    return "".join(han[-2:]) if han else name.lower().rsplit(" ", 1)[-1]


def _handle(shown: str) -> str:
    """A viewer's handle as the waiting list shows it in any mention format."""
    return re.sub(r"^(?:\[to |<@|@)|[\]>:]$", "", shown).rstrip(":")


def _mention_problems(reply: str, waiting: list[tuple[str, int, str]], system: str, on_stage: set[str]) -> list[str]:
    """A viewer addressed twice; a product some other waiting viewer asked about by name,
    answered under the mention of a viewer whose request is about other products (and
    not about a product that was on stage: "this one")."""
    if not waiting:
        return []
    lineup = _lineup_of(system)
    asked: dict[str, set[str]] = {}
    named: dict[str, set[str]] = {}
    for shown, _, text in waiting:
        h = _handle(shown)
        asked.setdefault(h, set()).update(_named(text, lineup, kinds=True))
        named.setdefault(h, set()).update(_named(text, lineup))
    out = []
    said = {h: len(re.findall(rf"(?<![\w.]){re.escape(h)}(?![\w.])", reply)) for h in asked}
    addressed = [h for h, n in said.items() if n]
    out += [f"{h} addressed twice" for h in addressed if said[h] > 1]
    if len(addressed) != 1 or not asked[addressed[0]]:
        return out
    me = addressed[0]
    others = set().union(set(), *(p for h, p in named.items() if h != me))
    for pid in sorted((_named(reply, lineup) - asked[me] - on_stage) & others):
        out.append(f"{pid} (asked by another viewer) answered to {me}")
    return out


#: How long a fact said to nobody in particular must not be said again to nobody.
NEARBY_S = 60


def transcript_problems(steps: list[tuple[str, list[dict]]], language: str) -> list[TextProblem]:
    """The problems of a host's replies, given as ``(action, messages it answered)``
    per step (tool turns, JSON actions, and silence are skipped), and ``repeat``: a
    sentence stating a fact (a number, an amount, a code) said again within
    :data:`NEARBY_S` seconds of stream by a reply that addresses nobody (an idle pitch
    saying the last minute again; an answer to a viewer who asks may say it again).

    Example:
        >>> update = lambda t: [{"role": "user", "content": f"[00:{t:02d}] featured: x (x-1)"}]
        >>> steps = [("The earbuds: 149 left in stock.", update(5)), ("@jo The earbuds: 149 left in stock.", update(9)),
        ...          ("The earbuds: 149 left in stock.", update(30))]
        >>> [p.found for p in transcript_problems(steps, "en")]
        ['said again within 60 s: the earbuds: 149 left in stock.']
    """
    out = []
    said: list[tuple[int, set[str]]] = []
    staged: dict[str, int] = {}  # product -> the last stream second an update showed it on stage
    for action, messages in steps:
        now = _clock(messages)
        if now is not None:
            staged.update(dict.fromkeys(_staged(messages), now))
        if action.lstrip().startswith("{") or not action.strip():
            continue
        oldest = now - max((w for _, w, _ in waiting_in(messages)), default=0) if now is not None else 0
        out += reply_problems(action, messages, language, {p for p, at in staged.items() if at >= oldest})
        facts = _fact_sentences(action)
        if now is not None:
            if not _MENTIONS.match(action):
                recent = set().union(set(), *(f for at, f in said if now - at <= NEARBY_S))
                out += [TextProblem("repeat", f"said again within {NEARBY_S} s: {f}", action)
                        for f in sorted(facts & recent)]
            said.append((now, facts))
    return out


CLOCK = re.compile(r"^\[(\d+):(\d+)\]", re.M)


def _staged(messages: list[dict]) -> set[str]:
    """The products the room updates in ``messages`` show on stage."""
    return {pid for m in messages if m["role"] == "user" for pid in FEATURED.findall(m.get("content") or "")}


def _clock(messages: list[dict]) -> int | None:
    """The stream second of the latest room update in ``messages`` (None: none)."""
    for m in reversed(messages):
        if m["role"] == "user":
            c = CLOCK.search(m.get("content") or "")
            if c:
                return int(c.group(1)) * 60 + int(c.group(2))
    return None


def _fact_sentences(reply: str) -> set[str]:
    """The sentences of ``reply`` (after its mention) that state a number, an amount or
    a code, as read (lower case)."""
    body = _MENTIONS.sub("", reply, count=1)
    return {s.strip().lower() for s in _SENTENCE_END.split(body) if re.search(r"\d", s)}


__all__ = ["TextProblem", "reply_problems", "transcript_problems"]
