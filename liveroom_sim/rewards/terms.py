"""Term claims: statements without a number ("sold out", "free shipping",
"pregnancy-safe", "no common allergens", "contains peanuts", 不含坚果), each attributed to
a product and checked against it now, negation read both ways (see
:mod:`liveroom_sim.rewards.claims`)."""

from __future__ import annotations

import re
from functools import cache

from liveroom_sim.rewards.catalog_index import PHRASE, VOCAB
from liveroom_sim.rewards.claim import MAX_CLAIMS, Claim
from liveroom_sim.rewards.claim import ClaimKind as K
from liveroom_sim.rewards.claim import Verdict as V
from liveroom_sim.world.facts import NEGATED_AFTER, NEGATION, occurrences
from liveroom_sim.world.market import Market
from liveroom_sim.world.phrasebook import reading_words
from liveroom_sim.world.text import normalize_phrase

_SENTENCE = re.compile(r"[!?;\n！？；。]|\.(?!\d)")
# Every match of facts.NEGATION holds one of these: a text without any cannot negate (a
# search for them skips ahead; NEGATION, anchored at the end, is tried at every position).
_MAY_NEGATE = re.compile(r"no|never|n't|without|zero|不|没|未|无|非")


#: The term claims of fixed phrases: phrasebook key, claim kind, and whether it holds of a
#: product now. Longer, negative forms first, so that "not pregnancy-safe" is not also
#: read as "pregnancy-safe".
_TERMS = (
    ("pregnancy_unsafe", K.PREGNANCY, lambda p, market: not getattr(p, "pregnancy_safe", True)),
    ("pregnancy_safe", K.PREGNANCY, lambda p, market: bool(getattr(p, "pregnancy_safe", False))),
    ("no_allergens", K.ALLERGEN, lambda p, market: not getattr(p, "allergens", None)),
    ("sold_out", K.SOLD_OUT, lambda p, market: market.stock[p.id] == 0),
    ("in_stock", K.IN_STOCK, lambda p, market: market.stock[p.id] > 0),
    ("free_shipping", K.FREE_SHIPPING, lambda p, market: p.shipping.fee == 0),
)


@cache
def _contains() -> re.Pattern:
    """Any of the words that claim a product holds what follows (the phrasebooks'
    ``reading.contains``: "contains", "made with", 含), in one search."""
    return re.compile("|".join(map(re.escape, reading_words().contains)) or "(?!)")


def term_claims(r, market: Market, fallback: str, words) -> list[Claim]:
    norm, claims = r.norm, []
    index = r.index
    # One scan tells which passes below can find anything (see CatalogIndex.terms and
    # term_tags): most replies state no such fact.
    found = index.term_tags(words, norm)
    if PHRASE not in found and VOCAB not in found:
        return claims
    taken: set[int] = set()  # positions already read as part of a claim

    def spans(key):
        for w in words.get(key, ()):
            for s, e, neg in occurrences(norm, w):
                if len(claims) >= MAX_CLAIMS:
                    return
                if s not in taken and not r.named_over(s, e):  # ("Pregnancy-Safe Glow Oil" is a name)
                    taken.update(range(s, e))
                    # (a phrase denied at its verb is quoted as said: "shipping isn't free")
                    denied_at_verb = neg and norm[s:e] != normalize_phrase(w)
                    yield s, w, neg, norm[s:e] if denied_at_verb else ("not " if neg else "") + w

    p = market.catalog.by_id
    for key, kind, truth in _TERMS if PHRASE in found else ():
        if key not in found:
            continue  # none of its phrases is in the text
        for s, w, neg, said in spans(key):
            pid = r.product_at(s, fallback)
            if key.startswith("pregnancy") and getattr(p[pid], "pregnancy_safe", None) is None:
                continue
            if key == "no_allergens" and not hasattr(p[pid], "allergens"):
                continue
            holds = truth(p[pid], market)
            claims.append(Claim(kind, said, V.CORRECT if holds != neg else V.INVENTED, pid))
    if VOCAB not in found:
        return claims  # no allergen or ingredient named
    for vocab, attr, kind in ((index.allergen_words, index.allergens, K.ALLERGEN),
                              (index.ingredient_words, index.ingredients, K.INGREDIENT)):
        if vocab is None:
            continue
        for seen, m in enumerate(vocab.finditer(norm)):
            if len(claims) >= MAX_CLAIMS or seen >= 4 * MAX_CLAIMS:
                break  # a reply is read up to MAX_CLAIMS statements
            if m.start() in taken or r.named_over(m.start(), m.end()):
                continue  # (read already, or a word of a product's name: "Peanut-free Crunch", 无糖饼干)
            before = norm[max(0, m.start() - 40):m.start()]
            cut = list(_SENTENCE.finditer(before))
            before = before[cut[-1].end():] if cut else before
            neg = bool(_MAY_NEGATE.search(before) and NEGATION.search(before)) or \
                bool(NEGATED_AFTER.match(norm[m.end():m.end() + 9]))
            if not neg and not _contains().search(before) and "," not in before[-3:]:
                continue  # named, not claimed ("for a nut allergy")
            pid = r.product_at(m.start(), fallback)
            if kind == K.ALLERGEN and not hasattr(p[pid], "allergens") or \
                    kind == K.INGREDIENT and not hasattr(p[pid], "ingredients"):
                continue
            word = m.group(0)
            has = any(word == a or word in a or a in word for a in attr[pid])
            claims.append(Claim(kind, ("no " if neg else "") + word, V.CORRECT if has != neg else V.INVENTED, pid))
            taken.update(range(m.start(), m.end()))
    return claims
