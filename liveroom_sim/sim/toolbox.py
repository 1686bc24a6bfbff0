"""Running a tool turn's calls on the market as of now, in the harness's terms.

Results are the JSON text the policy reads; errors name tools and fields as the
current harness calls them. When the spec's tool faults are on (or a fault is pinned),
a valid call may time out, return malformed or truncated output, or be denied, as a
real tool service does (see :mod:`liveroom_sim.harness.faults`): the policy reads the
fault, the turn records it, and a faulted call counts as no lookup.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from liveroom_sim.harness.actions import Action, arguments_key
from liveroom_sim.harness.core import Harness
from liveroom_sim.harness.faults import ToolFaultPlan, faulted_content
from liveroom_sim.harness.tools import CATALOG_TOOLS, LASTING_TOOLS, TOOLS
from liveroom_sim.world.market import Market


class ToolTurn(NamedTuple):
    """What a tool turn's calls did.

    Attributes:
        calls: The assistant message's ``tool_calls`` (OpenAI format).
        results: One ``tool`` message per call.
        errors: The policy's own errors (malformed calls, unknown tools, bad arguments).
        faults: The service's faults, one ``{"call_id", "tool", "kind"}`` per faulted
            call (``tool`` canonical); not the policy's errors.
        delay_s: Latency the faults added (a timeout's wait; calls run concurrently, so
            one timeout or several cost the same).
    """

    calls: list[dict]
    results: list[dict]
    errors: list[str]
    faults: list[dict]
    delay_s: float


def run_tool_turn(action: Action, harness: Harness, market: Market, harness_version: int,
                  faults: ToolFaultPlan | None = None, refused: str | None = None) -> ToolTurn:
    """Run a tool turn's calls, with the faults ``faults`` decides (none when ``None``).

    ``refused``: the harness does not run this turn's calls (its tool-turn limit is
    reached); each call gets that error instead of a result.
    """
    calls, results, errors, hit = [], [], [], []
    inject = faults is not None and faults.active
    for call in action.tool_calls:
        if call.error or refused:
            error = call.error or refused
            content = _to_json({"error": error})
        else:
            content, error = run_tool(call.canonical, call.arguments, harness, market, harness_version, call.key)
            # Only a call the service accepted can fail in the service.
            kind = faults.draw(call.canonical, _subject(call.arguments)) if inject and not error else None
            if kind is not None:
                content = faulted_content(kind, content, call.name, faults.config.timeout_s)
                hit.append({"call_id": call.id, "tool": call.canonical, "kind": kind})
        if error:
            errors.append(error)
        calls.append({"id": call.id, "type": "function",
                      "function": {"name": call.name, "arguments": call.raw_arguments}})
        results.append({"role": "tool", "tool_call_id": call.id, "content": content})
    delay = faults.config.timeout_s if hit and any(f["kind"] == "timeout" for f in hit) else 0.0
    return ToolTurn(calls, results, errors, hit, delay)


def _subject(arguments: dict) -> str:
    args = list(arguments.values())
    return str(args[0]) if args else ""


def run_tool(canonical: str, arguments: dict, harness: Harness, market: Market,
             harness_version: int, args_key: str = "") -> tuple[str, str | None]:
    """A tool's result as the JSON text the policy reads, and its error if any.

    Results depend only on the market and the harness, so they are memoised for the
    market's current version (any change to the market clears the memo), or, for the
    tools that read only the catalog or the harness (:data:`LASTING_TOOLS`), for the
    whole episode. Both are keyed on the harness version (errors name fields as it does).
    ``args_key``: :func:`~liveroom_sim.harness.actions.arguments_key` of ``arguments``
    when the caller has it (a parsed call carries it).
    """
    args_key = args_key or arguments_key(arguments)
    key = ("tool", harness_version, canonical, args_key)
    memo = market.lasting if canonical in LASTING_TOOLS else market.memo
    hit = memo.get(key)
    if hit is None:
        if canonical in CATALOG_TOOLS:
            raw_error, text = _catalog_result(canonical, arguments, args_key, market)
            error = None if raw_error is _NO_ERROR else _shown_fields(harness, canonical, raw_error)
            hit = (_to_json({"error": error}) if error else text, error)
        else:
            result = TOOLS[canonical].run(market, arguments, harness)
            error = _shown_fields(harness, canonical, result["error"]) if "error" in result else None
            hit = (_to_json({"error": error} if error else result), error)
        memo[key] = hit
    return hit


_NO_ERROR = object()  # (a result without an "error" entry)


def _catalog_result(canonical: str, arguments: dict, args_key: str, market: Market) -> tuple:
    """``(the result's raw error or _NO_ERROR, its JSON text)`` for a tool of
    :data:`CATALOG_TOOLS`, run once per spec: its result is the same in every episode
    (it reads none of the drawn values) and under every harness (only an error's field
    names follow the harness, renamed by the caller). Kept on the base catalog, by the
    tool and its arguments as the episode memo keys them."""
    kept = market.catalog.base.tool_results
    key = (canonical, args_key)
    hit = kept.get(key)
    if hit is None:
        result = TOOLS[canonical].run(market, arguments)
        hit = kept.keep(key, (result.get("error") if "error" in result else _NO_ERROR, _to_json(result)))
    return hit


#: ``json.dumps(value, ensure_ascii=False)`` with one encoder made once (``dumps`` makes
#: a new encoder on every call that passes an option).
_to_json = json.JSONEncoder(ensure_ascii=False).encode


def _shown_fields(harness: Harness, canonical: str, error: str) -> str:
    for field_name, shown in harness.tools[canonical].fields.items():
        error = error.replace(field_name, shown)
    return error.replace(canonical, harness.tool_name(canonical))


class Lookups:
    """What the policy looked up in this exchange, and the calls it already made (a call
    repeated with the same arguments under the same harness is redundant).

    A faulted call is no lookup; retrying one that timed out or came back malformed or
    truncated is not redundant, retrying a denied one is (a denial says a retry will not
    help, and it does not). ``failed`` holds the ``(tool, subject)`` pairs whose calls
    faulted this exchange and were not looked up since: a fact about one of them, stated
    anyway, was not looked up (the reward reads it as such). ``unavailable`` holds those
    of them the host cannot get this exchange: denied, or faulted again on a retry.
    """

    def __init__(self):
        self.made: set[tuple[str, str]] = set()
        self.calls: set[tuple] = set()
        self.failed: set[tuple[str, str]] = set()
        self.unavailable: set[tuple[str, str]] = set()
        self._denied: set[tuple] = set()
        self._faulted: set[tuple] = set()

    def note(self, action: Action, results: list[dict], harness_version: int,
             faults: list[dict] = ()) -> int:
        """Record a tool turn's successful calls; returns how many were redundant."""
        redundant = 0
        faulted = {f["call_id"]: f["kind"] for f in faults} if faults else {}
        for call, result in zip(action.tool_calls, results):
            if call.error:
                continue
            key = (call.canonical, call.key or arguments_key(call.arguments), harness_version)
            pair = (call.canonical, _subject(call.arguments))
            kind = faulted.get(call.id)
            if kind is not None:
                redundant += key in self._denied
                if kind == "denied":
                    self._denied.add(key)
                if pair not in self.made:
                    self.failed.add(pair)
                    if kind == "denied" or key in self._faulted:
                        self.unavailable.add(pair)
                self._faulted.add(key)
                continue
            if result["content"].startswith('{"error"'):
                continue
            redundant += key in self.calls
            self.calls.add(key)
            self.made.add(pair)
            self.failed.discard(pair)
            self.unavailable.discard(pair)
        return redundant
