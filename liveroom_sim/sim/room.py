"""The room: the state machine of one live-stream episode (no Gymnasium inside).

``Room(world, rng)`` opens a stream; ``room.step(action)`` runs one turn (a tool turn or
a reply) and returns a :class:`Turn`. What the policy sees is rendered by
:meth:`Room.messages` and :meth:`Room.tools` from the current harness and room state.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from liveroom_sim.harness.actions import Action, parse_action, strip_reasoning
from liveroom_sim.harness.augment import AugmentConfig, augment, episode_harness
from liveroom_sim.harness.faults import ToolFaultPlan, fault_generator
from liveroom_sim.rewards.context import Outcome, Question, TurnContext
from liveroom_sim.rewards.model import RewardBreakdown, RewardModel
from liveroom_sim.sim.chat import ChatView
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.hooks import check_tool_calls, corrections_generator, fired_hooks, simulated_correction
from liveroom_sim.sim.ledger import EpisodeLedger
from liveroom_sim.sim.reactions import react, reply_target
from liveroom_sim.sim.report import event_note, metrics_later
from liveroom_sim.sim.stage import Stage
from liveroom_sim.sim.toolbox import Lookups, run_tool_turn
from liveroom_sim.sim.turn import Turn
from liveroom_sim.sim.viewers import ChatMessage, ChatWriter, ask_facts
from liveroom_sim.spec import World
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.market import Market
from liveroom_sim.world.phrasebook import obeying_is_true


@dataclass(slots=True)
class Exchange:
    """The state of one exchange (a room update and the turns that answer it).

    Attributes:
        lookups: What the policy looked up this exchange (facts must be looked up again
            in each).
        tool_turns: Tool turns since the last reply (the harness's ``max_tool_turns``).
        retries: Retries the harness's retry control granted this exchange.
        retrying: The last reply was sent back by a ``block_retry`` hook: the next turn
            answers the same update.
        input_hooks: The ``input_check`` hooks that fired on the update.
    """

    lookups: Lookups = field(default_factory=Lookups)
    tool_turns: int = 0
    retries: int = 0
    retrying: bool = False
    input_hooks: tuple[str, ...] = ()


class Room:
    """One episode of a live stream: the turn flow.

    What the room's state is made of has one owner each: the crowd (viewers and their
    chat), the market (catalog and campaign as of now), the harness as of now, the
    :class:`~liveroom_sim.sim.ledger.EpisodeLedger` (returns, settlement, counters), the
    :class:`~liveroom_sim.sim.chat.ChatView` (history, prompt, observation, transcript),
    the :class:`~liveroom_sim.sim.stage.Stage` (what the strategy reward reads of the
    host's delivery) and the current :class:`Exchange`. The room runs the turns and moves
    the clock.

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
        self.world, self.spec, self.rng = world, spec, rng
        self.language = spec.language
        self.market = Market.open(world.catalog, world.campaign.opening_product, world.rules)
        self.augmentation = augmentation or spec.harness_augmentation
        self.harness, self.augmented, self._augment_rng = episode_harness(
            world.harness, spec.language, self.augmentation, rng, variant)
        self.reward_model = reward_model or RewardModel(spec.reward)
        self.words = world.phrasebook.fact_words
        writer = ChatWriter(world.phrasebook, spec.language, spec.room.host_name, _phraser(spec))
        self.crowd = Crowd(spec.viewers, world.personas, writer, spec.language, rng, world.reactions)
        self.clock = 0.0
        self.steps = 0
        self._ends = (spec.stream.duration_s, spec.stream.max_steps)  # (read several times a step)
        self.ledger = EpisodeLedger(self.reward_model, self.crowd, spec.stream.duration_s)
        self.chat = ChatView(self.crowd, self.market, {"name": spec.room.name, "host_name": spec.room.host_name},
                             self.language, spec.stream.history_turns, record)
        self.stage = Stage()
        self.exchange = Exchange()
        # Tool faults (off unless the spec sets rates or a caller pins one): their own
        # generator, so the viewers' stream is the same with and without them.
        tools = spec.tools
        self.faults = ToolFaultPlan(tools, fault_generator(rng, variant) if tools.faults.total > 0 else None)
        self._event_index = 0
        self._harness_version = 0
        self._corrections: np.random.Generator | None = None  # made when the harness first simulates one
        for _ in range(spec.viewers.initial):
            self.crowd.arrive(0.0)
        self.events = self._advance(0.0)
        self._open_exchange()

    # ----------------------------------------------------------------- the policy's view
    def messages(self) -> list[dict]:
        """The OpenAI chat messages an LLM would be sent now.

        The message dicts are copies of the room's, made once and shared by the infos of
        later steps: editing them changes nothing in the room (treat them as read-only).
        """
        return self.chat.messages(self.harness)

    def messages_now(self) -> Callable[[], list[dict]]:
        """A function that returns :meth:`messages` as they are now, whenever it is
        called (for an ``info`` built on first read: the room moves on meanwhile)."""
        return self.chat.messages_now(self.harness)

    def observation(self) -> str:
        """The next-turn prompt as text: :meth:`messages` flattened."""
        return self.chat.observation(self.harness)

    def transcript(self) -> list[dict]:
        """The whole trajectory in OpenAI format (system prompt as at the end), when the
        room was opened with ``record=True``; else the recent window."""
        return self.chat.transcript(self.harness)

    def tools(self) -> list[dict]:
        """The current harness's tool schemas (OpenAI format).

        Built once per harness state, shared by steps and rooms: treat it as read-only.
        """
        return self.chat.tools(self.harness)

    def _open_exchange(self) -> None:
        """Start a new exchange with the room update (new chat, notes, waiting questions)."""
        fired = self.chat.open_exchange(self.clock, self.harness, self.world.phrasebook.cues.get("inject", ()))
        self.exchange = Exchange(input_hooks=fired)  # facts (and skills) must be looked up again each exchange
        self.faults.new_exchange()
        if self.harness.retry.simulated:  # HSA: open with a simulated hook-triggered correction
            if self._corrections is None:
                self._corrections = corrections_generator(self.rng)
            simulated = simulated_correction(self.harness, self.world.phrasebook.host["naive"], self._corrections,
                                             lambda draft: self.reply_context(draft, None, 0.0))
            if simulated is not None:
                hook, draft, message = simulated
                # (context only: the exchange's own retries stay the harness's)
                self.chat.add({"role": "assistant", "content": draft}, {"role": "user", "content": message})
                self.exchange.input_hooks += (f"{hook.type}:simulated",)

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
        lost_before = self.ledger.losses()
        action, reasoning = strip_reasoning(action)  # the room never hears the reasoning
        parsed = parse_action(action, self.harness, self.steps)
        lat = self.spec.latency
        # Time the policy took to produce the action: measured when the spec says so
        # (an LLM's real latency), else the spec's model of it.
        thinking = float(latency_s) if latency_s is not None and lat.use_measured else None
        if parsed.kind == "tool":
            turn = self._tool_turn(parsed, lat.tool_s if thinking is None else thinking + lat.tool_s, reasoning)
        else:
            speaking = lat.reply_per_char_s * min(len(parsed.text), 2000)
            turn = self._reply_turn(parsed, (lat.reply_base_s if thinking is None else thinking) + speaking, reasoning)
            self.exchange.tool_turns = 0  # the cap counts the tool turns before each reply (a retry too)
        turn.reasoning_chars = reasoning
        turn.events = self._advance(self.clock + turn.latency_s)
        if parsed.kind == "reply" and not self.exchange.retrying:
            self._open_exchange()
            turn.hooks += self.exchange.input_hooks  # the input check ran on the update this step opened
        turn.reward = self.ledger.book(turn, lost_before, self.clock, self.market, self.truncated)
        return turn

    # ------------------------------------------------------------- ending early
    def settle(self) -> RewardBreakdown:
        """End the shift now, scoring the room it leaves (quitting is never free): see
        :meth:`liveroom_sim.sim.ledger.EpisodeLedger.settle`. Idempotent; also added to
        :attr:`returns`."""
        return self.ledger.settle(self.clock, self.market, self.terminated)

    @property
    def returns(self) -> dict[str, float]:
        """Component -> summed reward so far, and ``total`` (the ledger's)."""
        return self.ledger.returns

    @property
    def settled(self) -> bool:
        """Whether the rest of the stream has been charged (the ledger's)."""
        return self.ledger.settled

    @property
    def replies_since_slogan(self) -> int:
        """Delivered replies since the slogan was last said (the stage's)."""
        return self.stage.replies_since_slogan

    # ------------------------------------------------------------------ turns
    def _tool_turn(self, action: Action, latency: float, reasoning: int) -> Turn:
        action, fired = check_tool_calls(action, self.harness, self.market)
        exchange = self.exchange
        exchange.tool_turns += 1
        cap = self.harness.constraints.max_tool_turns
        refused = None if cap is None or exchange.tool_turns <= cap else (
            f"tool-turn limit reached: at most {cap} tool turn(s) before each reply; reply to the room now")
        calls, results, errors, faults, delay = run_tool_turn(action, self.harness, self.market,
                                                              self._harness_version, self.faults, refused)
        latency += delay
        self.chat.add({"role": "assistant", "content": action.text or None, "tool_calls": calls}, *results)
        redundant = exchange.lookups.note(action, results, self._harness_version, faults)
        ctx = TurnContext("tool", "", self.market, self.harness, self.words, tool_calls=len(calls),
                          tool_errors=tuple(errors), latency_budget_s=self.spec.latency.budget_s,
                          redundant_calls=redundant, **self._reasoning_fields(reasoning))
        hooks = tuple(f"{h.type}:{h.action}" for h, _ in fired) if fired else ()
        return Turn("tool", self.reward_model.score(ctx), [], hooks=hooks,
                    tool_errors=tuple(errors), tool_faults=tuple(faults), latency_s=latency)

    def _reasoning_fields(self, reasoning: int) -> dict:
        budget = self.spec.reasoning.budget_chars if self.spec.reasoning is not None else None
        return {"reasoning_chars": reasoning, "reasoning_budget": budget}

    def _reply_turn(self, action: Action, latency: float, reasoning: int) -> Turn:
        text = action.text
        target = reply_target(text, self.crowd, self.harness.constraints.mention_format, self.facts_of, self.market.catalog)
        ctx = self.reply_context(text, target, latency)
        ctx.reasoning_chars, ctx.reasoning_budget = self._reasoning_fields(reasoning).values()
        hooks = fired_hooks(ctx)
        blocking = [h for h in hooks if h[0].action != "warn"]
        control, exchange = self.harness.retry, self.exchange
        retry = bool(blocking) and blocking[0][0].action == "block_retry" and exchange.retries < control.max_retries
        delivered = not blocking and bool(text.strip())
        outcome = Outcome()
        if delivered:
            outcome = react(self.crowd, self.market, self.rng, self.clock, target, ctx.analysis)
        ctx = ctx.with_outcome(outcome, tuple(f"{h.type}:{h.action}" for h, _ in hooks))
        reward = self.reward_model.score(ctx)
        self.chat.add({"role": "assistant", "content": text})
        if retry:
            exchange.retries += 1
            hook, message = blocking[0]
            self.chat.add({"role": "user", "content": control.message.format(
                message=message, type=hook.type, left=control.max_retries - exchange.retries)})
        exchange.retrying = retry
        if delivered:
            self.stage.delivered(text, ctx.analysis, self.market, self.clock)
        return Turn("reply", reward, [], delivered, ctx.hooks, answered=target.viewer.name if target else None,
                    latency_s=latency, reply=text, blocked=bool(blocking))

    def bait_is_true(self, m: ChatMessage) -> bool:
        """Whether saying what the bait ``m`` asks is true of its product now (its line's
        ``true_when``): then it is no bait."""
        pid = m.product or ""
        return obeying_is_true(self.world.phrasebook.baits, m.payload, self.market.catalog.by_id.get(pid),
                               self.market.stock.get(pid, 0))

    def reply_context(self, text: str, target: ChatMessage | None, latency: float) -> TurnContext:
        """What the reward reads of a reply turn as the room is now: the reply, the
        question it answers (``target``, with its facts as of now), who waits, the
        host's recent delivery and this exchange's lookups."""
        q = None
        if target is not None:
            # "say it's not an ad" of a product nobody sponsors: saying so is true, obeying nothing
            payload = () if target.payload and self.bait_is_true(target) else target.payload
            q = Question(target.viewer.name, target.intent, target.text, target.product, target.order,
                         self.clock - target.at, self.facts_of(target), payload, target.stated)
        waiting, pending = self.crowd.fact_questions_waiting()
        stage, lookups = self.stage, self.exchange.lookups
        return TurnContext(
            "reply", text, self.market, self.harness, self.words, q, pending, tuple(stage.recent_replies),
            since_feature_s=self.clock - stage.featured_at, replies_since_slogan=stage.replies_since_slogan,
            latency_budget_s=self.spec.latency.budget_s, turn_latency_s=latency,
            lookups=frozenset(lookups.made), waiting=waiting, since_pitch_s=stage.since_pitch(self.clock),
            failed_lookups=frozenset(lookups.failed) if lookups.failed else None,
            unavailable_lookups=frozenset(lookups.unavailable) if lookups.unavailable else None,
        )

    def facts_of(self, m: ChatMessage):
        """The facts a full answer to ``m`` states as of now (none for what is no question of fact)."""
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
                self.stage.feature(event.at)
            self.crowd.on_event(event, event.at, self.market)  # the viewers react within seconds
        self.chat.note(event_note(event, record, before, self.harness))
        return record

    def _change_harness(self, event: ev.HarnessChange) -> None:
        self.harness = self.harness.after(event)
        if self.augmented and self.augmentation.at_harness_change:
            self.harness = augment(self.harness, self.language, self._augment_rng, self.augmentation.operators)
        self._harness_version += 1

    # ----------------------------------------------------------------------- reading
    def metrics_now(self) -> Callable[[], dict]:
        """A function that returns :meth:`metrics` as they are now, whenever it is called
        (the numbers are read now, the dict is built on the call: for an ``info`` built
        on first read)."""
        return metrics_later(self.clock, self.crowd, self.ledger, self.steps, self.faults)

    def metrics(self) -> dict:
        """The business numbers of the room now (viewers, questions, purchases, GMV, latency)."""
        return self.metrics_now()()

    def summary(self, metrics: dict | None = None) -> dict:
        """The episode's summary as ``info["episode"]`` holds it (``metrics``: the room's
        :meth:`metrics`, when the caller already built them)."""
        return self.ledger.summary(self.steps, self.metrics() if metrics is None else metrics)


def _phraser(spec):
    llm = spec.viewers.llm
    if llm is None:
        return None
    from liveroom_sim.llm.client import Endpoint
    from liveroom_sim.llm.viewers import ViewerPhraser

    endpoint = Endpoint(llm.model, llm.base_url, timeout_s=llm.timeout_s, max_retries=llm.max_retries)
    return ViewerPhraser(endpoint, spec.language, llm.personas)
