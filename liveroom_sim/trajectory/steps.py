"""What an episode records of each step for trainers: segment labels and the policy's tokens.

Each step of a recorded episode (``EpisodeResult.turn_rewards``) carries its kind, its
reward breakdown (component -> value, and ``total``) and a **segment** label, the unit
the TaoLive recipe gives its own advantage group:

- ``tool``: an internal tool turn (tool calls ran, nothing was said to the room);
- ``reply``: speech to the room;
- ``hook_retry``: a reply written after a hook blocked the previous one and asked for a
  retry (``block_retry``), the "hook-triggered correction" of the paper.

A policy that logs tokens (``OpenAIAvatar.token_log``, see :mod:`liveroom_sim.llm.tokens`)
has them copied into ``EpisodeResult.tokens``, one entry per step it produced; a policy
without them gives ``[]`` and records stay as they were.

Example:
    >>> first = turn_entry({"turn": {"kind": "reply", "hooks": ["format:block_retry"]},
    ...                     "reward_breakdown": {"total": -1.0}}, [])
    >>> turn_entry({"turn": {"kind": "reply", "hooks": []}, "reward_breakdown": {"total": 0.5}}, [first])
    {'kind': 'reply', 'segment': 'hook_retry', 'hooks': [], 'total': 0.5}
"""

from __future__ import annotations

SEGMENTS = ("tool", "reply", "hook_retry")


def segment_of(turn: dict, previous: dict | None) -> str:
    """The segment label of a step, given the previous step's entry (or ``None``)."""
    if turn.get("kind") == "tool":
        return "tool"
    asked = previous is not None and any(h.endswith(":block_retry") for h in previous.get("hooks", ()))
    return "hook_retry" if asked else "reply"


def turn_entry(info: dict, entries: list[dict]) -> dict:
    """One step's record: kind, segment, hooks fired and reward breakdown."""
    turn = info.get("turn") or {}
    previous = entries[-1] if entries else None
    return {"kind": turn.get("kind"), "segment": segment_of(turn, previous), "hooks": list(turn.get("hooks", ())),
            **info["reward_breakdown"]}


def policy_tokens(policy) -> list[dict]:
    """The policy's token turns for this episode (copies; ``None`` for a step without
    ids), or ``[]`` when no step had any."""
    turns = list(getattr(getattr(policy, "token_log", None), "turns", ()))
    return [None if t is None else dict(t) for t in turns] if any(t is not None for t in turns) else []
