"""HSA-SFT data (stage 1 of the method): teacher trajectories under augmented harnesses.

For each episode and each of K harness variants, a teacher (the scripted avatar, or any
OpenAI-compatible endpoint) hosts the stream, and the episode variant becomes **one
multi-turn conversation** (as the paper builds its SFT data; see
:mod:`liveroom_sim.train.conversation`): the system prompt (again whenever it changes),
room updates, tool calls and results, replies, with the variant's tools. Assistant turns
carry ``weight`` 1 (trained on) or 0 (context): a reply below ``min_reward``, one the room
did not hear, one after the policy's own failed tool call, and a bad or redundant tool
call get 0. Of the replies a hook sent back for a retry, a share ``full_retry_share``
keeps the full retry (the blocked reply at weight 0, the hook's message, the correction);
the rest keep only the final behaviour.

An endpoint teacher that fails does not end the export: an outage is waited out for
``patience_s`` (backing off from 1 s to 15 s); a variant the teacher still cannot finish
keeps the conversation so far and is counted in ``failed_variants`` (the first reasons in
``failures``), and the export goes on with the next. Each conversation is written to the
file as its variant ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np

from liveroom_sim.episode import patience
from liveroom_sim.errors import LiveRoomError
from liveroom_sim.harness.augment import OPERATORS, AugmentConfig
from liveroom_sim.llm.client import EndpointUnavailable, scrub
from liveroom_sim.rollout.records import json_line
from liveroom_sim.train.conversation import Conversation

#: Spawn key of the generator that picks which hook retries keep the full retry.
_RETRY_KEY = 0x5F7


def export_sft(env_id: str, episodes: int, augment: int, out: str | Path, teacher: Callable[[str, dict], str],
               min_reward: float = 0.0, seed: int = 0, operators: tuple[str, ...] = OPERATORS,
               progress: bool = True, patience_s: float | None = None, full_retry_share: float = 0.2) -> dict:
    """Write one SFT conversation per episode variant to ``out`` (JSON lines); returns counts.

    Args:
        env_id: A registered LiveRoom env id.
        episodes: Episodes (seeds ``seed .. seed + episodes - 1``).
        augment: Harness variants per episode (K). Variant 0 of a seed is always the same
            variant; the task (viewers, catalog, campaign) is the same for all K.
        out: The JSONL file to write (replaced).
        teacher: A policy ``(observation, info) -> action``.
        min_reward: Replies whose turn reward is below this get weight 0.
        patience_s: How long an endpoint outage is waited out on one turn (default
            ``$LIVEROOM_PATIENCE_S``, else 60 s).
        full_retry_share: The share of hook retries kept in full (0-1); drawn per retry
            from the seed and variant, so the same export gives the same file.

    Returns:
        Counts: ``episodes``, ``variants``, ``written`` (conversations), ``replies``,
        ``trained`` and ``untrained`` (assistant turns of weight 1 and 0), ``filtered``
        (replies of weight 0), ``retries`` and ``retries_full``, ``bytes`` and
        ``bytes_per_variant``, ``failed_variants`` and ``failures``.
    """
    if not 0.0 <= full_retry_share <= 1.0:
        raise ValueError(f"full_retry_share must be within 0-1, got {full_retry_share}")
    env = gym.make(env_id, harness_augmentation=AugmentConfig(operators=tuple(operators))).unwrapped
    counts = {"episodes": 0, "variants": 0, "written": 0, "replies": 0, "trained": 0, "untrained": 0,
              "filtered": 0, "retries": 0, "retries_full": 0, "bytes": 0, "bytes_per_variant": 0,
              "failed_variants": 0, "failures": []}
    wait_limit = patience(patience_s)
    start = time.perf_counter()
    out = Path(out)
    with out.open("w", encoding="utf-8") as f:
        for e in range(episodes):
            for k in range(augment):
                talk, tools, total, failure = _play_variant(env, teacher, seed + e, k, min_reward, full_retry_share,
                                                            wait_limit)
                if failure is not None:
                    counts["failed_variants"] += 1
                    if len(counts["failures"]) < 5:
                        counts["failures"].append(f"seed {seed + e} variant {k}: {failure}")
                if talk.assistant_turns:
                    line = json_line({"messages": talk.messages, "tools": tools, "reward": round(total, 4),
                                      "meta": {"env": env_id, "seed": seed + e, "variant": k,
                                               "trained": talk.trained, "untrained": talk.untrained,
                                               "retries": talk.retries, "retries_full": talk.retries_full}})
                    f.write(line)
                    counts["written"] += 1
                    counts["bytes"] += len(line.encode("utf-8"))
                f.flush()
                for key in ("replies", "trained", "untrained", "retries", "retries_full"):
                    counts[key] += getattr(talk, key)
                counts["filtered"] += talk.replies - sum(
                    1 for m in talk.messages if m["role"] == "assistant" and not m.get("tool_calls") and m.get("weight"))
                counts["variants"] += 1
                if progress:
                    rate = counts["variants"] / (time.perf_counter() - start)
                    print(f"\rexport-sft: {counts['variants']}/{episodes * augment} episode variants, "
                          f"{counts['written']} conversations ({rate:.1f} variants/s)", end="", file=sys.stderr)
            counts["episodes"] += 1
    counts["bytes_per_variant"] = round(counts["bytes"] / counts["variants"]) if counts["variants"] else 0
    if progress:
        print(file=sys.stderr)
    return counts


def _play_variant(env, teacher: Callable[[str, dict], str], seed: int, variant: int, min_reward: float,
                  full_retry_share: float, wait_limit: float) -> tuple[Conversation, list, float, str | None]:
    """One episode variant played by ``teacher``, recorded as a conversation; with its tools,
    its return and why it stopped early (None: it ran to its end)."""
    rng = np.random.default_rng([seed, variant, _RETRY_KEY])
    talk = Conversation(lambda: bool(rng.random() < full_retry_share), min_reward)
    obs, info = env.reset(seed=seed, options={"harness_variant": variant})
    tools, total = info["tools"], 0.0
    talk.start(info)
    while True:
        action, failure = _ask(teacher, obs, info, wait_limit)
        if failure is not None:
            return talk, tools, total, failure
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        talk.step(info, reward)
        if terminated or truncated:
            return talk, tools, total, None


def _ask(teacher: Callable[[str, dict], str], obs: str, info: dict, patience_s: float) -> tuple[str, str | None]:
    """The teacher's action, or why it could not give one (after waiting out an outage)."""
    down_since, waits = None, 0
    while True:
        try:
            return teacher(obs, info), None
        except EndpointUnavailable as exc:
            down_since = down_since if down_since is not None else time.monotonic()
            wait = min(2.0**waits, 15.0)
            down = time.monotonic() - down_since
            if down + wait > patience_s:
                return "", scrub(f"endpoint unavailable for {down:.1f} s: {exc}")
            time.sleep(wait)
            waits += 1
        except LiveRoomError as exc:  # refused requests, answers with nothing usable
            return "", scrub(f"{type(exc).__name__}: {exc}")[:300]
