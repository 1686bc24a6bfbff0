"""LiveRoom for veRL 0.8 and later: an agent loop that plays rooms token-in-token-out.

veRL 0.8 removed ``verl/interactions`` (PR #6074); multi-turn environments are now agent
loops, subclasses of ``verl.experimental.agent_loop.AgentLoopBase`` that veRL builds once
per sample and awaits as ``run(sampling_params, **row)``. This one:

1. opens the row's stream (``extra_info.liveroom``: ``seed``, ``env_id``, and for a
   segment ``turns`` with ``start_s``, see :mod:`liveroom_sim.trajectory.segments`);
2. renders the row's prompt (``raw_prompt``) with the room's tool schemas through veRL's
   own tokenisation (the Continuous Token builder on 0.9, ``apply_chat_template`` on 0.8)
   and asks veRL's server manager for tokens: ``generate(prompt_ids=...)``;
3. decodes the sampled ids into the room's action (``<tool_call>`` blocks are tool calls,
   other text is said to the room), steps the room, and appends the room's answer (tool
   results, the next room update) as environment tokens, mask 0, after the model's
   tokens, mask 1, with the engine's logprobs: the ids the engine sampled are kept, never
   re-tokenised;
4. stops when the stream ends, the segment's K turns are played,
   ``multi_turn.max_assistant_turns`` is reached or the response is full; a rollout that
   stops before the stream ends gets the room's early-end settlement.

The output's ``reward_score`` is the episode's LiveRoom return, which veRL writes into
``rm_scores`` (no custom reward function is needed); ``extra_fields`` carry
``turn_scores`` (each step's total), ``reward_extra_info`` (the return by component,
which veRL logs) and ``liveroom`` (segment labels and steps).

Register it in the workers with an agent loop config file (:func:`write_agent_loop_config`)
and pick it per row with the ``agent_name`` column (:func:`liveroom_sim.integrations.verl.make_rows`).

This module imports veRL (and so torch and Ray): it must subclass veRL's base. Import it
only where veRL runs; :mod:`liveroom_sim.integrations.verl` stays free of veRL.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput, register

from liveroom_sim.integrations.verl import DEFAULT_ENV_ID, action_from_message

__all__ = ["AGENT_NAME", "LiveRoomAgentLoop", "write_agent_loop_config"]

AGENT_NAME = "liveroom"
DEFAULT_TURNS = 24


@register(AGENT_NAME)
class LiveRoomAgentLoop(AgentLoopBase):
    """Plays one LiveRoom episode (or segment) per sample through veRL's server manager."""

    def __init__(self, *args, **kwargs):
        kwargs.pop("tools", None)  # veRL's tool list: the room runs its own tools
        super().__init__(*args, **kwargs)
        rollout = self.config.actor_rollout_ref.rollout
        self.prompt_length = int(rollout.prompt_length)
        self.response_length = int(rollout.response_length)
        self.max_turns = int(rollout.multi_turn.get("max_assistant_turns") or DEFAULT_TURNS)

    async def run(self, sampling_params: dict[str, Any], **kwargs) -> AgentLoopOutput:
        row = _liveroom_kwargs(kwargs)
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        loop = asyncio.get_running_loop()
        env, info = await loop.run_in_executor(None, _open_room, row)
        try:
            return await self._play(env, info, row, messages, sampling_params)
        finally:
            env.close()

    async def _play(self, env, info, row, messages, sampling_params) -> AgentLoopOutput:
        from liveroom_sim.trajectory.segments import settle_early_end
        from liveroom_sim.trajectory.steps import turn_entry

        loop = asyncio.get_running_loop()
        tools = info["tools"]
        prompt_ids = await self._initial_tokens(messages, tools)
        ids, mask, logprobs = list(prompt_ids), [], []
        request_id, scores, entries, done = uuid4().hex, [], [], False
        turns = min(self.max_turns, int(row.get("turns") or self.max_turns))
        for _ in range(turns):
            out = await self.server_manager.generate(request_id=request_id, prompt_ids=ids,
                                                     sampling_params=sampling_params)
            ids, mask, logprobs = await self._add_model_tokens(ids, mask, logprobs, out)
            text = self.tokenizer.decode(out.token_ids, skip_special_tokens=False)
            action = action_from_message({"role": "assistant", "content": text})
            _, reward, terminated, truncated, info = await loop.run_in_executor(None, env.step, action)
            scores.append(float(reward))
            entries.append(turn_entry(info, entries))
            done = bool(terminated or truncated)
            if done or len(mask) >= self.response_length:
                break
            previous = [*messages, _assistant_message(action)]
            messages = [*previous, *_room_answer(info["messages"])]
            ids, mask, logprobs = await self._add_env_tokens(previous, messages, ids, mask, logprobs, tools)
            if len(mask) >= self.response_length:
                break
        returns = dict(env.unwrapped.room.returns)
        settled = {} if done else settle_early_end(env.unwrapped.room)
        for key, value in settled.items():
            returns[key] = returns.get(key, 0.0) + value
        if settled and scores:  # what stopping here costs the room falls on the last turn
            scores[-1] += settled.get("total", 0.0)
        response = ids[len(ids) - len(mask):]
        prompt = ids[: len(ids) - len(mask)]
        extra = {"turn_scores": scores, "reward_extra_info": {f"liveroom/{k}": float(v) for k, v in returns.items()},
                 "liveroom": {"steps": entries, "early_end": settled, "seed": row.get("seed")}}
        return AgentLoopOutput(
            prompt_ids=prompt, response_ids=response[: self.response_length],
            response_mask=mask[: self.response_length],
            response_logprobs=logprobs[: self.response_length] if logprobs else None,
            reward_score=float(returns["total"]), num_turns=2 * len(scores) + 1, metrics={}, extra_fields=extra)

    # ------------------------------------------------------------ tokenisation
    # veRL 0.9 tokenises through its Continuous Token builder (``ct_*``); 0.8 through
    # ``apply_chat_template``, rendering appended messages alone. Both are veRL's own
    # code, so the tokens match what its ToolAgentLoop would build.
    async def _initial_tokens(self, messages: list[dict], tools: list[dict]) -> list[int]:
        if hasattr(self, "ct_build_initial_tokens"):
            return list(await self.ct_build_initial_tokens(messages, tools=tools))
        return list(await self.apply_chat_template(messages, tools=tools))

    async def _add_model_tokens(self, ids, mask, logprobs, out):
        sampled = list(out.token_ids)
        lp = list(out.log_probs) if out.log_probs else None
        if hasattr(self, "ct_merge_assistant_token"):
            merged, mask, logprobs = await self.ct_merge_assistant_token(
                ids, sampled, mask, logprobs if (logprobs or lp) else None, assistant_logprobs=lp)
            return list(merged.token_ids), list(mask), list(logprobs or [])
        return [*ids, *sampled], [*mask, *[1] * len(sampled)], [*logprobs, *lp] if lp else []

    async def _add_env_tokens(self, previous, messages, ids, mask, logprobs, tools):
        if hasattr(self, "ct_merge_context_msg"):
            merged, mask, logprobs = await self.ct_merge_context_msg(
                previous, messages, ids, mask, logprobs or None, tools=tools)
            return list(merged.token_ids), list(mask), list(logprobs or [])
        delta = list(await self.apply_chat_template(messages[len(previous):], remove_system_prompt=True))
        return [*ids, *delta], [*mask, *[0] * len(delta)], [*logprobs, *[0.0] * len(delta)] if logprobs else []


