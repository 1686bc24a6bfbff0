"""Running a tool turn's calls on the market as of now, in the harness's terms.

Results are the JSON text the policy reads; errors name tools and fields as the
current harness calls them.
"""

from __future__ import annotations

import json

from liveroom_sim.harness.actions import Action
from liveroom_sim.harness.core import Harness
from liveroom_sim.harness.tools import TOOLS
from liveroom_sim.world.market import Market


def run_calls(action: Action, harness: Harness, market: Market, harness_version: int):
    """``(assistant tool_calls, tool messages, errors)`` for a tool turn's calls."""
    calls, results, errors = [], [], []
    for call in action.tool_calls:
        if call.error:
            content, error = json.dumps({"error": call.error}, ensure_ascii=False), call.error
        else:
            content, error = run_tool(call.canonical, call.arguments, harness, market, harness_version)
        if error:
            errors.append(error)
        calls.append({"id": call.id, "type": "function",
                      "function": {"name": call.name, "arguments": call.raw_arguments}})
        results.append({"role": "tool", "tool_call_id": call.id, "content": content})
    return calls, results, errors


def run_tool(canonical: str, arguments: dict, harness: Harness, market: Market,
             harness_version: int) -> tuple[str, str | None]:
    """A tool's result as the JSON text the policy reads, and its error if any.

    Results depend only on the market and the harness, so they are memoised for the
    market's current version (any change to the market clears the memo).
    """
    key = ("tool", harness_version, canonical, repr(sorted(arguments.items())))
    memo = market.memo
    if key not in memo:
        result = TOOLS[canonical].run(market, arguments, harness)
        error = _shown_fields(harness, canonical, result["error"]) if "error" in result else None
        memo[key] = (json.dumps({"error": error} if error else result, ensure_ascii=False), error)
    return memo[key]


def _shown_fields(harness: Harness, canonical: str, error: str) -> str:
    for field_name, shown in harness.tools[canonical].fields.items():
        error = error.replace(field_name, shown)
    return error.replace(canonical, harness.tool_name(canonical))


class Lookups:
    """What the policy looked up in this exchange, and the calls it already made (a call
    repeated with the same arguments under the same harness is redundant)."""

    def __init__(self):
        self.made: set[tuple[str, str]] = set()
        self.calls: set[tuple] = set()

    def note(self, action: Action, results: list[dict], harness_version: int) -> int:
        """Record a tool turn's successful calls; returns how many were redundant."""
        redundant = 0
        for call, result in zip(action.tool_calls, results):
            if call.error or result["content"].startswith('{"error"'):
                continue
            key = (call.canonical, repr(sorted(call.arguments.items())), harness_version)
            redundant += key in self.calls
            self.calls.add(key)
            args = list(call.arguments.values())
            self.made.add((call.canonical, str(args[0]) if args else ""))
        return redundant
