"""Seeded, deterministic fault plans for the OpenAI-compatible test server.

A `FaultPlan` decides, from a request's index alone, whether the server answers that request
normally or with one of `FAULT_KINDS`. Deciding from the index (never from shared random
state) keeps a plan reproducible whatever the thread interleaving, process or machine.

Example:
    >>> plan = FaultPlan(schedule={0: "429", 3: "timeout"})
    >>> [plan.fault_for(i) for i in range(4)]
    ['429', None, None, 'timeout']
    >>> seeded = FaultPlan(rates={"500": 0.5}, seed=7)
    >>> [seeded.fault_for(i) for i in range(6)] == [seeded.fault_for(i) for i in range(6)]
    True
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from liveroom_sim.errors import UnknownNameError

FAULT_KINDS = (
    "429",
    "500",
    "503",
    "timeout",
    "disconnect",
    "malformed_json",
    "empty_choices",
    "overlong",
    "bad_tool_call",
)
"""Every fault the server can serve, in the fixed order rate draws use."""

# Status faults answer with an OpenAI-style error body: (status, error type, error code, message).
STATUS_FAULTS: dict[str, tuple[int, str, str | None, str]] = {
    "429": (429, "requests", "rate_limit_exceeded", "Rate limit reached (injected fault)."),
    "500": (500, "server_error", None, "The server had an error processing your request (injected fault)."),
    "503": (503, "server_error", "service_unavailable", "The server is overloaded (injected fault)."),
}

# Cut off in the middle of the choices list, as a proxy that dropped the connection would.
MALFORMED_BODY = b'{"id": "chatcmpl-malformed", "object": "chat.completion", "choices": [{"index": 0, "mess'

UNKNOWN_TOOL_NAME = "no_such_tool"


def _check_kind(kind: Any) -> str:
    """Return `kind` as a fault name, or raise UnknownNameError suggesting the closest kind."""
    name = str(kind)
    if name not in FAULT_KINDS:
        raise UnknownNameError("fault kind", name, FAULT_KINDS)
    return name


@dataclass(frozen=True)
class FaultPlan:
    """Which requests fail, and how.

    Args:
        schedule: Request index (0-based, in arrival order) -> fault kind. Wins over `rates`.
        rates: Fault kind -> probability per request; the probabilities must sum to at most 1.
        seed: Seed of the per-request draws; the same seed gives the same faults.
        timeout_seconds: How long a "timeout" fault waits before answering normally.
        retry_after: Seconds advertised by a "429" fault (`retry-after-ms`, and `Retry-After`
            rounded up to whole seconds).
        overlong_chars: Length of the content an "overlong" fault returns.

    Raises:
        UnknownNameError: On an unknown fault kind (with a "did you mean" suggestion).
        ValueError: On a negative index, or rates outside [0, 1] or summing past 1.
    """

    schedule: Mapping[int, str] = field(default_factory=dict)
    rates: Mapping[str, float] = field(default_factory=dict)
    seed: int = 0
    timeout_seconds: float = 30.0
    retry_after: float = 1.0
    overlong_chars: int = 100_000

    def __post_init__(self) -> None:
        schedule = {int(index): _check_kind(kind) for index, kind in dict(self.schedule).items()}
        rates = {_check_kind(kind): float(rate) for kind, rate in dict(self.rates).items()}
        if any(index < 0 for index in schedule):
            raise ValueError(f"schedule indices must be >= 0, got {sorted(schedule)}")
        if any(not 0.0 <= rate <= 1.0 for rate in rates.values()):
            raise ValueError(f"fault rates must lie in [0, 1], got {rates}")
        if sum(rates.values()) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must sum to at most 1, got {sum(rates.values()):g}")
        object.__setattr__(self, "schedule", schedule)
        object.__setattr__(self, "rates", rates)

    def fault_for(self, request_index: int) -> str | None:
        """Return the fault kind for the request with this index, or None to answer normally."""
        if request_index in self.schedule:
            return self.schedule[request_index]
        if not self.rates:
            return None
        # String seeds hash with SHA-512, so draws agree across processes and PYTHONHASHSEED.
        draw = random.Random(f"{self.seed}:{request_index}").random()
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += self.rates.get(kind, 0.0)
            if draw < edge:
                return kind
        return None

    @classmethod
    def from_strings(cls, rates: Sequence[str] = (), schedule: Sequence[str] = (), **options: Any) -> FaultPlan:
        """Build a plan from command-line pairs: rates `"500=0.1"`, schedule `"0=429"`.

        Raises:
            ValueError: On a pair without "=" or a bad number.
            UnknownNameError: On an unknown fault kind.
        """

        def pairs(items: Sequence[str], shape: str) -> list[tuple[str, str]]:
            split = [item.partition("=") for item in items]
            for item, (key, sep, value) in zip(items, split):
                if not (key and sep and value):
                    raise ValueError(f"expected {shape}, got {item!r}")
            return [(key.strip(), value.strip()) for key, _, value in split]

        return cls(
            rates={kind: float(rate) for kind, rate in pairs(rates, "KIND=RATE")},
            schedule={int(index): kind for index, kind in pairs(schedule, "INDEX=KIND")},
            **options,
        )

    def retry_after_headers(self) -> dict[str, str]:
        """Headers a "429" fault sends; openai clients prefer `retry-after-ms`."""
        return {
            "Retry-After": str(max(1, math.ceil(self.retry_after))),
            "retry-after-ms": str(max(0, round(self.retry_after * 1000))),
        }


def error_body(message: str, error_type: str = "invalid_request_error", code: str | None = None,
               param: str | None = None) -> dict:
    """Return an OpenAI-style error body: `{"error": {"message", "type", "param", "code"}}`."""
    return {"error": {"message": message, "type": error_type, "param": param, "code": code}}


def fault_replies(plan: FaultPlan, kind: str, request: Mapping[str, Any], n: int) -> list[dict] | None:
    """Return the replies a fault puts in place of the responder's, or None if it does not.

    "empty_choices" gives no choice at all; "overlong" and "bad_tool_call" give `n` broken
    choices. The responder is not called for these, so a scripted responder keeps its place.
    """
    if kind == "empty_choices":
        return []
    if kind == "overlong":
        filler = "This reply runs on and on past any sensible limit. "
        content = (filler * (plan.overlong_chars // len(filler) + 1))[: plan.overlong_chars]
        return [{"content": content, "finish_reason": "length"}] * n
    if kind == "bad_tool_call":
        return [bad_tool_call_message(request)] * n
    return None


def bad_tool_call_message(request: Mapping[str, Any]) -> dict:
    """Return an assistant message with two broken tool calls.

    The first names a real tool from the request (if any) but carries arguments that are not
    valid JSON; the second names a tool that does not exist, so a client can test each check.
    """
    tools = request.get("tools") or []
    names = [t.get("function", {}).get("name") for t in tools if isinstance(t, Mapping)]
    known = next((name for name in names if isinstance(name, str)), "lookup_product")
    return {
        "content": None,
        "tool_calls": [
            {"name": known, "arguments": '{"product_id": "A1", '},
            {"name": UNKNOWN_TOOL_NAME, "arguments": "{}"},
        ],
    }
