"""LiveRoom for veRL: dataset rows for both APIs, and the legacy interaction (veRL <= 0.7.1).

**veRL 0.8 and later** removed ``verl/interactions``: use the agent loop
:class:`liveroom_sim.integrations.verl_agent_loop.LiveRoomAgentLoop` with rows from
``make_rows(..., agent_name="liveroom")`` (docs/integrations.md has the launch). This
module keeps what needs no veRL: :func:`make_rows` and :func:`action_from_message`.

**veRL <= 0.7.1 only**, the rest of this module: :class:`LiveRoomInteraction`, a
multi-turn interaction agent. It is kept for those versions and will be removed.

The shapes follow veRL's interaction system (``verl/interactions/base.py``, the docs'
``sglang_multiturn/interaction_system.rst`` and ``ToolAgentLoop`` in
``verl/experimental/agent_loop/tool_agent_loop.py``):

- An interaction config YAML lists ``interaction: [{name, class_name, config}]``; veRL
  imports ``class_name`` and builds ``cls(config={**config, "name": name})``, one object
  serving every rollout of the worker.
- Per rollout, ``await start_interaction(request_id, **interaction_kwargs)``, where
  ``interaction_kwargs`` is the row's ``extra_info.interaction_kwargs`` (its ``name``
  picks the interaction).
- After each assistant turn without tool calls, ``await generate_response(request_id,
  messages, **interaction_kwargs)`` returns ``(should_terminate_sequence,
  response_content, current_turn_score, additional_data)``; the response is appended as
  a user message and the score to the rollout's ``turn_scores``.
- ``calculate_score(instance_id, **kwargs)`` and ``finalize_interaction(instance_id,
  **kwargs)`` score and release an instance.

Here each instance is one LiveRoom episode: the latest assistant message is the action
(its ``tool_calls``, a JSON action in its content, ``<tool_call>`` blocks, or plain text
spoken to the room), the response is what the room answered, and the turn score is the
env's reward for that step. veRL is not imported: the class subclasses veRL's
``BaseInteraction`` when veRL has loaded it (as it has when it loads this class), and a
plain base with the same methods otherwise.

Example:
    >>> import asyncio
    >>> room = LiveRoomInteraction({"name": "liveroom", "env_id": "LiveRoom-v0"})
    >>> async def one_turn():
    ...     iid = await room.start_interaction("r1", name="liveroom", seed=0)
    ...     done, text, score, extra = await room.generate_response(
    ...         iid, [{"role": "assistant", "content": "Welcome in, everyone!"}])
    ...     total = await room.calculate_score(iid)
    ...     await room.finalize_interaction(iid)
    ...     return done, "featured:" in text, score == total == extra["reward_breakdown"]["total"]
    >>> asyncio.run(one_turn())
    (False, True, True)
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from typing import Any
from uuid import uuid4

__all__ = ["LiveRoomInteraction", "action_from_message", "compute_score", "make_rows", "tool_note"]

DEFAULT_ENV_ID = "LiveRoom-v0"
_ENDED = "[The stream has ended.]"
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)
_TRAILING_SPECIAL = re.compile(r"(?:\s*(?:<\|[^|<>\s]{1,40}\|>|</s>))+\s*$")
_HERMES_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)


class _PlainInteraction:
    """veRL's ``BaseInteraction`` interface, for when veRL is not loaded."""

    def __init__(self, config: dict[str, Any]):
        self.config = config
        self.name: str = config.get("name", "interaction_agent")

    async def start_interaction(self, instance_id: str | None = None, **kwargs) -> str:
        return instance_id if instance_id is not None else str(uuid4())

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]], **kwargs):
        raise NotImplementedError

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        return 0.0

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        return None


def _base_class() -> type:
    # Importing veRL pulls in torch and ray; when veRL loads this class it has already
    # imported its base, so subclass it only if it is there.
    base = getattr(sys.modules.get("verl.interactions.base"), "BaseInteraction", None)
    return base if isinstance(base, type) else _PlainInteraction


@dataclass
class _Episode:
    env: Any
    opening: str
    returns: dict[str, float]
    done: bool = False


