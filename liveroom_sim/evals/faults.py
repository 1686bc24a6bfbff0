"""Tool faults pinned on ``robust`` cases, injected by the eval's own tool executor.

The simulator's tools always answer (``sim.toolbox``); the TaoLive report's robustness
set also has tools that time out, answer malformed output or deny permission. Until the
room has a fault plan of its own, the eval injects them here: after the room ran a tool
turn, the pinned call's result (the case's ``fault.call``-th call of the turn, counted
from 0) is replaced by the fault before the policy sees it, and the lookup it would have
made is forgotten, so a reply stating that fact without a successful lookup is
unsupported, as it would be with a real fault. Every other call answers normally, so a
policy that notices the fault and calls again gets the real result.
"""

from __future__ import annotations

import json

from liveroom_sim.evals.cases import Case
from liveroom_sim.sim.history import flatten_message

FAULT_KINDS = ("timeout", "malformed", "permission_denied", "empty")


def fault_text(kind: str, tool: str, real: str) -> str:
    """What the faulty tool answers instead of ``real``."""
    if kind == "timeout":
        return json.dumps({"error": f"timeout: {tool} did not answer within 3 s"})
    if kind == "permission_denied":
        return json.dumps({"error": f"permission denied: {tool} is not available to this session"})
    if kind == "malformed":
        return real[: max(1, len(real) // 2)]  # cut off mid-object, as a dropped connection leaves it
    return ""


def fault_hook(case: Case):
    """The hook :class:`~liveroom_sim.evals.turn.AgentTurn` calls after each tool turn, or
    None for a case without a fault."""
    if case.fault is None:
        return None
    fault = case.fault

    def inject(turn, parsed, calls_before: int) -> int:
        calls = parsed.tool_calls
        index = fault.call - calls_before
        if 0 <= index < len(calls) and not calls[index].error:
            _replace_result(turn, calls[index], fault.kind, len(calls) - index)
        return calls_before + len(calls)

    return inject


def _replace_result(turn, call, kind: str, from_end: int) -> None:
    room = turn.room
    block = room._history[-1]  # the exchange the tool turn was just added to
    i = len(block.messages) - from_end
    message = block.messages[i]
    if message.get("role") != "tool" or message.get("tool_call_id") != call.id:
        return
    new = {**message, "content": fault_text(kind, call.name, message["content"])}
    block.messages[i], block.public[i], block.texts[i] = new, dict(new), flatten_message(new)
    block._text = None
    args = list((call.arguments or {}).values())
    room.lookups.made.discard((call.canonical, str(args[0]) if args else ""))
    room.lookups.calls = {c for c in room.lookups.calls if c[0] != call.canonical
                          or c[1] != repr(sorted((call.arguments or {}).items()))}
    turn.obs, turn.info = room.observation(), {**turn.info, "messages": room.messages()}
    turn.sample.tool_errors.append(f"{kind} (injected) on {call.name}")
