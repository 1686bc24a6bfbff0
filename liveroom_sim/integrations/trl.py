"""LiveRoom for TRL: an ``environment_factory`` environment, reward functions and prompts.

The shapes follow TRL's ``GRPOTrainer`` (TRL 1.x: the ``environment_factory`` contract of
its docs ``openenv.md`` and trainer source, v1.10 and main):

- ``environment_factory`` is a zero-argument callable returning an environment. The
  trainer keeps a pool of instances (one per rollout in flight) and calls
  ``reset(**row)`` with the dataset row before each rollout; a string it returns is
  appended to the last prompt message, ``None`` adds nothing.
- Every public method other than ``reset`` and ``get_reward`` becomes a tool; its schema
  comes from the type hints and the Google-style docstring. An exception raised by a tool
  is fed back to the model as the tool's answer.
- A reward function is called as ``f(prompts=..., completions=..., completion_ids=...,
  trainer_state=..., **columns)`` (every dataset column but ``prompt``, one entry per
  completion) plus ``environments=[...]`` when an environment factory is in use, and
  returns one ``float`` (or ``None``: not applicable) per completion.

Here the tools mirror the harness tools (under their canonical names: the adapter calls
each under the name and fields the harness uses now), ``reply`` speaks to the room, and
the environment keeps the episode's reward by component. Nothing heavy is imported:
gymnasium and the simulator load when an environment is first reset.

**Segments.** TRL caps a rollout at ``max_tool_calling_iterations`` tool calls, far fewer
than a stream's steps. Rows of ``make_dataset(..., segment_turns=K)`` carry ``start_s``
(a start time drawn from the seed) and ``turns`` (K): ``reset`` fast-forwards the room
with the scripted host to that point (:mod:`liveroom_sim.trajectory.segments`) and the rollout
plays K room steps from there, so training samples the whole stream. When a rollout
stops before its stream ends (K steps played, or the model stopped calling tools), the
room's early-end settlement is added to the return before it is scored.

Example:
    >>> env = make_environment_factory("LiveRoom-v0", seed=0)()
    >>> opening = env.reset()            # no dataset prompt: the opening comes back
    >>> "featured:" in opening
    True
    >>> '"price"' in env.get_price_stock("sk-serum-01")
    True
    >>> liveroom_reward_total(prompts=[None], completions=[None], environments=[env]) == [env.reward]
    True
"""

from __future__ import annotations

import functools
import json
from typing import Any

# The reward functions live beside this module; they are part of this module's API.
from liveroom_sim.integrations.trl_rewards import (
    COMPONENT_REWARD_FUNCS,
    DEFAULT_ENV_ID,
    REWARD_FUNCS,
    _make_env,
    liveroom_reward_total,
)

# liveroom_factuality, liveroom_compliance, ...: one per declared reward component.
globals().update({f.__name__: f for f in COMPONENT_REWARD_FUNCS})

__all__ = [
    "LiveRoomToolEnv", "make_environment_factory", "make_dataset", "REWARD_FUNCS", "COMPONENT_REWARD_FUNCS",
    "liveroom_reward_total", *(f.__name__ for f in COMPONENT_REWARD_FUNCS), "TOOL_MODE_NOTE",
]

#: Appended to the opening room update: under TRL a message without a tool call ends the
#: rollout, so speech to the room goes through the ``reply`` tool.
TOOL_MODE_NOTE = ("(Speak to the room only by calling the `reply` tool: it returns the next room update. "
                  "Look facts up with the other tools first. A message without a tool call ends your shift.)")

_ENDED = "[The stream has ended. Stop calling tools.]"
_SEGMENT_OVER = "[Your part of the stream is over. Stop calling tools.]"


