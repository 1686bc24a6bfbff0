"""The reward's word forms are the same whether rooms are built on one thread or many
(a server resets rooms concurrently; a shared stemmer once broke with IndexError)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from liveroom_sim.rewards.lexicon import inflections

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
