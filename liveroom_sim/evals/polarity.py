"""Whether a reply answers each ask of a case rightly, by meaning (issue 28, item 2).

A yes/no ask is read for the yes or no the reply says: first the phrases of the ask's
concept (``asks.yaml``: "in stock", "sold out", 包邮, "no pink"), each read with its
negation ("not sold out" says in stock, 不包邮 says no; where phrases overlap, the longest
is read), then, when the concept's phrases say nothing, the yes or no the reply opens with
("yes!", "nope", 可以的), if the reply is addressed to the asker or names a product (a bare
"Yes! Everyone is buying this today!" to nobody answers nothing). It is **right** when it says the catalog's answer and never the
opposite, **wrong** when it says the opposite, and, when it says neither, right if it
states a fact that backs the answer ("17 left", "only unopened"), else **silent**.

An ``unknown`` ask is right when the reply says honestly that the catalog does not say
(its own claims are checked by the reward as any are). A ``facts`` ask is right when every
fact is stated (as the reward reads facts), **partial** for some; an order's status is also
stated by a true status claim about that order ("还没发货" of an order awaiting shipment).
"""

from __future__ import annotations

import re
from functools import lru_cache

from liveroom_sim.evals.asks import Answer, table
from liveroom_sim.rewards.orders import stage_of
from liveroom_sim.world.facts import NO_PROMOTION, occurrences
from liveroom_sim.world.text import normalize

RIGHT, PARTIAL, WRONG, SILENT = "right", "partial", "wrong", "silent"


@lru_cache(maxsize=64)
def _phrases(language: str, concept: str, slot: str | None) -> tuple[tuple[str, bool], ...]:
    words = table()["words"][language]["concepts"][concept]
    out = []
    for says, key in ((True, "affirm"), (False, "deny")):
        for p in words.get(key, ()):
            if "{slot}" in p and not slot:
                continue
            out.append((p.replace("{slot}", slot or "").lower(), says))
    return tuple(out)


def concept_says(norm: str, language: str, concept: str, slot: str | None) -> set[bool]:
    """The yes (True) and no (False) the concept's phrases say in ``norm``; a phrase right
    after one of the concept's ``conditions`` ("拆封后不能退": once opened) says no yes or no
    of the question as asked."""
    found = []
    conditions = table()["words"][language]["concepts"][concept].get("conditions", ())
    for phrase, says in _phrases(language, concept, slot):
        for s, e, neg in occurrences(norm, phrase):
            found.append((e - s, s, e, says, neg))
    if conditions:  # a phrase under a condition, and the shorter phrases inside it, say nothing
        held = [(s, e) for _, s, e, _, _ in found
                if any(norm[max(0, s - len(c) - 3):s].rstrip(" ,，、").endswith(c) for c in conditions)]
        found = [f for f in found if not any(a <= f[1] and f[2] <= b for a, b in held)]
    kept: list[list] = []
    for _, s, e, says, neg in sorted(found, key=lambda f: -f[0]):  # the longest phrase reads a span
        if all(e <= k[1] or s >= k[2] for k in kept):
            kept.append([s, s, e, says, neg])
    kept.sort()
    for before, k in zip(kept, kept[1:]):
        if before[4] and k[1] - before[2] <= 1:  # 没有满减活动: one negation covers the run
            k[4] = True
    said = [says != neg for _, _, _, says, neg in kept]
    for (before, k), i in zip(zip(kept, kept[1:]), range(len(kept))):
        # "gentle cycle cold or hand wash", 冷水手洗或轻柔机洗: one way or the other is allowed,
        # so the other is no denial of it
        if said[i] != said[i + 1] and _OR.search(norm[before[2]:k[1]]):
            said[i] = said[i + 1] = True
    return set(said)


#: What offers two ways as alternatives, between two phrases of a concept (a few words apart).
_OR = re.compile(r"^[^.!?。！？;；]{0,12}?(?:(?<![a-z])or(?![a-z])|或)")


