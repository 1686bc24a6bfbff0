"""Stream segments: start a rollout at a seeded point of the stream and run K turns.

A stream has hundreds of steps (``LiveRoom-v0``: up to 480); a trainer that caps a
rollout at K turns (TRL's ``max_tool_calling_iterations``, veRL's
``max_assistant_turns``) would otherwise only ever train on the stream's first K steps.
A segment opens the room as usual, plays it with a reference policy (the scripted host
by default) up to a start point, then hands the room to the policy for ``turns`` steps.
The start point is a time on the stream's clock drawn from the seed
(:func:`segment_start`, uniform over the stream's duration; streams end by the clock, so
a time covers the stream evenly where a step count would not), or a fixed number of
reference steps (``start_turn``). Rows of different seeds cover the whole stream, and
every sample of a GRPO group (one seed) gets the same start.

The segment's return counts only the policy's steps, plus what the room loses when the
segment stops before the stream ends: :func:`settle_early_end` asks the room for that
settlement (the early-end term of the reward, issue 11) and adds it to the last step.

Example:
    >>> import gymnasium as gym
    >>> env = SegmentEnv(gym.make("LiveRoom-v0"), turns=2)
    >>> _, info = env.reset(seed=3)
    >>> env.unwrapped.room.clock >= info["segment"]["start_s"] == segment_start(3, 900.0), info["segment"]["turns"]
    (True, 2)
    >>> done = [env.step("Welcome in!")[3] for _ in range(2)]
    >>> done
    [False, True]
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from liveroom_sim.sim.room import Room

__all__ = ["SegmentEnv", "fast_forward", "segment_prompt", "segment_start", "settle_early_end"]


def segment_start(seed: int, duration_s: float) -> float:
    """The seeded start time (stream seconds) of a segment: uniform over the stream.

    The same seed always gives the same start, in any process.

    >>> segment_start(0, 900.0) == segment_start(0, 900.0)
    True
    >>> all(0.0 <= segment_start(s, 900.0) < 900.0 for s in range(50))
    True
    """
    # Its own stream of the seed, apart from the room's generator: the room plays as unsegmented.
    return round(float(np.random.default_rng([int(seed), 0x5E6]).random()) * float(duration_s), 3)


def fast_forward(env, start_turn: int | None = None, reference=None, start_s: float | None = None):
    """Play a freshly reset env with ``reference`` (default: the scripted host) for
    ``start_turn`` steps, or until the stream's clock reaches ``start_s``, and on to the
    next room update (so the policy starts on one, as at the opening); the room's
    returns restart at zero afterwards.

    Returns:
        The observation and info to hand the policy, and the steps the reference played
        (if the stream ends during them, the room handed over is over).
    """
    from liveroom_sim.policies.scripted import ScriptedAvatar

    room_env = env.unwrapped
    policy = reference if reference is not None else ScriptedAvatar()
    obs, info = room_env.room.observation(), room_env._info(None)
    played, room = 0, room_env.room

    def more() -> bool:
        if info["messages"][-1]["role"] != "user":  # hand over at a fresh room update, not mid tool turn
            return True
        return played < start_turn if start_turn is not None else room.clock < (start_s or 0.0)

    while more() and not (room.terminated or room.truncated):
        obs, _, terminated, truncated, info = env.step(policy(obs, info))
        played += 1
        if terminated or truncated:  # too far: a stream that has ended is no segment
            break
    room = room_env.room
    # What the policy is scored on starts here: the reference's steps are not its own.
    room.ledger.restart()
    info = {**info, "reward_breakdown": dict.fromkeys(room.returns, 0.0)}
    info.pop("episode", None)
    return obs, info, played


def segment_prompt(messages: list[dict]) -> list[dict]:
    """A dataset prompt for a trainer: the system prompt and the latest room update, with
    the exchanges before it (a segment starts mid-stream) told as text in the same
    message, so that no tool message arrives without its call.

    >>> segment_prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    [{'role': 'system', 'content': 'S'}, {'role': 'user', 'content': 'U'}]
    """
    from liveroom_sim.sim.chat.history import flatten_message

    system, update, earlier = messages[0], messages[-1], messages[1:-1]
    text = update["content"] or ""
    if earlier:
        told = "\n\n".join(flatten_message(m) for m in earlier)
        text = f"(Earlier in this stream:)\n{told}\n\n(Now:)\n{text}"
    return [{"role": "system", "content": system["content"]}, {"role": "user", "content": text}]


def settle_early_end(room: Room) -> dict[str, float]:
    """What the room loses when a rollout stops before the stream ends, by component.

    :meth:`~liveroom_sim.sim.room.Room.settle` plays the rest of the stream with no host
    and charges every question that expires and every viewer who leaves unanswered (the
    ``outcome`` component); idempotent. ``{}`` when there is nothing left to settle.
    """
    settled = room.settle()
    return {k: float(v) for k, v in settled.as_dict().items()} if settled.total else {}


class SegmentEnv(gym.Wrapper):
    """A LiveRoom env whose episodes are segments of ``turns`` steps from a seeded start.

    Args:
        env: A LiveRoom env (wrapped or not).
        turns: Steps the policy plays (K).
        start_turn: A fixed number of reference steps before the segment; ``None`` draws
            a start time from the seed (:func:`segment_start`).
        reference: The policy that plays the steps before the start (default scripted).

    ``reset(options={"start_turn": n, "turns": k})`` overrides both for one episode. The
    last step of a segment that stops before the stream's end is ``truncated`` and its
    reward includes :func:`settle_early_end`. ``info["segment"]`` holds ``start_s`` (the
    drawn start time, or ``None``), ``start_turn`` (reference steps played), ``turns``
    and ``played`` (policy steps so far).
    """

    def __init__(self, env, turns: int, start_turn: int | None = None, reference=None):
        super().__init__(env)
        if int(turns) < 1:
            raise ValueError(f"a segment needs at least one turn, got turns={turns}")
        self.turns, self.start_turn, self.reference = int(turns), start_turn, reference
        self._segment: dict[str, int] = {}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        options = dict(options or {})
        turns = int(options.pop("turns", self.turns))
        start = options.pop("start_turn", self.start_turn)
        self.env.reset(seed=seed, options=options)
        start_s = None
        if start is None:
            start_s = segment_start(0 if seed is None else seed, self.env.unwrapped.world.spec.stream.duration_s)
        obs, info, played = fast_forward(self.env, None if start is None else int(start), self.reference, start_s)
        self._segment = {"start_s": start_s, "start_turn": played, "turns": turns, "played": 0}
        return obs, {**info, "segment": dict(self._segment)}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._segment["played"] += 1
        if not (terminated or truncated) and self._segment["played"] >= self._segment["turns"]:
            truncated = True
            room = self.env.unwrapped.room
            settled = settle_early_end(room)
            if settled:
                breakdown = dict(info["reward_breakdown"])
                for k, v in settled.items():
                    breakdown[k] = breakdown.get(k, 0.0) + v
                info = {**info, "reward_breakdown": breakdown, "early_end": settled}
                reward += settled.get("total", 0.0)
        return obs, reward, terminated, truncated, {**info, "segment": dict(self._segment)}
