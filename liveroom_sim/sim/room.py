"""The room: the state machine of one live-stream episode (no Gymnasium inside).

``Room(world, rng)`` opens a stream; ``room.step(action)`` runs one turn (a tool turn or
a reply) and returns a :class:`Turn`. What the policy sees is rendered by
:meth:`Room.messages` and :meth:`Room.tools` from the current harness and room state.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from liveroom_sim.harness.actions import Action, parse_action, strip_reasoning
from liveroom_sim.harness.augment import AugmentConfig, augment, episode_harness
from liveroom_sim.harness.faults import ToolFaultPlan, fault_generator
from liveroom_sim.rewards.conduct import says_slogan
from liveroom_sim.rewards.context import Outcome, TurnContext
from liveroom_sim.rewards.model import RewardBreakdown, RewardModel
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.context import reply_context
from liveroom_sim.sim.ending import losses, losses_since, settle
from liveroom_sim.sim.history import Block, room_update
from liveroom_sim.sim.hooks import (
    check_input,
    check_tool_calls,
    corrections_generator,
    fired_hooks,
    simulated_correction,
)
from liveroom_sim.sim.prompting import SystemPrompts, tool_schemas
from liveroom_sim.sim.reactions import react, reply_target
from liveroom_sim.sim.report import event_note, room_metrics
from liveroom_sim.sim.toolbox import Lookups, run_tool_turn
from liveroom_sim.sim.viewers import ChatMessage, ChatWriter, ask_facts
from liveroom_sim.spec import World
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.market import Market


@dataclass(slots=True)
class Turn:
    """What one step did."""

    kind: str
    reward: RewardBreakdown
    events: list[dict]
    delivered: bool = False
    hooks: tuple[str, ...] = ()
    tool_errors: tuple[str, ...] = ()
    tool_faults: tuple[dict, ...] = ()
    answered: str | None = None
    latency_s: float = 0.0
    reply: str = ""
    reasoning_chars: int = 0


class Room:
    """One episode of a live stream.

    Args:
        world: The validated spec (catalog, personas, campaign, harness, rules, config).
        rng: The episode's only source of randomness.
        reward_model: Scores turns; defaults to the spec's rule-based model.
        augmentation: Harness-State Augmentation settings; default: the spec's.
        variant: Which of the seed's harness variants to draw (when augmenting).
        record: Keep the whole trajectory (see :meth:`transcript`), not only the
            recent window the policy is shown.
    """

    def __init__(self, world: World, rng: np.random.Generator, reward_model: RewardModel | None = None,
                 augmentation: AugmentConfig | None = None, variant: int = 0, record: bool = False):
        spec = world.spec
        # This episode's own prices, stock, coupons and timeline (before HSA spawns its
        # generator, so every harness variant of a seed gets the same world).
        world = world.for_episode(rng)
        self._record: list[dict] | None = [] if record else None
        self.accounting: dict = {}
        self.world, self.spec, self.rng = world, spec, rng
        self.language = spec.language
        self.market = Market.open(world.catalog, world.campaign.opening_product, world.rules)
        self.augmentation = augmentation or spec.harness_augmentation
        self.harness, self.augmented, self._augment_rng = episode_harness(
            world.harness, spec.language, self.augmentation, rng, variant)
        self.reward_model = reward_model or RewardModel(spec.reward)
        self.words = world.phrasebook.fact_words
        writer = ChatWriter(world.phrasebook, spec.language, spec.room.host_name, _phraser(spec))
        self.crowd = Crowd(spec.viewers, world.personas, writer, spec.language, rng)
        self.clock = 0.0
        self.steps = 0
        self._ends = (spec.stream.duration_s, spec.stream.max_steps)  # (read several times a step)
        self.returns = dict.fromkeys((*self.reward_model.components, "total"), 0.0)
        self.replies = 0
        self.blocked = 0
        self.tool_errors = 0
        self.latency_total = 0.0
        self._last_latency = 0.0
        self.recent_replies: deque[str] = deque(maxlen=5)
        self.featured_at = 0.0
        self.pitched_at = -math.inf
        self.settled = False
        self.lookups = Lookups()
        # Tool faults (off unless the spec sets rates or a caller pins one): their own
        # generator, so the viewers' stream is the same with and without them.
        tools = spec.tools
        self.faults = ToolFaultPlan(tools, fault_generator(rng, variant) if tools.faults.total > 0 else None)
        self.replies_since_slogan = 99
        self._event_index = 0
        self._retry = False
        self._reasoning = 0
        self._retries = 0  # retries granted in this exchange (the harness's retry control)
        self._input_hooks: tuple[str, ...] = ()
        self._corrections: np.random.Generator | None = None
        self._history: deque[Block] = deque(maxlen=spec.stream.history_turns)
        self._closed: tuple = (None, (), "")  # see _closed_blocks
        self._head: tuple = (None, "")  # (system prompt, its observation heading)
        self._notes: list[str] = []
        self._seen_chat = 0
        self._tools_for = None
        self._prompts = SystemPrompts({"name": spec.room.name, "host_name": spec.room.host_name}, self.language)
        self._harness_version = 0
        for _ in range(spec.viewers.initial):
            self.crowd.arrive(0.0)
        self.events = self._advance(0.0)
        self._open_block()

    # ----------------------------------------------------------------- the policy's view
    def messages(self) -> list[dict]:
        """The OpenAI chat messages an LLM would be sent now.

        The message dicts are copies of the room's, made once and shared by the infos of
        later steps: editing them changes nothing in the room (treat them as read-only).
        """
        out = [{"role": "system", "content": self._system_prompt()}]
        for block in self._history:
            out.extend(block.public)
        return out

    def messages_now(self) -> Callable[[], list[dict]]:
        """A function that returns :meth:`messages` as they are now, whenever it is
        called (for an ``info`` built on first read: the room moves on meanwhile)."""
        system = self._system_prompt()
        closed, _ = self._closed_blocks()
        public = self._history[-1].public
        n = len(public)

        def messages() -> list[dict]:
            out = [{"role": "system", "content": system}]
            for done in closed:
                out.extend(done)
            out.extend(public if len(public) == n else public[:n])  # the last block only grows
            return out

        return messages

    def observation(self) -> str:
        """The next-turn prompt as text: :meth:`messages` flattened."""
        closed, closed_text = self._closed_blocks()
        prompt = self._system_prompt()
        if self._head[0] is not prompt:  # (the prompt is kept until what it shows changes)
            self._head = (prompt, "system: " + prompt)
        head = self._head[1]
        if closed:
            return "\n\n".join((head, closed_text, self._history[-1].text()))
        return head + "\n\n" + self._history[-1].text()

    def _closed_blocks(self) -> tuple[tuple[list[dict], ...], str]:
        """The exchanges before the current one: their public messages and their text
        joined. Only the last block of the history takes messages, so the earlier ones
        are fixed until the next exchange opens: gathered once per exchange (keyed on the
        last block's identity), not on every step."""
        last = self._history[-1]
        if self._closed[0] is not last:
            done = list(self._history)[:-1]
            self._closed = (last, tuple(b.public for b in done), "\n\n".join(b.text() for b in done))
        return self._closed[1], self._closed[2]

    def transcript(self) -> list[dict]:
        """The whole trajectory in OpenAI format (system prompt as at the end), when the
        room was opened with ``record=True``; else the recent window."""
        if self._record is None:
            return self.messages()
        return [{"role": "system", "content": self._system_prompt()}, *(dict(m) for m in self._record)]

    def tools(self) -> list[dict]:
        """The current harness's tool schemas (OpenAI format).

        Built once per harness state, shared by steps and rooms: treat it as read-only.
        """
        if self._tools_for is not self.harness:
            self._tools = tool_schemas(self.harness)
            self._tools_for = self.harness
        return self._tools

    def _system_prompt(self) -> str:
        return self._prompts.text(self.harness, self.market, self.crowd)

    def _open_block(self) -> None:
        """Start a new exchange with the room update (new chat, notes, waiting questions)."""
        new = self.crowd.chat[self._seen_chat:]
        self._seen_chat = len(self.crowd.chat)
        update = room_update(self.clock, self.market, self.crowd, self.harness, self._notes, new)
        self._input_hooks = ()
        if any(h.type == "input_check" for h in self.harness.hooks):  # it reads what the update shows
            shown = [*new[-12:], *self.crowd.waiting()]  # (waiting: read by the update just now)
            update, fired = check_input(update, shown, self.harness, self.world.phrasebook.cues.get("inject", ()))
            self._input_hooks = tuple(f"{h.type}:{h.action}" for h, _ in fired)
        self._notes = []
        block = Block(record=self._record)
        block.add({"role": "user", "content": update})
        self._history.append(block)
        self.lookups = Lookups()  # facts (and skills) must be looked up again each exchange
        self._retries = 0
        self._tool_turns = 0  # tool turns since the last reply (the harness's max_tool_turns)
        self.faults.new_exchange()
        if self.harness.retry.simulated:  # HSA: open with a simulated hook-triggered correction
            if self._corrections is None:
                self._corrections = corrections_generator(self.rng)
            simulated = simulated_correction(self, self._corrections)
            if simulated is not None:
                hook, draft, message = simulated
                # (context only: the exchange's own retries stay the harness's)
                block.add({"role": "assistant", "content": draft}, {"role": "user", "content": message})
                self._input_hooks += (f"{hook.type}:simulated",)

    # ----------------------------------------------------------------------- stepping
    @property
    def terminated(self) -> bool:
        return self.clock >= self._ends[0]

    @property
    def truncated(self) -> bool:
        return self.clock < self._ends[0] and self.steps >= self._ends[1]

    def step(self, action, latency_s: float | None = None) -> Turn:
        """Run one turn. Never raises on a bad action: it becomes an error and a penalty.

        Args:
            action: The policy's action (normally a ``str``).
            latency_s: Measured time the policy took; used for the clock when the spec's
                ``latency.use_measured`` is on.
        """
        self.steps += 1
        lost_before = losses(self)
        action, reasoning = strip_reasoning(action)  # the room never hears the reasoning
        self._reasoning = reasoning
        parsed = parse_action(action, self.harness, self.steps)
        lat = self.spec.latency
        # Time the policy took to produce the action: measured when the spec says so
        # (an LLM's real latency), else the spec's model of it.
        thinking = float(latency_s) if latency_s is not None and lat.use_measured else None
        if parsed.kind == "tool":
            turn = self._tool_turn(parsed, lat.tool_s if thinking is None else thinking + lat.tool_s)
        else:
            speaking = lat.reply_per_char_s * min(len(parsed.text), 2000)
            turn = self._reply_turn(parsed, (lat.reply_base_s if thinking is None else thinking) + speaking)
        turn.reasoning_chars = reasoning
        if parsed.kind == "reply":
            self._tool_turns = 0  # the cap counts the tool turns before each reply (a retry too)
        self.latency_total += turn.latency_s
        self._last_latency = turn.latency_s
        turn.events = self._advance(self.clock + turn.latency_s)
        if parsed.kind == "reply" and not self._retry:
            self._open_block()
            turn.hooks += self._input_hooks  # the input check ran on the update this step opened
        turn.reward = self.reward_model.settle(turn.reward, *losses_since(self, lost_before))
        for k, score in turn.reward.scores.items():
            self.returns[k] += score.value
        self.returns["total"] += turn.reward.total
        return turn

    # ------------------------------------------------------------- ending early
    def settle(self) -> RewardBreakdown:
        """End the shift now, scoring the room it leaves (quitting is never free): see
        :func:`liveroom_sim.sim.ending.settle`. Idempotent; also added to :attr:`returns`."""
        return settle(self)

    # ------------------------------------------------------------------ turns
    def _tool_turn(self, action: Action, latency: float) -> Turn:
        action, fired = check_tool_calls(action, self.harness, self.market)
        self._tool_turns += 1
        cap = self.harness.constraints.max_tool_turns
        refused = None if cap is None or self._tool_turns <= cap else (
            f"tool-turn limit reached: at most {cap} tool turn(s) before each reply; reply to the room now")
        calls, results, errors, faults, delay = run_tool_turn(action, self.harness, self.market,
                                                              self._harness_version, self.faults, refused)
        self.tool_errors += len(errors)
        latency += delay
        self._history[-1].add({"role": "assistant", "content": action.text or None, "tool_calls": calls}, *results)
        redundant = self.lookups.note(action, results, self._harness_version, faults)
        ctx = TurnContext("tool", "", self.market, self.harness, self.words, tool_calls=len(calls),
                          tool_errors=tuple(errors), latency_budget_s=self.spec.latency.budget_s,
                          redundant_calls=redundant, **self._reasoning_fields())
        hooks = tuple(f"{h.type}:{h.action}" for h, _ in fired) if fired else ()
        return Turn("tool", self.reward_model.score(ctx), [], hooks=hooks,
                    tool_errors=tuple(errors), tool_faults=tuple(faults), latency_s=latency)

    def _reasoning_fields(self) -> dict:
        budget = self.spec.reasoning.budget_chars if self.spec.reasoning is not None else None
        return {"reasoning_chars": self._reasoning, "reasoning_budget": budget}

    def _reply_turn(self, action: Action, latency: float) -> Turn:
        text = action.text
        target = reply_target(text, self.crowd, self.harness.constraints.mention_format, self._facts)
        ctx = reply_context(self, text, target, latency)
        ctx.reasoning_chars, ctx.reasoning_budget = self._reasoning_fields().values()
        hooks = fired_hooks(ctx)
        blocking = [h for h in hooks if h[0].action != "warn"]
        control = self.harness.retry
        retry = bool(blocking) and blocking[0][0].action == "block_retry" and self._retries < control.max_retries
        delivered = not blocking and bool(text.strip())
        outcome = Outcome()
        if delivered:
            outcome = react(self.crowd, self.market, self.rng, self.clock, target, ctx.analysis)
        ctx = ctx.with_outcome(outcome, tuple(f"{h.type}:{h.action}" for h, _ in hooks))
        reward = self.reward_model.score(ctx)
        self._history[-1].add({"role": "assistant", "content": text})
        if retry:
            self._retries += 1
            hook, message = blocking[0]
            self._history[-1].add({"role": "user", "content": control.message.format(
                message=message, type=hook.type, left=control.max_retries - self._retries)})
        self._retry = retry
        if blocking:
            self.blocked += 1
        if delivered:
            self.replies += 1
            self.recent_replies.append(text)
            if self.market.featured in ctx.analysis.products:
                self.pitched_at = self.clock
            style = self.market.style
            said_slogan = bool(style.slogan) and says_slogan(ctx.analysis.norm, style.slogan)
            self.replies_since_slogan = 0 if said_slogan else self.replies_since_slogan + 1
        return Turn("reply", reward, [], delivered, ctx.hooks, answered=target.viewer.name if target else None,
                    latency_s=latency, reply=text)

    def _facts(self, m: ChatMessage):
        return ask_facts(m, self.market, self.words) if m.is_fact_question else ()

    # ---------------------------------------------------------------- the world moves
    def _advance(self, to: float) -> list[dict]:
        """Move the clock to ``to``: campaign events, arrivals and chat in time order."""
        fired: list[dict] = []
        events = self.world.campaign.events
        crowd, market = self.crowd, self.market
        t_event = events[self._event_index].at if self._event_index < len(events) else math.inf
        while True:
            t_arrive, t_chat = crowd.next_arrival, crowd.next_chat_at()
            t = min(t_event, t_arrive, t_chat)
            if t > to:
                break
            if t == t_event:
                fired.append(self._fire(events[self._event_index]))
                self._event_index += 1
                t_event = events[self._event_index].at if self._event_index < len(events) else math.inf
            elif t == t_arrive:
                crowd.arrive(t)
                crowd.schedule_arrival(t)
            else:
                crowd.chat_once(market)
        self.clock = max(self.clock, to)
        crowd.expire(self.clock, self.market)
        crowd.drift_out(self.clock)
        return fired

    def _fire(self, event) -> dict:
        record = event.model_dump(mode="json", exclude_defaults=True)
        record["at"] = event.at
        before = self.harness
        if isinstance(event, ev.HarnessChange):
            self._change_harness(event)
        else:
            self.market.apply(event)
            if isinstance(event, ev.Feature):
                self.featured_at = event.at
        self._notes.append(event_note(event, record, before, self.harness))
        return record

    def _change_harness(self, event: ev.HarnessChange) -> None:
        self.harness = self.harness.after(event)
        if self.augmented and self.augmentation.at_harness_change:
            self.harness = augment(self.harness, self.language, self._augment_rng, self.augmentation.operators)
        self._harness_version += 1

    def metrics(self) -> dict:
        return room_metrics(self)


def _phraser(spec):
    llm = spec.viewers.llm
    if llm is None:
        return None
    from liveroom_sim.llm.client import Endpoint
    from liveroom_sim.llm.viewers import ViewerPhraser

    endpoint = Endpoint(llm.model, llm.base_url, timeout_s=llm.timeout_s, max_retries=llm.max_retries)
    return ViewerPhraser(endpoint, spec.language, llm.personas)
