"""Helpers shared by the room's tests."""

from __future__ import annotations


def waiting_price_question(env, seeds=range(20), options=None):
    """Reset until a present viewer's oldest waiting message asks a price; returns
    ``(info, message)``."""
    for seed in seeds:
        _, info = env.reset(seed=seed, options=options)
        for _ in range(8):
            *_, info = env.step("Hi everyone!")
            oldest = {}
            for m in env.room.crowd.pending:
                if m.viewer.present:
                    oldest.setdefault(m.viewer.name, m)
            asks = [m for m in oldest.values() if m.intent == "price"]
            if asks:
                return info, asks[0]
    raise AssertionError("no waiting price question in 20 seeds")