def _liveroom_kwargs(kwargs: dict) -> dict:
    """The row's LiveRoom settings: ``extra_info.liveroom`` (or the legacy ``interaction_kwargs``)."""
    extra = kwargs.get("extra_info") or {}
    row = extra.get("liveroom") or extra.get("interaction_kwargs") or kwargs.get("interaction_kwargs") or {}
    return dict(row)


def _open_room(row: dict):
    """Open the row's stream (and fast-forward to its segment); returns the env and its info."""
    import gymnasium as gym

    import liveroom_sim

    env_id = row.get("env_id") or DEFAULT_ENV_ID
    if row.get("spec"):
        env_id = liveroom_sim.register_spec(row["spec"], row.get("env_id"))
    env = gym.make(env_id, **dict(row.get("env_kwargs") or {}))
    _, info = env.reset(seed=int(row.get("seed") or 0))
    if row.get("turns") is not None and (row.get("start_s") is not None or row.get("start_turn") is not None):
        from liveroom_sim.trajectory.segments import fast_forward

        start_turn = row.get("start_turn")
        _, info, _ = fast_forward(env, None if start_turn is None else int(start_turn), None, row.get("start_s"))
    return env, info


def _assistant_message(action: str) -> dict:
    """The assistant message the room saw, for rendering what follows it."""
    try:
        parsed = json.loads(action)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and parsed.get("tool_calls"):
        calls = [{"id": c.get("id"), "type": "function", "function": c.get("function") or {}}
                 for c in parsed["tool_calls"] if isinstance(c, dict)]
        return {"role": "assistant", "content": parsed.get("content") or "", "tool_calls": calls}
    return {"role": "assistant", "content": action}


def _room_answer(messages: list[dict]) -> list[dict]:
    """What the room added after the latest action: tool results, or hook notes and the next update."""
    last = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=-1)
    return [{k: v for k, v in m.items() if k in ("role", "content", "tool_call_id")} for m in messages[last + 1:]]


def write_agent_loop_config(path: str | Path) -> Path:
    """Write the agent loop config veRL reads (``actor_rollout_ref.rollout.agent.agent_loop_config_path``).

    veRL builds agent loops in its own worker processes, where this module has not been
    imported: the file names the class for them.
    """
    path = Path(path)
    path.write_text(f"- name: {AGENT_NAME}\n  _target_: {LiveRoomAgentLoop.__module__}.{LiveRoomAgentLoop.__qualname__}\n",
                    encoding="utf-8")
    return path