class LiveRoomInteraction(_base_class()):
    """A veRL interaction whose instances are LiveRoom episodes.

    Args:
        config: The ``config`` of the interaction config entry (veRL adds ``name``):
            ``env_id`` (default ``LiveRoom-v0``, or the spec's id), ``spec`` (a spec file
            to register in the worker), ``seed`` (for rows without one, default 0) and
            ``env_kwargs`` (passed to ``gym.make``, e.g. ``harness_augmentation``) and
            ``max_open`` (default 4096): veRL 0.7.1 never calls ``finalize_interaction``,
            so a finished episode is closed at once and, beyond ``max_open`` open
            episodes, the oldest is closed.
    """

    def __init__(self, config: dict[str, Any]):
        super().__init__(config)
        self.max_open = int(config.get("max_open", 4096))
        self.env_id: str | None = config.get("env_id")
        self.spec: str | None = config.get("spec")
        self.seed = int(config.get("seed", 0))
        self.env_kwargs: dict = dict(config.get("env_kwargs") or {})
        self._episodes: dict[str, _Episode] = {}

    async def start_interaction(self, instance_id: str | None = None, **kwargs) -> str:
        """Open a stream for one rollout; ``seed`` and ``env_id`` come from ``interaction_kwargs``."""
        instance_id = instance_id if instance_id is not None else uuid4().hex
        await self.finalize_interaction(instance_id)
        env = self._make_env(kwargs.get("env_id"))
        seed = kwargs.get("seed")
        _, info = env.reset(seed=self.seed if seed is None else int(seed))
        self._episodes[instance_id] = _Episode(env, info["messages"][-1]["content"], dict(info["reward_breakdown"]))
        while len(self._episodes) > self.max_open:  # veRL 0.7.1 never finalizes: do not leak rooms
            self._episodes.pop(next(iter(self._episodes))).env.close()
        return instance_id

    async def generate_response(self, instance_id: str, messages: list[dict[str, Any]],
                                **kwargs) -> tuple[bool, str, float, dict[str, Any]]:
        """Step the stream with the latest assistant message; return what the room answered.

        Without an assistant message yet, the stream's opening update comes back (score 0).
        After the stream has ended, every call returns ``(True, "[The stream has ended.]",
        0.0, {})``.
        """
        episode = self._episode(instance_id)
        message = next((m for m in reversed(messages or ()) if m.get("role") == "assistant"), None)
        if message is None:
            return False, episode.opening, 0.0, {"reward_breakdown": {}}
        if episode.done:
            return True, _ENDED, 0.0, {}
        _, reward, terminated, truncated, info = episode.env.step(action_from_message(message))
        for key, value in info["reward_breakdown"].items():
            episode.returns[key] = episode.returns.get(key, 0.0) + value
        episode.done = bool(terminated or truncated)
        if episode.done:
            episode.env.close()  # its returns stay for calculate_score; the room is not needed
        text = _room_answer(info["messages"])
        extra = {"reward_breakdown": dict(info["reward_breakdown"]), "turn": info["turn"]["kind"],
                 "metrics": info["metrics"], "events": info["events"]}
        return episode.done, f"{text}\n\n{_ENDED}" if episode.done else text, float(reward), extra

    async def calculate_score(self, instance_id: str, **kwargs) -> float:
        """The episode's reward so far: the sum of its turn scores."""
        return float(self._episode(instance_id).returns["total"])

    async def finalize_interaction(self, instance_id: str, **kwargs) -> None:
        """Close the instance's stream (a no-op for an unknown or finished instance)."""
        episode = self._episodes.pop(instance_id, None)
        if episode is not None:
            episode.env.close()

    def _episode(self, instance_id: str) -> _Episode:
        try:
            return self._episodes[instance_id]
        except KeyError:
            raise KeyError(f"no LiveRoom episode for instance {instance_id!r}: call start_interaction first") from None

    def _make_env(self, env_id: str | None):
        import gymnasium as gym

        import liveroom_sim

        if self.spec is not None:
            # Once per worker: the spec's path travels in the config, not the registry.
            self.env_id, self.spec = liveroom_sim.register_spec(self.spec, self.env_id), None
        return gym.make(env_id or self.env_id or DEFAULT_ENV_ID, **self.env_kwargs)


