"""The agent's complete turn on a case: tool turns, then the reply, within the turn limit.

:class:`AgentTurn` is fed the policy's actions one by one (by :func:`run_turn`, or by the
asyncio runner awaiting an LLM); it steps the case's room with each, grades the reply
when it comes, and records what went wrong as data: an endpoint failure or timeout, a
malformed tool call (unreadable JSON, a call without a name), the turn limit reached
without a reply. A reply a hook sends back (``block_retry``) gets the harness's retry.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from liveroom_sim.evals.cases import Case
from liveroom_sim.evals.grade import grade, loose_variants
from liveroom_sim.evals.replay import turn_limit
from liveroom_sim.harness.actions import parse_action
from liveroom_sim.rewards.context import Outcome
from liveroom_sim.sim.hooks import fired_hooks
from liveroom_sim.sim.reactions import reply_target

#: Call errors that mean the endpoint sent something that is not a tool call at all
#: (the case fails); a wrong tool or field name is the harness's business (the policy is
#: told and may try again within the turn limit).
_MALFORMED = ("not valid JSON", "must be a JSON object", "without a function name", "nested deeper")


@dataclass
class Sample:
    """One sample of a case: what the policy did and how it was graded."""

    actions: list[str] = field(default_factory=list)
    reply: str = ""
    tool_calls: list[str] = field(default_factory=list)
    tool_errors: list[str] = field(default_factory=list)  # the policy's call errors and the tools' faults
    hooks: list[str] = field(default_factory=list)
    latency_s: float = 0.0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    error_kind: str | None = None  # endpoint, timeout, malformed_response, malformed_tool_call, turn_limit, crash
    verdict: dict = field(default_factory=dict)
    judge: dict | None = None

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("judge",) and v not in (None, [], {})}
        out["latency_s"] = round(self.latency_s, 4)
        if self.judge is not None:
            out["judge"] = self.judge
        return out


class AgentTurn:
    """Feeds a policy's actions into a case's room until the turn is over."""

    def __init__(self, case: Case, env, obs: str, info: dict):
        self.case, self.env, self.obs, self.info = case, env, obs, info
        self.room = env.unwrapped.room
        self.limit = turn_limit(self.room.harness)
        self.tool_turns = 0
        self.retried = False
        self.sample = Sample()
        self.ctx = None
        self.breakdown = None
        self.loose_contexts: list = []
        self.done = False

    def fail(self, kind: str, reason: str) -> None:
        self.sample.error_kind, self.sample.error = kind, reason[:500]
        self.done = True

    def feed(self, action: str, seconds: float) -> None:
        """Play one action the policy took ``seconds`` to produce."""
        s = self.sample
        s.actions.append(action if isinstance(action, str) else str(action))
        s.latency_s += seconds
        room = self.room
        parsed = parse_action(action, room.harness, room.steps + 1)
        if parsed.kind == "tool":
            bad = [c.error for c in parsed.tool_calls if c.error and any(m in c.error for m in _MALFORMED)]
            if bad:
                return self.fail("malformed_tool_call", f"malformed tool call: {bad[0]}")
            if self.tool_turns >= self.limit:
                return self.fail("turn_limit", f"no reply within the turn limit of {self.limit} tool turns")
            self.tool_turns += 1
            s.tool_calls += [c.name for c in parsed.tool_calls]
            self.obs, _, _, _, self.info = self.env.step(action)
            s.tool_errors += self.info["turn"]["tool_errors"]
            s.tool_errors += [f"{f['kind']} fault on {f['tool']}" for f in self.info["turn"].get("tool_faults", ())]
            return None
        self._grade_context(parsed.text)
        self.obs, _, _, _, self.info = self.env.step(action)
        turn = self.info["turn"]
        s.hooks += turn["hooks"]
        if not turn["delivered"] and any(h.endswith(":block_retry") for h in turn["hooks"]) and not self.retried:
            self.retried = True  # the harness sends the reply back once, with the hook's message
            return None
        s.reply = parsed.text
        s.verdict = grade(self.case, self.ctx, self.breakdown)
        s.verdict["loose"] = s.verdict["pass"] or any(grade(self.case, ctx)["pass"] for ctx in self.loose_contexts)
        self.done = True
        return None

    def _grade_context(self, text: str) -> None:
        """The reward's context of the reply, addressed to the case's question (the turn is
        graded on the question the case is about, whichever waiting message the reply
        happens to answer, and as the policy was shown it: a follow-up merged into it
        during the tool turn is not part of it), read before the room moves on; and the
        contexts of the reply's loose variants (:func:`~liveroom_sim.evals.grade.loose_variants`)."""
        room = self.room
        q = self.case.question
        target = next((m for m in room.crowd.pending if m.mid == q.mid), None)
        if target is None:
            target = reply_target(text, room.crowd, room.harness.constraints.mention_format, room.facts_of,
                                  room.market.catalog)
        elif target.text != q.text:
            target = replace(target, text=q.text, asks=target.asks[: max(1, len(q.asks))])
        self.ctx, self.breakdown = self._context(text, target, score=True)
        self.loose_contexts = [self._context(v, target)[0] for v in loose_variants(text)]

    def _context(self, text: str, target, score: bool = False):
        room = self.room
        lat = room.spec.latency
        ctx = room.reply_context(text, target, lat.reply_base_s + lat.reply_per_char_s * min(len(text), 2000))
        hooks = fired_hooks(ctx)
        ctx = ctx.with_outcome(Outcome(), tuple(f"{h.type}:{h.action}" for h, _ in hooks))
        return ctx, (room.reward_model.score(ctx) if score else None)

    def finish(self, accounting: dict | None) -> Sample:
        """The sample, with the policy's LLM usage for this turn; a turn left unfinished
        is graded as no reply."""
        s = self.sample
        if accounting:
            s.calls = accounting.get("calls", 0)
            s.prompt_tokens = accounting.get("prompt_tokens", 0)
            s.completion_tokens = accounting.get("completion_tokens", 0)
        if not s.verdict:
            s.verdict = grade(self.case, None)
            if s.error:
                s.verdict["reasons"] = [s.error]
        return s


def run_turn(case: Case, env, obs: str, info: dict, policy) -> tuple[Sample, AgentTurn]:
    """Play the policy's complete turn on a case synchronously (built-in policies); the
    case's tool fault, if any, is pinned first."""
    from liveroom_sim.evals.failures import classify
    from liveroom_sim.evals.faults import set_faults

    set_faults(case, env)
    turn = AgentTurn(case, env, obs, info)
    for _ in range(2 * turn.limit + 4):  # a bound even for a policy that loops on retries
        if turn.done:
            break
        start = time.perf_counter()
        try:
            action = policy(turn.obs, turn.info)
        except Exception as exc:  # noqa: BLE001 - a failing policy fails the case, the run goes on
            turn.sample.latency_s += time.perf_counter() - start
            turn.fail(*classify(exc))
            break
        turn.feed(action, time.perf_counter() - start)
    accounting = getattr(policy, "accounting", None)
    return turn.finish(accounting.as_dict() if accounting is not None else None), turn
