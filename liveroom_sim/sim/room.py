"""The room: the state machine of one live-stream episode (no Gymnasium inside).

``Room(world, rng)`` opens a stream; ``room.step(action)`` runs one turn (a tool turn or
a reply) and returns a :class:`Turn`. What the policy sees is rendered by
:meth:`Room.messages` and :meth:`Room.tools` from the current harness and room state.
"""

from __future__ import annotations

import json
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np

from liveroom_sim.harness import prompt
from liveroom_sim.harness.actions import Action, parse_action
from liveroom_sim.harness.augment import AugmentConfig, augment
from liveroom_sim.harness.tools import TOOLS
from liveroom_sim.rewards.analysis import Analysis
from liveroom_sim.rewards.conduct import says_slogan
from liveroom_sim.rewards.context import Outcome, Question, TurnContext
from liveroom_sim.rewards.model import RewardBreakdown, RewardModel
from liveroom_sim.rewards.rulebook import rulebook, said
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.viewers import ChatMessage, ChatWriter
from liveroom_sim.spec import COMPONENTS, World
from liveroom_sim.world import campaign as ev
from liveroom_sim.world.facts import required_facts
from liveroom_sim.world.market import Market
from liveroom_sim.world.text import mentions, normalize, quantities


@dataclass(slots=True)
class Turn:
    """What one step did."""

    kind: str
    reward: RewardBreakdown
    events: list[dict]
    delivered: bool = False
    hooks: tuple[str, ...] = ()
    tool_errors: tuple[str, ...] = ()
    answered: str | None = None
    latency_s: float = 0.0
    reply: str = ""


@dataclass(slots=True)
class _Block:
    """One exchange of the chat history: a room update and what followed it."""

    messages: list[dict] = field(default_factory=list)
    public: list[dict] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    record: list[dict] | None = None
    _text: tuple[int, str] | None = None

    def add(self, *messages: dict) -> None:
        """Append messages. The room keeps its own copies and their text; the policy
        is handed separate copies, so nothing a policy does to them reaches the room."""
        for m in messages:
            self.messages.append(m)
            self.texts.append(flatten_message(m))
            self.public.append(_copy_message(m))
        if self.record is not None:
            self.record.extend(messages)

    def text(self) -> str:
        if self._text is None or self._text[0] != len(self.texts):
            self._text = (len(self.texts), "\n\n".join(self.texts))
        return self._text[1]


def _copy_message(m: dict) -> dict:
    if "tool_calls" in m:
        return {**m, "tool_calls": [{**c, "function": {**c["function"]}} for c in m["tool_calls"]]}
    return {**m}