def action_from_message(message: dict[str, Any]) -> str:
    """A LiveRoom action from an assistant message (OpenAI format or a model's raw text).

    ``tool_calls`` make a tool turn; so do ``<tool_call>{...}</tool_call>`` blocks in the
    text (Hermes format). Otherwise the text, without ``<think>`` blocks and trailing
    special tokens, is the action: a reply, or a JSON action the room parses itself.

    Example:
        >>> action_from_message({"role": "assistant", "content": "<think>hmm</think>@mia it is $20.<|im_end|>"})
        '@mia it is $20.'
        >>> json.loads(action_from_message({"role": "assistant", "content":
        ...     '<tool_call>{"name": "get_promotions", "arguments": {}}</tool_call>'}))["tool_calls"][0]["function"]
        {'name': 'get_promotions', 'arguments': {}}
    """
    text = _text(message.get("content"))
    text = _TRAILING_SPECIAL.sub("", _THINK.sub("", text)).strip()
    calls = message.get("tool_calls")
    if calls:
        return json.dumps({"content": text, "tool_calls": calls}, ensure_ascii=False, default=str)
    blocks = _HERMES_CALL.findall(text)
    if not blocks:
        return text
    calls = []
    for i, block in enumerate(blocks):
        try:
            fn = json.loads(block)
        except json.JSONDecodeError:
            fn = None
        if not isinstance(fn, dict):
            fn = {"arguments": block}  # no tool name: the room answers with an error and a penalty
        calls.append({"id": f"call_{i}", "type": "function", "function": fn})
    return json.dumps({"content": _HERMES_CALL.sub("", text).strip(), "tool_calls": calls}, ensure_ascii=False)


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def _room_answer(messages: list[dict]) -> str:
    """What the room added after the latest action, as text: tool results or the next update."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    names = {c["id"]: c["function"]["name"] for c in (messages[last].get("tool_calls") or ())} if last >= 0 else {}
    parts = []
    for m in messages[last + 1:]:
        if m["role"] == "tool":
            parts.append(f"{names.get(m.get('tool_call_id'), 'tool')} -> {m['content']}")
        else:
            parts.append(m.get("content") or "")
    return "\n\n".join(parts)


def compute_score(data_source: str, solution_str: str, ground_truth: Any = None, extra_info: dict | None = None,
                  **kwargs) -> float:
    """The episode's reward for veRL's custom reward function: the sum of its turn scores.

    veRL's tool agent loop keeps each ``generate_response`` score in ``turn_scores``
    (an output extra field) and its reward managers merge those fields into
    ``extra_info``; point ``custom_reward_function`` (``path``: this module's file,
    ``name: compute_score``) here to train on the episode's LiveRoom return.

    Raises:
        ValueError: when ``extra_info`` carries no ``turn_scores`` (the rollout did not
            go through an interaction), rather than scoring the episode 0.

    Example:
        >>> compute_score("liveroom/LiveRoom-v0", "...", "", {"turn_scores": [0.5, 1.25]})
        1.75
    """
    scores = (extra_info or {}).get("turn_scores")
    if scores is None:
        raise ValueError(f"no turn_scores in extra_info for {data_source!r}: run rollouts with "
                         "actor_rollout_ref.rollout.multi_turn.interaction_config_path set to a LiveRoomInteraction")
    return float(sum(float(s) for s in scores))


def tool_note(tools: list[dict]) -> str:
    """How to call the room's tools in plain text, for rollouts that show no tool schemas.

    veRL's tool agent loop hands ``<tool_call>`` blocks to veRL's own tools; a JSON action
    in the text reaches the interaction, and the room parses it.
    """
    lines = []
    for tool in tools:
        fn = tool["function"]
        params = ", ".join(fn.get("parameters", {}).get("properties", {}))
        lines.append(f"- {fn['name']}({params}): {fn.get('description', '')}")
    return ('(To look facts up, answer with only a JSON object {"tool_calls": [{"function": {"name": "<tool>", '
            '"arguments": {...}}}]}; the results come back in the next message. Anything else you write is said '
            "to the room. Tools now:\n" + "\n".join(lines) + ")")


def make_rows(env_id: str | None = None, n: int = 64, seed: int = 0, spec: str | None = None,
              name: str = "liveroom", tools: bool | None = None, agent_name: str | None = None,
              segment_turns: int | None = None) -> list[dict]:
    """veRL dataset rows: each stream's opening (or segment) as chat messages, and its seed.

    Rows have veRL's dataset columns: ``data_source``, ``prompt`` (the system prompt and
    the room update), ``ability``, ``reward_model`` and ``extra_info``; write them to
    parquet for veRL's dataset (``data.return_raw_chat=True``).

    - With ``agent_name="liveroom"`` (veRL 0.8 and later): an ``agent_name`` column, which
      picks :class:`~liveroom_sim.integrations.verl_agent_loop.LiveRoomAgentLoop`, and
      ``extra_info.liveroom`` = ``{"seed", "env_id"}`` (plus ``turns`` and ``start_s``
      for segments). The tools reach the model through the chat template.
    - Without (veRL <= 0.7.1): ``agent_name: tool_agent`` (veRL's tool agent loop, the
      one that runs interactions; without it veRL 0.7.1 runs its single-turn loop) and
      ``extra_info.interaction_kwargs`` = ``{"name": name, "seed": s, "env_id": env_id}``
      for :class:`LiveRoomInteraction`.

    Args:
        env_id: A registered env id (default ``LiveRoom-v0``, or the spec's id).
        n: How many rows (streams), with seeds ``seed .. seed+n-1``.
        seed: The first seed.
        spec: A spec file to register first.
        name: The interaction's ``name`` in the interaction config (legacy rows).
        tools: Append :func:`tool_note` (the tools and the JSON action format) to the
            update; by default only for legacy rows.
        agent_name: The agent loop's registered name: rows for veRL 0.8 and later.
        segment_turns: Make each row a segment of this many turns from a seeded point of
            the stream (:mod:`liveroom_sim.trajectory.segments`); agent-loop rows only.
    """
    if segment_turns is not None and agent_name is None:
        raise ValueError("segments need the agent loop: pass agent_name='liveroom' (veRL 0.8 and later)")
    tools = agent_name is None if tools is None else tools
    import gymnasium as gym

    import liveroom_sim

    if spec is not None:
        env_id = liveroom_sim.register_spec(spec, env_id)
    env_id = env_id or DEFAULT_ENV_ID
    env = gym.make(env_id)
    rows = []
    from liveroom_sim.trajectory.segments import fast_forward, segment_prompt, segment_start

    for s in range(seed, seed + n):
        _, info = env.reset(seed=s)
        room = {"seed": s, "env_id": env_id}
        if segment_turns is not None:
            room.update(turns=int(segment_turns), start_s=segment_start(s, env.unwrapped.world.spec.stream.duration_s))
            _, info, _ = fast_forward(env, None, None, room["start_s"])
        prompt = segment_prompt(info["messages"])
        if tools:
            prompt[-1]["content"] += "\n\n" + tool_note(info["tools"])
        extra = {"index": s - seed}
        if agent_name is None:
            extra["interaction_kwargs"] = {"name": name, **room}
            agent = "tool_agent"  # veRL 0.7.1 runs interactions only in its tool agent loop
        else:
            extra["liveroom"] = room
            agent = agent_name
        rows.append(_row(env_id, prompt, extra, agent))
    env.close()
    return rows


def _row(env_id: str, prompt: list[dict], extra: dict, agent: str) -> dict:
    """One row in veRL's dataset columns."""
    return {
        "data_source": f"liveroom/{env_id}",
        "prompt": prompt,
        "ability": "live_commerce",
        # veRL's reward managers read a ground truth; the room holds the real one
        "reward_model": {"style": "rule", "ground_truth": ""},
        "extra_info": extra,
        "agent_name": agent,
    }