def _after_last_assistant(messages: list[dict]) -> list[dict]:
    """The messages the room added after the policy's latest action."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i]["role"] == "assistant":
            return messages[i + 1:]
    return []


class LiveRoomToolEnv:
    """One LiveRoom episode per rollout, in the shape of TRL's ``environment_factory``.

    Tools are the public methods: the harness tools (``get_product``, ``get_price_stock``,
    ``get_promotions``, ``get_policy``, ``get_order_status``) and ``reply``. Each runs one
    env step and returns what the room answered as text; the step's reward goes into
    :attr:`returns`. TRL fixes tool names by method, so when the harness renames a tool or
    field (a campaign event, or Harness-State Augmentation) the adapter calls it by its
    current name: under TRL the model does not learn the renames.

    When the model stops before the stream ends (TRL ends a rollout at a message without
    a tool call), :meth:`_settle_early_end` ends the shift and charges the room it leaves: the rest
    of the stream plays out with no host, and every question that expires and viewer
    who leaves unanswered costs what it costs in play. The reward functions call it
    before they read :attr:`returns`, so ending the shift on turn 1 is never better than
    staying and saying nothing.

    Attributes:
        reward: The episode's reward so far (sum of the steps' totals).
        returns: Component -> sum over the episode's steps (with ``total``).
        breakdowns: Each step's ``info["reward_breakdown"]``, in order.
        settlement: What ending the shift early cost (``{}`` until settled, or when the
            stream ran to its end); :attr:`reward` includes it.
        metrics: The room's latest ``info["metrics"]``.
        done: Whether the stream has ended (then tools raise ``ValueError``).
        room: The room of the stream being played (its clock, harness, crowd), ``None``
            before the first reset; a property, so TRL does not take it for a tool.

    Args:
        env_id: A registered env id; defaults to the spec's id, or ``LiveRoom-v0``.
        seed: The seed used when the dataset row has no ``seed`` column.
        spec: A spec file to register first (its path travels to worker processes).
    """

    def __init__(self, env_id: str | None = None, seed: int = 0, spec: str | None = None):
        self.env_id, self.seed, self.spec = env_id, int(seed), spec
        self._env = None
        self._env_key: str | None = None
        self._registered = False
        self._calls = 0
        self.reward = 0.0
        self.returns: dict[str, float] = {}
        self.breakdowns: list[dict[str, float]] = []
        self.metrics: dict = {}
        self.done = True
        self.segment: dict | None = None
        self._settled = True

    @property
    def room(self):
        """The room of the stream being played (``None`` before the first reset)."""
        return self._env.unwrapped.room if self._env is not None else None

    def reset(self, **kwargs) -> str | None:
        """Open a new stream; TRL passes the dataset row (``seed``, ``env_id``, ``prompt``...).

        Returns ``None`` when the row's prompt already holds this stream's opening (rows of
        :func:`make_dataset`), else the opening as text, to be appended to the prompt.
        """
        env = self._env_for(kwargs.get("env_id") or self.env_id)
        seed = kwargs.get("seed")
        obs, info = env.reset(seed=self.seed if seed is None else int(seed))
        self.segment = _segment_of(kwargs)
        if self.segment is not None:
            from liveroom_sim.trajectory.segments import fast_forward

            obs, info, played = fast_forward(env, self.segment["start_turn"], None, self.segment["start_s"])
            self.segment["played_before"], self.segment["played"] = played, 0
        self._settled = False
        self.settlement: dict[str, float] = {}
        self._calls = 0
        self.returns = dict(info["reward_breakdown"])
        self.reward = self.returns["total"]
        self.breakdowns = []
        self.metrics = info["metrics"]
        self.done = False
        prompt = kwargs.get("prompt")
        if _holds_opening(prompt, info["messages"]):
            return None
        text = f"{obs}\n\n{TOOL_MODE_NOTE}"
        if isinstance(prompt, list):
            prompt = prompt[-1].get("content") if prompt and isinstance(prompt[-1], dict) else None
        return f"\n\n{text}" if prompt else text  # TRL joins it to the prompt's text as is

    # ------------------------------------------------------------------ tools
    def get_product(self, product_id: str) -> str:
        """Look up a product's details: brand, category attributes and warranty.

        Args:
            product_id: The product id, as listed in the lineup.

        Returns:
            The product's details as JSON, or an error.
        """
        return self._call_tool("get_product", {"product_id": product_id})

    def get_price_stock(self, product_id: str) -> str:
        """Get a product's price and stock right now, including any flash sale and coupons.

        Args:
            product_id: The product id, as listed in the lineup.

        Returns:
            The price, list price, flash sale, best coupon price and stock as JSON, or an error.
        """
        return self._call_tool("get_price_stock", {"product_id": product_id})

    def get_promotions(self) -> str:
        """List the promotions active now: coupons, flash sales and the featured product.

        Returns:
            The featured product, coupons and flash sales as JSON.
        """
        return self._call_tool("get_promotions", {})

    def get_policy(self, product_id: str) -> str:
        """Get a product's shipping, returns and warranty terms.

        Args:
            product_id: The product id, as listed in the lineup.

        Returns:
            The shipping, returns and warranty terms as JSON, or an error.
        """
        return self._call_tool("get_policy", {"product_id": product_id})

    def get_order_status(self, order_id: str) -> str:
        """Get the status of a viewer's earlier order, for after-sales questions.

        Args:
            order_id: The order id the viewer gave.

        Returns:
            The order's status as JSON, or an error.
        """
        return self._call_tool("get_order_status", {"order_id": order_id})

    def load_skill(self, skill: str) -> str:
        """Load a skill: its full instructions, by the name the skill list gives.

        Args:
            skill: The skill's name, as listed under skills.

        Returns:
            The skill's type and instructions as JSON, or an error (also when the harness
            lists no skills to load).
        """
        return self._call_tool("load_skill", {"skill": skill})

    def reply(self, message: str) -> str:
        """Say a message to the live room: this is the only way viewers hear you.

        Args:
            message: What to say, addressing the viewer you answer as @name.

        Returns:
            The next room update: new chat, events and the viewers waiting for an answer.
        """
        return self._step(message)

    # --------------------------------------------------------------- internals
    def _env_for(self, env_id: str | None):
        if self.spec is not None and not self._registered:
            # Registered here, not in the factory: TRL may build environments in other processes.
            import liveroom_sim

            self.env_id, self._registered = liveroom_sim.register_spec(self.spec, self.env_id), True
        env_id = env_id or self.env_id or DEFAULT_ENV_ID
        if self._env is None or env_id != self._env_key:
            import gymnasium as gym

            import liveroom_sim  # noqa: F401  (registers the built-in specs)

            self._close()
            self._env, self._env_key = gym.make(env_id), env_id
        return self._env

    def _call_tool(self, canonical: str, arguments: dict[str, Any]) -> str:
        if self._env is None:
            raise ValueError("The stream has not started: reset() opens it.")
        # One place decides a tool's name and fields under the current harness: the harness.
        view = self._env.unwrapped.room.harness.tools.get(canonical)
        name = view.name if view is not None else canonical  # not offered now: the room reports it
        shown = {(view.fields.get(k, k) if view is not None else k): v for k, v in arguments.items()}
        self._calls += 1
        call = {"id": f"call_{self._calls}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(shown, ensure_ascii=False)}}
        return self._step(json.dumps({"content": "", "tool_calls": [call]}, ensure_ascii=False))

    def _step(self, action: str) -> str:
        if self._env is None:
            raise ValueError("The stream has not started: reset() opens it.")
        if self.done:
            raise ValueError("The stream is over. Stop calling tools.")
        _, _, terminated, truncated, info = self._env.step(action)
        self._add(info["reward_breakdown"])
        self.breakdowns.append(dict(info["reward_breakdown"]))
        self.metrics = info["metrics"]
        self.done = bool(terminated or truncated)
        if self.segment is not None:
            self.segment["played"] += 1
            if not self.done and self.segment["played"] >= self.segment["turns"]:
                self._settle_early_end()
                self.done = True
                return f"{self._answer(info)}\n\n{_SEGMENT_OVER}"
        return f"{self._answer(info)}\n\n{_ENDED}" if self.done else self._answer(info)

    @staticmethod
    def _answer(info: dict) -> str:
        return "\n\n".join(m.get("content") or "" for m in _after_last_assistant(info["messages"]))

    def _add(self, breakdown: dict[str, float]) -> None:
        for key, value in breakdown.items():
            self.returns[key] = self.returns.get(key, 0.0) + value
        self.reward = self.returns["total"]

    def _settle_early_end(self) -> dict[str, float]:
        """Add what the room loses by ending here to the return, once, if the stream is not over.

        The reward functions call it before reading :attr:`returns`: a rollout TRL stops
        early (the model stopped calling tools, or the turn cap) is scored for the room
        it left.
        """
        if self._settled or self._env is None:
            return {}
        self._settled = True
        self.done = True  # the shift is over once settled: later tool calls are refused
        room = self.room
        if room.terminated or room.truncated:
            return {}
        from liveroom_sim.trajectory.segments import settle_early_end

        settled = settle_early_end(room)
        self._add(settled)
        self.settlement = settled
        return settled

    def _close(self) -> None:
        if self._env is not None:
            self._env.close()
        self._env = None


def _segment_of(row: dict) -> dict | None:
    """The segment a dataset row asks for (``turns`` with ``start_s`` or ``start_turn``), or None."""
    turns = row.get("turns")
    if turns is None:
        return None
    start_s, start_turn = row.get("start_s"), row.get("start_turn")
    return {"turns": int(turns), "start_s": None if start_s is None else float(start_s),
            "start_turn": None if start_turn is None else int(start_turn)}


def _holds_opening(prompt: Any, opening: list[dict]) -> bool:
    """Whether a dataset prompt already shows the stream's opening (system and update)."""
    if not isinstance(prompt, list) or not prompt or not isinstance(prompt[-1], dict):
        return False
    last = prompt[-1].get("content")
    if not isinstance(last, str) or opening[-1]["content"] not in last:
        return False
    system = [m.get("content") for m in prompt if isinstance(m, dict) and m.get("role") == "system"]
    return not system or system[0] == opening[0]["content"]


