"""HSA-SFT data (stage 1 of the method): teacher trajectories under augmented harnesses.

For each episode and each of K harness variants, a teacher (the scripted avatar, or any
OpenAI-compatible endpoint) hosts the stream; every reply becomes one training example:
the prompt it answered (system prompt, chat history, the exchange's tool calls and tool
results) plus the reply, with the harness's tools, in the chat format SFT trainers read.
Replies scoring below ``min_reward`` (or after a failed tool call) are left out.

An endpoint teacher that fails does not end the export: an outage is waited out for
``patience_s`` (backing off from 1 s to 15 s); a variant the teacher still cannot finish
keeps the examples it gave and is counted in ``failed_variants`` (the first reasons in
``failures``), and the export goes on with the next. Each variant's examples are flushed
to the file as it ends.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym

from liveroom_sim.episode import patience
from liveroom_sim.errors import LiveRoomError
from liveroom_sim.harness.augment import OPERATORS, AugmentConfig
from liveroom_sim.llm.client import EndpointUnavailable, scrub
from liveroom_sim.rollout.records import json_line


def export_sft(env_id: str, episodes: int, augment: int, out: str | Path, teacher: Callable[[str, dict], str],
               min_reward: float = 0.0, seed: int = 0, operators: tuple[str, ...] = OPERATORS,
               progress: bool = True, patience_s: float | None = None) -> dict:
    """Write SFT examples to ``out`` (JSON lines); returns counts.

    Args:
        env_id: A registered LiveRoom env id.
        episodes: Episodes (seeds ``seed .. seed + episodes - 1``).
        augment: Harness variants per episode (K). Variant 0 of a seed is always the same
            variant; the task (viewers, catalog, campaign) is the same for all K.
        out: The JSONL file to write (replaced).
        teacher: A policy ``(observation, info) -> action``.
        min_reward: Replies whose turn reward is below this are filtered out.
        patience_s: How long an endpoint outage is waited out on one turn (default
            ``$LIVEROOM_PATIENCE_S``, else 60 s).
    """
    env = gym.make(env_id, harness_augmentation=AugmentConfig(operators=tuple(operators))).unwrapped
    counts = {"episodes": 0, "variants": 0, "replies": 0, "written": 0, "filtered": 0, "failed_variants": 0,
              "failures": []}
    wait_limit = patience(patience_s)
    start = time.perf_counter()
    out = Path(out)
    with out.open("w", encoding="utf-8") as f:
        for e in range(episodes):
            for k in range(augment):
                obs, info = env.reset(seed=seed + e, options={"harness_variant": k})
                prompt, tools, tool_failed = info["messages"], info["tools"], False
                while True:
                    action, failure = _ask(teacher, obs, info, wait_limit)
                    if failure is not None:
                        counts["failed_variants"] += 1
                        if len(counts["failures"]) < 5:
                            counts["failures"].append(f"seed {seed + e} variant {k}: {failure}")
                        break
                    obs, reward, terminated, truncated, info = env.step(action)
                    turn = info["turn"]
                    if turn["kind"] == "tool":
                        tool_failed |= bool(turn["tool_errors"])
                        prompt = info["messages"]
                    else:
                        counts["replies"] += 1
                        if reward >= min_reward and not tool_failed and turn["delivered"]:
                            example = {"messages": [*prompt, {"role": "assistant", "content": turn["reply"]}],
                                       "tools": tools, "reward": round(reward, 4),
                                       "meta": {"env": env_id, "seed": seed + e, "variant": k}}
                            f.write(json_line(example))
                            counts["written"] += 1
                        else:
                            counts["filtered"] += 1
                        prompt, tools, tool_failed = info["messages"], info["tools"], False
                    if terminated or truncated:
                        break
                f.flush()
                counts["variants"] += 1
                if progress:
                    rate = counts["variants"] / (time.perf_counter() - start)
                    print(f"\rexport-sft: {counts['variants']}/{episodes * augment} episode variants, "
                          f"{counts['written']} examples ({rate:.1f} variants/s)", end="", file=sys.stderr)
            counts["episodes"] += 1
    if progress:
        print(file=sys.stderr)
    return counts


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