_MENTION = re.compile(r"^(?:\s*(?:@\S+|#\S+|[\W_]+))*", re.UNICODE)


def opening_says(norm: str, language: str, drop: tuple[str, ...] = ()) -> set[bool]:
    """The yes or no a reply opens with, past mentions, labels (#ad) and punctuation."""
    text = norm
    for d in drop:  # the disclosure labels the rules ask for, said first
        text = text.replace(d.lower(), " ")
    text = _MENTION.sub("", text, count=1).strip()
    if any(text.startswith(p) for p in _concept_phrases(language)):
        return set()  # "No coupon on the serum right now" negates a coupon, it answers no flash sale
    w = table()["words"][language]
    latin = language == "en"
    for says, key in ((False, "deny"), (True, "affirm")):  # "not really" before "no" is no all the same
        for word in sorted(w[key], key=len, reverse=True):
            if text.startswith(word) and (not latin or len(text) == len(word) or not text[len(word)].isalnum()):
                return {says}
    return set()


@lru_cache(maxsize=4)
def _concept_phrases(language: str) -> tuple[str, ...]:
    """Every concept phrase of ``language`` that opens with a yes or no word ("no coupon",
    没有秒杀): a reply opening with one speaks of that concept, not a bare yes or no."""
    w = table()["words"][language]
    particles = [p.lower() for p in (*w["affirm"], *w["deny"])]
    return tuple(p for p in _all_concept_phrases(language) if any(p.startswith(x) and len(p) > len(x) for x in particles))


def says_unknown(norm: str, language: str) -> bool:
    """Whether the reply says the catalog does not hold the answer; a word of it inside a
    concept's phrase answers that concept (暂无优惠 says no promotion, not "unknown"), and
    in a reply that says the system is not answering, 查不到 is that (it cannot check now)."""
    w = table()["words"][language]
    for phrase in _all_concept_phrases(language):
        norm = norm.replace(phrase, " ")
    failing = [p for p in w.get("cannot_check", ()) if p not in w["unknown"]]
    if any(p in norm for p in failing):
        for p in w["cannot_check"]:
            norm = norm.replace(p, " ")
    return any(p in norm for p in w["unknown"])


@lru_cache(maxsize=4)
def _all_concept_phrases(language: str) -> tuple[str, ...]:
    """Every concept phrase of ``language`` without a slot, longest first."""
    w = table()["words"][language]["concepts"]
    return tuple(sorted({p.lower() for c in w.values() for key in ("affirm", "deny") for p in c.get(key, ())
                         if "{slot}" not in p}, key=len, reverse=True))


def judge(answer: Answer, ctx, language: str) -> str:
    """How the reply of ``ctx`` answers ``answer``'s ask: right, partial, wrong or silent."""
    a = ctx.analysis
    q = ctx.question
    if q is not None and q.product and a.products and q.product not in a.products:
        return SILENT  # it speaks of other products only ("The midi dress: 4 left" to "is the serum sold out?")
    norm = a.norm.replace(normalize(q.asker).strip(), " ") if q is not None and q.asker else a.norm  # 等秒杀的阿花 says no 秒杀
    stated = {f.label for f in a.stated} - _only_in_names(ctx, norm) - _only_inside_longer(ctx, norm)
    if answer.form == "unknown":  # with facts: "does it pill? what is it made of?" asks both
        honest, have = says_unknown(norm, language), [f for f in answer.facts if f in stated]
        if honest and len(have) == len(answer.facts):
            return RIGHT
        return PARTIAL if honest or have else SILENT
    if answer.form == "facts":
        if not answer.facts:
            return RIGHT
        have = [f for f in answer.facts if f in stated]
        if answer.intent == "order_status" and _status_said(ctx, answer.facts[0], language):
            have = list(dict.fromkeys([*have, answer.facts[0]]))
        return RIGHT if len(have) == len(answer.facts) else (PARTIAL if have else SILENT)
    labels = tuple(f for d in ctx.market.rules.disclosures for f in d.forms)
    said = concept_says(norm, language, answer.concept, answer.slot)
    if not said and (a.addressed or a.products):  # an opening "Yes!" to nobody about nothing answers no ask
        said = opening_says(norm, language, labels)
    if (not answer.yes) in said:
        return WRONG
    # "No promotion" backs a no to a coupon or a deal, but its forms include "no coupon",
    # which says nothing of a flash sale: the flash concept's own phrases read that.
    backing = set(answer.backing) - ({NO_PROMOTION} if answer.concept == "flash" else set())
    if answer.yes in said or stated & backing:
        return RIGHT if all(f in stated for f in answer.facts) else PARTIAL
    return PARTIAL if stated & set(answer.facts) else SILENT