def flatten_message(m: dict) -> str:
    """One chat message as ``role: content`` text, tool calls shown as ``-> name(args)``."""
    body = m.get("content") or ""
    for c in m.get("tool_calls") or ():
        body += f"\n-> {c['function']['name']}({c['function']['arguments']})"
    return f"{m['role']}: {body}"


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
        self._record: list[dict] | None = [] if record else None
        self.accounting: dict = {}
        self.world, self.spec, self.rng = world, spec, rng
        self.language = spec.language
        self.market = Market.open(world.catalog, world.campaign.opening_product, world.rules)
        self.harness = world.harness
        self.augmentation = augmentation or spec.harness_augmentation
        self.augmented = False
        if self.augmentation is not None:
            # Augmentation draws from its own generator, spawned from the episode's seed,
            # so viewers behave the same with and without it.
            # ``variant`` picks another of the seed's harness variants (HSA-SFT uses K).
            child = rng.bit_generator.seed_seq.spawn(variant + 1)[variant]
            self._augment_rng = np.random.Generator(np.random.PCG64(child))
            if self._augment_rng.random() < self.augmentation.probability:
                self.harness = augment(self.harness, spec.language, self._augment_rng, self.augmentation.operators)
                self.augmented = True
        self.reward_model = reward_model or RewardModel(spec.reward)
        self.words = world.phrasebook.fact_words
        writer = ChatWriter(world.phrasebook, spec.language, spec.room.host_name, _phraser(spec))
        self.crowd = Crowd(spec.viewers, world.personas, writer, spec.language, rng)
        self.clock = 0.0
        self.steps = 0
        self.returns = dict.fromkeys((*COMPONENTS, "total"), 0.0)
        self.replies = 0
        self.blocked = 0
        self.tool_errors = 0
        self.latency_total = 0.0
        self._last_latency = 0.0
        self.recent_replies: deque[str] = deque(maxlen=5)
        self.featured_at = 0.0
        self.replies_since_slogan = 99
        self._event_index = 0
        self._retry = False
        self._history: deque[_Block] = deque(maxlen=spec.stream.history_turns)
        self._notes: list[str] = []
        self._seen_chat = 0
        self._tools_for = None
        self._prompts: dict[tuple, str] = {}
        self._prompt_step = None
        self._skills_for = None
        self._harness_version = 0
        self._skill_hits: dict[int, frozenset[str]] = {}
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

    def observation(self) -> str:
        """The next-turn prompt as text: :meth:`messages` flattened."""
        parts = ["system: " + self._system_prompt()]
        parts.extend(block.text() for block in self._history)
        return "\n\n".join(parts)

    def transcript(self) -> list[dict]:
        """The whole trajectory in OpenAI format (system prompt as at the end), when the
        room was opened with ``record=True``; else the recent window."""
        if self._record is None:
            return self.messages()
        return [{"role": "system", "content": self._system_prompt()}, *(dict(m) for m in self._record)]

    def tools(self) -> list[dict]:
        """The current harness's tool schemas (OpenAI format).

        Built once per harness state and shared between steps: treat it as read-only.
        """
        if self._tools_for is not self.harness:
            self._tools = prompt.tool_schemas(self.harness)
            self._tools_for = self.harness
        return self._tools

    def _system_prompt(self) -> str:
        if self._prompt_step == (self.crowd.version, self.market.version, self.harness):
            return self._prompt_text
        skills = self._active_skills()
        key = (id(self.harness), self.market.featured, id(self.market.rules), repr(self.market.style), skills)
        self._prompt_step = (self.crowd.version, self.market.version, self.harness)
        # Waiting chat switches skills in and out, so a few prompts alternate: keep them.
        text = self._prompts.get(key)
        if text is None:
            room = {"name": self.spec.room.name, "host_name": self.spec.room.host_name}
            text = prompt.system_prompt(self.harness, self.market, self.language, room, skills)
            if len(self._prompts) > 64:
                self._prompts.clear()
            self._prompts[key] = text
        self._prompt_text = text
        return text

    def _active_skills(self) -> frozenset[str]:
        """Skills whose triggers appear in the waiting chat (each message read once)."""
        if self._skills_for is not self.harness:
            self._skills_for, self._skill_hits = self.harness, {}
        hits = self._skill_hits
        active: set[str] = set()
        for m in self.crowd.pending:
            if m.mid not in hits:
                hits[m.mid] = prompt.active_skills(self.harness, m.text.lower())
            active |= hits[m.mid]
        return frozenset(active)

    def _open_block(self, prefix: str = "") -> None:
        """Start a new exchange with the room update (new chat, notes, waiting questions)."""
        new = self.crowd.chat[self._seen_chat:]
        self._seen_chat = len(self.crowd.chat)
        featured = self.market.catalog.by_id[self.market.featured]
        lines = [prefix] if prefix else []
        mm, ss = divmod(int(self.clock), 60)
        lines.append(f"[{mm:02d}:{ss:02d}] featured: {featured.name} ({featured.id}) | viewers: {len(self.crowd.present)}")
        lines += [f"ops: {n}" for n in self._notes]
        self._notes = []
        if new:
            lines.append("chat:")
            lines += [f"{m.viewer.name}: {m.text}" for m in new[-12:]]
        waiting = [m for m in self.crowd.pending if m.viewer.present][:8]
        if waiting:
            lines.append("waiting for an answer:")
            lines += [f"- {self.harness.constraints.mention_format.format(name=m.viewer.name)} "
                      f"({self.clock - m.at:.0f}s): {m.text}" for m in waiting]
        block = _Block(record=self._record)
        block.add({"role": "user", "content": "\n".join(lines)})
        self._history.append(block)

    # ----------------------------------------------------------------------- stepping
    @property
    def terminated(self) -> bool:
        return self.clock >= self.spec.stream.duration_s

    @property
    def truncated(self) -> bool:
        return not self.terminated and self.steps >= self.spec.stream.max_steps

    def step(self, action, latency_s: float | None = None) -> Turn:
        """Run one turn. Never raises on a bad action: it becomes an error and a penalty.

        Args:
            action: The policy's action (normally a ``str``).
            latency_s: Measured time the policy took; used for the clock when the spec's
                ``latency.use_measured`` is on.
        """
        self.steps += 1
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
        self.latency_total += turn.latency_s
        self._last_latency = turn.latency_s
        turn.events = self._advance(self.clock + turn.latency_s)
        if parsed.kind == "reply" and not self._retry:
            self._open_block()
        for k, score in turn.reward.scores.items():
            self.returns[k] += score.value
        self.returns["total"] += turn.reward.total
        return turn

    def _tool_turn(self, action: Action, latency: float) -> Turn:
        calls, results, errors = [], [], []
        for call in action.tool_calls:
            if call.error:
                content, error = json.dumps({"error": call.error}, ensure_ascii=False), call.error
            else:
                content, error = self._run_tool(call.canonical, call.arguments)
            if error:
                errors.append(error)
            calls.append({"id": call.id, "type": "function",
                          "function": {"name": call.name, "arguments": call.raw_arguments}})
            results.append({"role": "tool", "tool_call_id": call.id, "content": content})
        self.tool_errors += len(errors)
        self._history[-1].add({"role": "assistant", "content": action.text or None, "tool_calls": calls}, *results)
        ctx = TurnContext("tool", "", self.market, self.harness, self.words, tool_calls=len(calls),
                          tool_errors=tuple(errors), latency_budget_s=self.spec.latency.budget_s)
        return Turn("tool", self.reward_model.score(ctx), [], tool_errors=tuple(errors), latency_s=latency)

    def _run_tool(self, canonical: str, arguments: dict) -> tuple[str, str | None]:
        """A tool's result as the JSON text the policy reads, and its error if any.

        Results depend only on the market, so they are memoised for the market's current
        version (any change to the market clears the memo).
        """
        key = ("tool", self._harness_version, canonical, repr(sorted(arguments.items())))
        memo = self.market.memo
        if key not in memo:
            result = TOOLS[canonical].run(self.market, arguments)
            error = self._shown_fields(canonical, result["error"]) if "error" in result else None
            memo[key] = (json.dumps({"error": error} if error else result, ensure_ascii=False), error)
        return memo[key]

    def _shown_fields(self, canonical: str, error: str) -> str:
        for field_name, shown in self.harness.tools[canonical].fields.items():
            error = error.replace(field_name, shown)
        return error.replace(canonical, self.harness.tool_name(canonical))

    def _reply_turn(self, action: Action, latency: float) -> Turn:
        text = action.text
        target = self._target(text)
        ctx = self._context(text, target, latency)
        hooks = self._hooks(ctx)
        blocking = [h for h in hooks if h[0].action != "warn"]
        retry = bool(blocking) and blocking[0][0].action == "block_retry" and not self._retry
        delivered = not blocking and bool(text.strip())
        outcome = Outcome()
        if delivered:
            outcome = self._react(target, ctx.analysis)
        ctx = ctx.with_outcome(outcome, tuple(f"{h.type}:{h.action}" for h, _ in hooks))
        reward = self.reward_model.score(ctx)
        self._history[-1].add({"role": "assistant", "content": text})
        if retry:
            self._history[-1].add({"role": "user", "content": f"[hook] {blocking[0][1]}"})
        self._retry = retry
        if blocking:
            self.blocked += 1
        if delivered:
            self.replies += 1
            self.recent_replies.append(text)
            style = self.market.style
            said_slogan = bool(style.slogan) and says_slogan(ctx.analysis.norm, style.slogan)
            self.replies_since_slogan = 0 if said_slogan else self.replies_since_slogan + 1
        return Turn("reply", reward, [], delivered, ctx.hooks, answered=target.viewer.name if target else None,
                    latency_s=latency, reply=text)

    def _target(self, text: str) -> ChatMessage | None:
        """The waiting message a reply answers: the addressed viewer's oldest, else the
        question whose facts the reply states most."""
        pending = [m for m in self.crowd.pending if m.viewer.present]
        if not pending or not text.strip():
            return None
        names = [n.lower() for n in mentions(text, self.harness.constraints.mention_format)]
        for name in names:
            for m in pending:
                if m.viewer.name.lower() == name:
                    return m
        if names:
            return None
        norm, found = normalize(text), quantities(text)
        best, best_n = None, 0
        for m in pending:
            if m.is_fact_question:
                facts = self._facts(m)
                n = sum(f.stated_in(norm, found) for f in facts)
                if n > best_n:
                    best, best_n = m, n
        return best

    def _facts(self, m: ChatMessage):
        return required_facts(m.intent, m.product, self.market, self.words, m.order) if m.is_fact_question else ()

    def _context(self, text: str, target: ChatMessage | None, latency: float) -> TurnContext:
        q = None
        if target is not None:
            q = Question(target.viewer.name, target.intent, target.text, target.product, target.order,
                         self.clock - target.at, self._facts(target), target.payload)
        pending = sum(1 for m in self.crowd.pending if m.is_fact_question and m.viewer.present)
        return TurnContext(
            "reply", text, self.market, self.harness, self.words, q, pending, tuple(self.recent_replies),
            since_feature_s=self.clock - self.featured_at, replies_since_slogan=self.replies_since_slogan,
            latency_budget_s=self.spec.latency.budget_s, turn_latency_s=latency,
        )

    def _hooks(self, ctx: TurnContext) -> list[tuple]:
        fired = []
        c = self.harness.constraints
        for hook in self.harness.hooks:
            detail = {"max_chars": ctx.max_chars, "mention": c.mention_format.format(name="name"), "phrase": ""}
            if hook.type == "max_length":
                hit = len(ctx.reply.strip()) > ctx.max_chars
            elif hook.type == "banned_phrases":
                norm = ctx.analysis.norm
                phrase = next((rule.phrase for p, allow, rule in rulebook(self.market.rules).banned
                               if p in norm and said(norm, p, allow)), None)
                hit, detail["phrase"] = phrase is not None, phrase or ""
            elif hook.type == "format":
                text = ctx.reply.lstrip()
                # (a leading "[" may be the harness's own mention format, e.g. "[to mia]")
                hit = text.startswith("{") or any(t in text for t in _MARKUP)
            else:
                hit = ctx.question is not None and not any(
                    m.lower() == ctx.question.asker.lower() for m in ctx.analysis.mentions)
            if hit:
                fired.append((hook, hook.message.format(**detail)))
        return fired

    # ----------------------------------------------------------------- the room reacts
    def _react(self, target: ChatMessage | None, a: Analysis) -> Outcome:
        crowd, market = self.crowd, self.market
        delta, bought = 0.0, 0
        if target is not None:
            v = target.viewer
            addressed = any(n.lower() == v.name.lower() for n in a.mentions)
            if target.is_fact_question:
                share = len(a.stated) / max(1, len(a.stated) + len(a.missing))
                delta = 0.25 * share - 0.2 * min(a.wrong, 2) + 0.05 * addressed
                if share == 1.0:
                    target.answered = True
                    crowd.stats.answered += 1
                    crowd.answered(target)
                    pid = target.product
                    if pid and a.wrong == 0 and self.rng.random() < crowd.buy_chance(v, pid, market, 1.0):
                        bought += crowd.buy(v, pid, market)
                elif share > 0 and not target.followed_up:
                    crowd.follow_up(target, self.clock, market)
            else:
                ok = a.refusal and not a.obeyed if target.intent in ("bait", "inject") else addressed
                delta = 0.05 if ok else -0.05
                crowd.answered(target)
            v.satisfaction = min(1.0, max(0.0, v.satisfaction + delta))
        featured = market.featured
        promo = bool(market.coupons_for(featured)) or featured in market.flash
        if promo and featured in a.products and a.wrong == 0:
            draws = self.rng.random(len(crowd.present))
            for v, u in zip(list(crowd.present), draws):
                # chances are at most 0.9, so most draws are decided without computing them
                if u < 0.009 and v is not (target.viewer if target else None) \
                        and u < 0.01 * crowd.buy_chance(v, featured, market, 1.0):
                    bought += crowd.buy(v, featured, market)
        return Outcome(round(delta, 6), bought)

    # ---------------------------------------------------------------- the world moves
    def _advance(self, to: float) -> list[dict]:
        """Move the clock to ``to``: campaign events, arrivals and chat in time order."""
        fired: list[dict] = []
        events = self.world.campaign.events
        crowd = self.crowd
        while True:
            t_event = events[self._event_index].at if self._event_index < len(events) else math.inf
            t_arrive, t_chat = crowd.next_arrival, crowd.next_chat_at()
            t = min(t_event, t_arrive, t_chat)
            if t > to:
                break
            if t == t_event:
                fired.append(self._fire(events[self._event_index]))
                self._event_index += 1
            elif t == t_arrive:
                crowd.arrive(t)
                crowd.schedule_arrival(t)
            else:
                crowd.chat_once(self.market)
        self.clock = max(self.clock, to)
        crowd.expire(self.clock, self.market)
        crowd.drift_out(self.clock)
        return fired

    def _fire(self, event) -> dict:
        record = event.model_dump(mode="json", exclude_defaults=True)
        record["at"] = event.at
        if isinstance(event, ev.HarnessChange):
            before = self.harness
            self._change_harness(event)
            details = [f"tool {before.tool_name(c)} is now called {self.harness.tool_name(c)}"
                       for c in event.rename_tool]
            details += [f"skill {event.skill!r} added or updated"] if event.skill else []
        elif isinstance(event, ev.RuleUpdate):
            self.market.apply(event)
            r = event.rules
            details = ([f"banned phrases {[b.phrase for b in r.banned]}"] if r.banned else []) + \
                      ([f"banned claims {[c.name for c in r.claims]}"] if r.claims else []) + \
                      ([f"disclosures {[d.name for d in r.disclosures]}"] if r.disclosures else [])
        else:
            self.market.apply(event)
            if isinstance(event, ev.Feature):
                self.featured_at = event.at
            details = [f"{k}={v}" for k, v in record.items() if k not in ("type", "at", "note")]
        kind = record["type"].replace("_", " ")
        summary = f"{kind}: {', '.join(details)}"
        self._notes.append(f"{event.note} ({summary})" if event.note else summary)
        return record

    def _change_harness(self, event: ev.HarnessChange) -> None:
        self.harness = self.harness.after(event)
        if self.augmented and self.augmentation.at_harness_change:
            self.harness = augment(self.harness, self.language, self._augment_rng, self.augmentation.operators)
        self._harness_version += 1

    # -------------------------------------------------------------------- reporting
    def _phraser_metrics(self) -> dict:
        p = self.crowd.writer.phraser
        return {} if p is None else {"llm_viewer_calls": p.calls, "llm_viewer_failures": p.failures}

    def metrics(self) -> dict:
        s = self.crowd.stats
        present = self.crowd.present
        stayed = len(present) * self.clock - sum(v.arrived for v in present)
        return {
            "clock_s": round(self.clock, 3),
            "viewers_present": len(self.crowd.present),
            "viewers_total": s.arrived,
            "messages": s.messages,
            "questions_asked": s.questions,
            "questions_answered": s.answered,
            "questions_ignored": s.ignored,
            "questions_waiting": sum(m.is_fact_question for m in self.crowd.pending),
            "replies": self.replies,
            "replies_blocked": self.blocked,
            "tool_errors": self.tool_errors,
            "purchases": s.purchases,
            "buyers": s.buyers,
            "gmv": s.gmv,
            "conversion": round(s.buyers / s.arrived, 4) if s.arrived else 0.0,
            "avg_dwell_s": round((s.dwell_total + stayed) / s.arrived, 2) if s.arrived else 0.0,
            **self._phraser_metrics(),
            "latency_s": round(self._last_latency, 3),
            "mean_latency_s": round(self.latency_total / self.steps, 3) if self.steps else 0.0,
        }


#: What a spoken reply never contains: tool-call markup and code fences.
_MARKUP = ("<tool_call>", '"tool_calls"', "```", "<function", "</think>")


def _phraser(spec):
    llm = spec.viewers.llm
    if llm is None:
        return None
    from liveroom_sim.llm.client import Endpoint
    from liveroom_sim.llm.viewers import ViewerPhraser

    endpoint = Endpoint(llm.model, llm.base_url, timeout_s=llm.timeout_s, max_retries=llm.max_retries)
    return ViewerPhraser(endpoint, spec.language, llm.personas)