def make_environment_factory(env_id: str | None = None, seed: int = 0, spec: str | None = None):
    """A zero-argument, picklable factory for ``GRPOTrainer(environment_factory=...)``.

    Args:
        env_id: A registered env id (default ``LiveRoom-v0``, or the spec's id).
        seed: The seed for rows without a ``seed`` column (every such rollout gets the
            same stream, so a GRPO group is compared on one room).
        spec: A spec file to register in each process that builds an environment.
    """
    return functools.partial(LiveRoomToolEnv, env_id=env_id, seed=seed, spec=spec)


def segment_prompt(messages: list[dict]) -> list[dict]:
    """The room's messages as a dataset prompt (see :func:`liveroom_sim.trajectory.segments.segment_prompt`)."""
    from liveroom_sim.trajectory.segments import segment_prompt as prompt

    return prompt(messages)


def make_dataset(env_id: str | None = None, n: int = 64, seed: int = 0, spec: str | None = None,
                 tools: bool = True, segment_turns: int | None = None) -> list[dict]:
    """Prompt rows for TRL: each stream's opening as chat messages, with its seed.

    Wrap them with ``datasets.Dataset.from_list(rows)``. Columns: ``prompt`` (the system
    prompt and the first room update), ``seed`` (seeds ``seed .. seed+n-1``) and
    ``env_id``; the environment's ``reset`` and the reward functions read the last two.
    With ``segment_turns=K``, also ``start_s`` and ``turns``: each row is a segment of K
    room steps from a point of the stream drawn from its seed, and ``prompt`` is the
    room as it is there (see the module's notes on segments).

    Args:
        env_id: A registered env id (default ``LiveRoom-v0``, or the spec's id).
        n: How many rows (streams).
        seed: The first seed.
        spec: A spec file to register first.
        tools: Add :data:`TOOL_MODE_NOTE` to the update (for ``environment_factory``
            training); ``False`` gives the bare opening, for single-turn reward training.
        segment_turns: Make each row a segment of this many room steps (K; at most
            ``max_tool_calling_iterations``), starting at a seeded point of the stream.
    """
    env, env_id = _make_env(env_id, spec)
    rows = []
    for s in range(seed, seed + n):
        _, info = env.reset(seed=s)
        segment = {}
        if segment_turns is not None:
            from liveroom_sim.trajectory.segments import fast_forward, segment_start

            segment = {"start_s": segment_start(s, env.unwrapped.world.spec.stream.duration_s),
                       "turns": int(segment_turns)}
            _, info, _ = fast_forward(env, None, None, segment["start_s"])
        messages = segment_prompt(info["messages"])
        if tools:
            messages[-1]["content"] += f"\n\n{TOOL_MODE_NOTE}"
        rows.append({"prompt": messages, "seed": s, "env_id": env_id, **segment})
    env.close()
    return rows