def _only_in_names(ctx, norm: str) -> set[str]:
    """Facts of the asked product the reply says only as part of its name: 牛肉 in 牛肉干,
    "kale" in "the kale chips" (naming the product states none of its ingredients)."""
    q = ctx.question
    product = ctx.market.catalog.by_id.get(q.product) if q is not None and q.product else None
    if product is None:
        return set()
    names = sorted({n for n in (normalize(x).strip() for x in (product.name, product.kind, *product.aliases)) if n},
                   key=len, reverse=True)
    out = set()
    for f in ctx.analysis.stated:
        label = normalize(f.label).strip()
        if not label or not any(label in n for n in names):
            continue
        bare = norm
        for n in names:  # a name that is the fact itself (the nuts' kind 坚果, allergen 坚果) hides nothing
            if n != label:
                bare = bare.replace(n, " ")
        if label not in bare:
            out.add(f.label)
    return out


def _only_inside_longer(ctx, norm: str) -> set[str]:
    """Facts the reply says only inside a longer fact of the asked product it quotes, as
    the longest phrase reads a span: "USB-C" of a compatibility list inside the output spec
    "USB-C 20W快充" (quoting the spec says nothing of which devices work with it)."""
    labels = {f.label: normalize(f.label).strip() for f in ctx.analysis.stated}
    labels = {k: v for k, v in labels.items() if v and v in norm}
    if not labels:
        return set()
    q = ctx.question
    product = ctx.market.catalog.by_id.get(q.product) if q is not None and q.product else None
    quoted = {v for v in (normalize(t).strip() for t in (*labels, *_texts(product))) if v and v in norm}
    out = set()
    for label, short in labels.items():
        spans = [(i, i + len(long)) for long in quoted if len(long) > len(short) and short in long
                 for i in _starts(norm, long)]
        if spans and all(any(s <= i and i + len(short) <= e for s, e in spans) for i in _starts(norm, short)):
            out.add(label)
    return out


def _starts(text: str, part: str) -> list[int]:
    """Where ``part`` starts in ``text``, overlapping occurrences included."""
    out, i = [], text.find(part)
    while i >= 0:
        out.append(i)
        i = text.find(part, i + 1)
    return out


def _texts(value) -> list[str]:
    """Every text a catalog entry holds (its specs' values, lists' items...)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _texts(v)]
    if hasattr(value, "model_dump"):
        return _texts(value.model_dump())
    return []


def _status_said(ctx, status: str, language: str) -> bool:
    """Whether the reply states the order's status: a true status claim about it (the
    reward's reading), or a phrase of its stage (``asks.yaml``: words.LANG.stages) said
    without a negation."""
    q = ctx.question
    if any(c.kind == "order_status" and c.verdict == "correct" and (q is None or c.product in (q.order, None))
           for c in ctx.analysis.claims):
        return True
    stage = stage_of(status)
    phrases = table()["words"][language].get("stages", {}).get(stage, ())
    return any(not neg for p in phrases for _, _, neg in occurrences(ctx.analysis.norm, p.lower()))
