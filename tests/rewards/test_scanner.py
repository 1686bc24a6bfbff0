"""The one-pass readers find exactly what the regex readings they replaced found.

Each fast reader (the Aho-Corasick vocabularies of rewards/scanner.py and their uses: the
product names, the rule keys, the term-claim prefilter; the clause marks; the coupon-code
tokens) is checked against its slow reference over random and adversarial texts built
from the shipped catalogs' names, the rule sets' words and the characters that make
matching hard (overlapping names, inflections glued to letters, Chinese keys inside
longer keys, separators, digits around full stops). A difference is a reward change."""

from __future__ import annotations

import re
from functools import lru_cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from liveroom_sim.rewards.analysis import products_named
from liveroom_sim.rewards.catalog_index import (
    CODE_TOKEN,
    PHRASE,
    TERM_KEYS,
    VOCAB,
    catalog_index,
    common_allergens,
    code_tokens,
    trie_pattern,
)
from liveroom_sim.rewards.cases import world_for
from liveroom_sim.rewards.claims import clause_starts
from liveroom_sim.rewards.lexicon import fold
from liveroom_sim.rewards.rulebook import rulebook
from liveroom_sim.rewards.scanner import Literals
from liveroom_sim.world.facts import denied_copula
from liveroom_sim.world.text import normalize, normalize_phrase

ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0")
CHECK = settings(max_examples=150, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
_ALNUM = re.compile(r"[a-z0-9]+")
_GLUE = ["", " ", "  ", ".", ",", "-", "_", "s", "ed", "ing", "x", "1", "9.", ".5", "最", "好", "一", "不", "@", "#",
         "，", "。", "!", "\n", "\u200b", "A", "Z9", "😀"]


@lru_cache(maxsize=None)
def _fragments(env: str) -> tuple[str, ...]:
    """Pieces of text a reply of ``env`` may be built from: its names (whole and cut),
    rule words and keys, fact phrases and allergens, and glue characters."""
    world = world_for(env)
    book = rulebook(world.rules)
    index = catalog_index(world.catalog)
    words = list(book.keys.words)
    names = list(index.names)
    terms = list(index.terms(world.phrasebook.fact_words).words)
    cut = [n[:i] for n in names for i in (1, len(n) // 2, len(n) - 1) if 0 < i < len(n)]
    return tuple(sorted({*words, *names, *cut, *terms, *_GLUE}))


def _text(env: str):
    pieces = st.lists(st.sampled_from(_fragments(env)), max_size=24).map("".join)
    return st.one_of(pieces, st.text(max_size=40), st.tuples(pieces, st.text(max_size=8), pieces).map("".join))


# -- Literals against the plain-Python meaning of each reading ---------------------------------------------

_SMALL = st.text(alphabet="ab最好 .1", min_size=0, max_size=4)


@CHECK
@given(st.lists(_SMALL, max_size=8), st.text(alphabet="ab最好 .1c", max_size=30))
def test_literals_longest_is_the_regex_alternation_longest_first(words, text):
    words = sorted({w for w in words if w})
    lit = Literals((w, w) for w in words)
    expected = [(m.start(), m.end(), m.group(0)) for m in re.finditer(trie_pattern(words), text)] if words else []
    assert lit.longest(text) == expected


@CHECK
@given(st.lists(_SMALL, max_size=8), st.text(alphabet="ab最好 .1c", max_size=30))
def test_literals_present_is_substring_membership(words, text):
    lit = Literals((w, w) for w in set(words))
    assert lit.present(text) == {w for w in set(words) if w in text}  # the empty string is in every text


@CHECK
@given(st.lists(st.text(alphabet="ab1", min_size=1, max_size=3) | st.text(alphabet="最好", min_size=1, max_size=2),
                max_size=8),
       st.text(alphabet="ab1最好 .-c", max_size=30))
def test_literals_whole_words_are_the_words_of_the_text(words, text):
    lit = Literals((w, w) for w in set(words))
    tokens = set(_ALNUM.findall(text))
    assert lit.whole_words(text) == {w for w in set(words) if (w in tokens if w.isascii() else w in text)}


def test_literals_reject_one_literal_with_two_values():
    try:
        Literals([("best", 1), ("best", 2)])
    except ValueError as exc:
        assert "best" in str(exc)
    else:
        raise AssertionError("a literal with two values was accepted")


# -- the readers of a reply against their references, on the shipped specs -------------------------------

def _candidates_word_by_word(book, text: str) -> set:
    """What ``Rulebook.candidates`` means: the rules whose English key is one of the
    text's words, or whose Chinese key the text holds anywhere."""
    out, tokens = set(book.always), set(_ALNUM.findall(text))
    for key, ids in zip(book.keys.words, book.keys.values):
        if key in tokens if key.isascii() else key in text:
            out |= ids
    return out


#: Clause boundaries as one regex: sentence marks, and commas or full stops not inside a number.
_BOUNDARY = re.compile(r"[!?;\n！？；。]|[.,](?!\d)|(?<!\d)[.,]")


@CHECK
@given(st.sampled_from(ENVS), st.data())
def test_rule_candidates_match_the_word_by_word_reading(env, data):
    book = rulebook(world_for(env).rules)
    text = data.draw(_text(env))
    for t in (text, fold(normalize(text))):
        assert book.candidates(t) == _candidates_word_by_word(book, t)


@CHECK
@given(st.sampled_from(ENVS), st.data())
def test_one_scan_for_rule_keys_and_disclosures_reads_as_two(env, data):
    """The reading's one scan of a text (``keys_in``) finds the rules and disclosures the
    two scans it replaced find (a disclosure's key counts anywhere: "#ads" holds "ad")."""
    book = rulebook(world_for(env).rules)
    keys = [k for _, check in book.disclosures for k in check.keys]
    text = data.draw(st.lists(st.sampled_from([*keys, *_GLUE]), max_size=8).map("".join) | _text(env))
    for t in (text, fold(normalize(text))):
        assert book.keys_in(t) == (book.candidates(t), book.disclosures_in(t))


@CHECK
@given(st.sampled_from(ENVS), st.data())
def test_product_names_match_the_name_regex(env, data):
    catalog = world_for(env).catalog
    index = catalog_index(catalog)
    norm = normalize(data.draw(_text(env)))
    expected = [(m.start(), m.end(), index.names[m.group(0)]) for m in index.pattern.finditer(norm)]
    assert index.named(norm) == expected
    assert products_named(catalog, norm) == tuple(dict.fromkeys(pid for _, _, pid in expected))


@CHECK
@given(st.sampled_from(ENVS), st.data())
def test_term_prefilter_matches_substring_tests(env, data):
    world = world_for(env)
    index, words = catalog_index(world.catalog), world.phrasebook.fact_words
    norm = normalize(data.draw(_text(env)))
    phrases = {w.lower() for k in TERM_KEYS for w in words.get(k, ()) if w}
    vocab = set().union(*index.allergens.values(), *index.ingredients.values(), common_allergens())
    found = set().union(*index.terms(words).present(norm))

    def denied(w):  # an "X is Y" phrase is also found negated at its verb ("shipping isn't free")
        return any(start in norm for start in (denied_copula(w) or ((),))[0])

    assert (PHRASE in found) == any(w in norm or denied(w) for w in phrases)
    assert (VOCAB in found) == any(w in norm for w in vocab if w)
    for k in TERM_KEYS:  # a key is tagged when occurrences() may find one of its phrases
        assert (k in found) == any(normalize_phrase(w) in norm or denied(w) for w in words.get(k, ()) if w)


@CHECK
@given(st.lists(st.sampled_from(["1", "9", "٣", ".", ",", "!", "。", "？", ";", "\n", "a", " ", "最"]), max_size=30)
       .map("".join))
def test_clause_starts_match_the_boundary_regex(norm):
    assert clause_starts(norm) == [0] + [m.end() for m in _BOUNDARY.finditer(norm)]


@CHECK
@given(st.lists(st.sampled_from(["GLOW15", "SAVE10", "MAN200", "A", "B1", "x", "9", " ", "-", "_", "é", "ABCDEFGHIJKLMNOPQ",
                                 "最"]), max_size=12).map("".join))
def test_code_tokens_match_the_code_regex(text):
    assert code_tokens(text) == CODE_TOKEN.findall(text)
