"""The reward's word forms are the same whether rooms are built on one thread or many
(a server resets rooms concurrently; a shared stemmer once broke with IndexError), and
whether the Snowball stemmer runs in C (PyStemmer, a dependency) or in Python (what
snowballstemmer falls back to where PyStemmer will not install)."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from liveroom_sim.rewards import lexicon
from liveroom_sim.rewards.lexicon import inflections

ENVS = Path(__file__).resolve().parents[2] / "envs"

WORDS = ["cure", "heal", "treat", "guarantee", "slim", "whiten", "prevent", "remove", "repair", "boost",
         "detox", "burn", "shrink", "tighten", "regrow", "relieve", "soothe", "clear", "fade", "erase"] * 5


def test_inflections_on_many_threads_match_one_thread():
    inflections.cache_clear()
    alone = [inflections.__wrapped__(w) for w in WORDS]
    for _ in range(5):
        inflections.cache_clear()
        with ThreadPoolExecutor(max_workers=8) as pool:
            together = list(pool.map(inflections.__wrapped__, WORDS * 4))
        assert together == alone * 4


def test_c_and_python_stemmers_give_every_concept_word_the_same_forms(monkeypatch):
    Stemmer = pytest.importorskip("Stemmer")
    from snowballstemmer.english_stemmer import EnglishStemmer

    text = "".join(p.read_text(encoding="utf-8") for p in (ENVS / "concepts").glob("*.yaml"))
    text += "".join(p.read_text(encoding="utf-8") for p in (ENVS / "rules").glob("*.yaml"))
    words = sorted(set(re.findall(r"[a-z]{3,}", text.lower())))
    assert len(words) > 1000  # (the English vocabularies, read)
    forms = {}
    for name, stemmer in (("c", Stemmer.Stemmer("english")), ("python", EnglishStemmer())):
        monkeypatch.setattr(lexicon, "_stemmer", lambda stemmer=stemmer: stemmer)
        forms[name] = [inflections.__wrapped__(w) for w in words]
    assert forms["c"] == forms["python"]
