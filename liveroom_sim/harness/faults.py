"""Tool faults: the failures a real tool service has, injected into tool calls.

A spec's ``tools:`` block sets how often a call times out, returns malformed or
truncated output, or is denied (permission), and what a timeout costs in latency.
:class:`ToolFaultPlan` decides, call by call, which fault (if any) hits; it draws from a
generator of its own, spawned from the episode's seed sequence per harness variant, so
the same seed and actions give the same faults and the viewers' stream is untouched.
Callers (eval suites, tests) can also *pin* a fault on a given call, which needs no
randomness at all. :func:`faulted_content` renders what the policy reads of a faulted
call. See ``docs/tool-faults.md``.

Example:
    >>> import numpy as np
    >>> plan = ToolFaultPlan(ToolsConfig(pinned=({"kind": "timeout", "call": 2},)), np.random.default_rng(0))
    >>> [plan.draw("get_price_stock", "p1") for _ in range(3)]
    [None, 'timeout', None]
"""

from __future__ import annotations

import bisect
import itertools
import json
from typing import Literal

import numpy as np
import pydantic

from liveroom_sim.errors import did_you_mean
from liveroom_sim.world.datafile import Frozen

#: Fault kinds, in the order their rates are stacked when one is drawn.
FAULT_KINDS = ("timeout", "malformed", "truncated", "denied")
#: Faults that a retry may get past (a denial stays for the rest of the exchange).
TRANSIENT = ("timeout", "malformed", "truncated")

FaultKind = Literal["timeout", "malformed", "truncated", "denied"]
_Rate = pydantic.confloat(ge=0.0, le=1.0)


class FaultRates(Frozen):
    """Per-call probability of each fault; together at most 1 (the rest succeed)."""

    timeout: _Rate = 0.0
    malformed: _Rate = 0.0
    truncated: _Rate = 0.0
    denied: _Rate = 0.0

    @pydantic.model_validator(mode="after")
    def _at_most_one(self):
        if self.total > 1.0 + 1e-9:
            raise ValueError(f"fault rates add up to {self.total:g}; at most 1")
        return self

    @property
    def total(self) -> float:
        return self.timeout + self.malformed + self.truncated + self.denied


class PinnedFault(Frozen):
    """A fault forced on a call, whatever the rates draw.

    ``call`` is the 1-based number of the tool call in the episode (counting every
    call that reached the service, in every tool turn, retries included; a call with an
    unknown tool or bad arguments does not count); ``tool`` a canonical tool name. With
    both, the pin hits that call only if it is to that tool; with ``tool`` alone, the
    next ``times`` calls to that tool; with ``call`` alone, that call whatever its tool.
    """

    kind: FaultKind
    call: pydantic.conint(ge=1) | None = None
    tool: str | None = None
    times: pydantic.conint(ge=1, le=10_000) = 1

    @pydantic.model_validator(mode="after")
    def _targets_something(self):
        if self.call is None and self.tool is None:
            raise ValueError("a pinned fault needs 'call', 'tool' or both")
        from liveroom_sim.harness.tools import TOOLS  # tools import the market only: no cycle

        if self.tool is not None and self.tool not in TOOLS:
            raise ValueError(f"unknown tool {self.tool!r}{did_you_mean(self.tool, TOOLS)}; pins name tools "
                             f"canonically, one of {sorted(TOOLS)}")
        return self


class ToolsConfig(Frozen):
    """A spec's ``tools:`` block: fault rates, the latency a timeout costs, pinned faults.

    Off by default (every rate 0, nothing pinned): tools never fail and no random
    number is drawn for them.
    """

    faults: FaultRates = FaultRates()
    timeout_s: pydantic.confloat(ge=0.0, le=120.0) = 3.0
    pinned: tuple[PinnedFault, ...] = ()

    @property
    def on(self) -> bool:
        return self.faults.total > 0 or bool(self.pinned)


class ToolFaultPlan:
    """Which fault hits each tool call of one episode.

    Args:
        config: Rates, timeout cost and pinned faults.
        rng: The plan's own generator (see :func:`fault_generator`); drawn from only
            when a rate is above 0.
    """

    def __init__(self, config: ToolsConfig, rng: np.random.Generator | None):
        self.config = config
        self.rng = rng
        self.calls = 0
        self.faults = 0
        self._pins = [[p, p.times] for p in config.pinned]
        self._denied: set[tuple[str, str]] = set()
        rates = config.faults
        # The rates stacked (running sums, added in order as numpy's cumsum does), as
        # Python floats: a draw reads them with bisect, not a numpy call per tool call.
        self._stack: list[float] = list(itertools.accumulate(float(getattr(rates, k)) for k in FAULT_KINDS))
        self.enabled = config.on

    @property
    def active(self) -> bool:
        """Whether any call may still fault (a rate above 0, a denial in force, or a pin
        not yet used)."""
        return self._stack[-1] > 0 or bool(self._denied) or any(left > 0 for _, left in self._pins)

    def pin(self, kind: str, *, call: int | None = None, tool: str | None = None, times: int = 1) -> None:
        """Force ``kind`` on a later call (see :class:`PinnedFault`); raises ``ValueError``
        with the problem on a bad kind or target."""
        try:
            p = PinnedFault(kind=kind, call=call, tool=tool, times=times)
        except pydantic.ValidationError as exc:
            raise ValueError("; ".join(e["msg"] for e in exc.errors())) from None
        self._pins.append([p, p.times])
        self.enabled = True

    def pin_many(self, pins) -> None:
        """Pin each of ``pins`` (``PinnedFault`` fields as dicts, or models); raises
        ``ValueError`` naming the bad entry and field."""
        if isinstance(pins, (dict, str)) or not hasattr(pins, "__iter__"):
            raise ValueError("tool_faults: expected a list of pinned faults, e.g. [{'kind': 'timeout', 'call': 1}]")
        for i, p in enumerate(pins):
            try:
                p = p if isinstance(p, PinnedFault) else PinnedFault.model_validate(p)
            except pydantic.ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in exc.errors())
                raise ValueError(f"tool_faults[{i}]: {problems}") from None
            self._pins.append([p, p.times])
            self.enabled = True

    def new_exchange(self) -> None:
        """A new exchange began: denials are lifted (permissions are checked anew)."""
        self._denied.clear()

    def draw(self, canonical: str, subject: str) -> str | None:
        """The fault for the next call (to ``canonical`` about ``subject``), or ``None``.

        A pinned fault wins; a call denied earlier this exchange is denied again (a
        permission does not come back on retry); else the rates draw.
        """
        self.calls += 1
        kind = self._pinned(canonical)
        if kind is None and (canonical, subject) in self._denied:
            kind = "denied"
        if kind is None and self._stack[-1] > 0:
            u = self.rng.random()
            hit = bisect.bisect_right(self._stack, u)  # (np.searchsorted's side="right")
            kind = FAULT_KINDS[hit] if hit < len(FAULT_KINDS) else None
        if kind == "denied":
            self._denied.add((canonical, subject))
        self.faults += kind is not None
        return kind

    def _pinned(self, canonical: str) -> str | None:
        for entry in self._pins:
            p, left = entry
            if left <= 0 or (p.call is not None and p.call != self.calls) or (p.tool is not None and p.tool != canonical):
                continue
            entry[1] -= 1
            return p.kind
        return None


#: Spawn key of the fault generator, apart from the world draw's and HSA's children.
_FAULT_KEY = 0x7A17


def fault_generator(rng: np.random.Generator, variant: int = 0) -> np.random.Generator:
    """The fault plan's generator for one episode and harness variant: derived from the
    episode's seed sequence by a fixed key (it consumes nothing of ``rng``, and does not
    depend on how many children others spawned), different per variant."""
    seq = rng.bit_generator.seed_seq
    child = np.random.SeedSequence(seq.entropy, spawn_key=(*seq.spawn_key, _FAULT_KEY, variant),
                                   pool_size=seq.pool_size)
    return np.random.Generator(np.random.PCG64(child))


def faulted_content(kind: str, content: str, tool_shown: str, timeout_s: float) -> str:
    """What the policy reads of a call that ``kind`` hit: ``content`` is the result the
    call would have returned, ``tool_shown`` the tool's name under the current harness.

    Timeouts and denials are JSON errors that say whether a retry can help; malformed
    output is the result with its middle spliced out (fields run into each other),
    truncated output its first part: neither parses as JSON, so neither can be read as
    a result (and neither counts as a lookup).

    Example:
        >>> faulted_content("truncated", '{"price": 129.0, "stock": 4}', "live_price", 3.0)
        '{"price": 129.0, "'
    """
    if kind == "timeout":
        return json.dumps({"error": f"timeout: {tool_shown} did not answer within {timeout_s:g} s; "
                                    "the call may be retried"}, ensure_ascii=False)
    if kind == "denied":
        return json.dumps({"error": f"permission denied: this session may not call {tool_shown} right now; "
                                    "retrying will not help"}, ensure_ascii=False)
    n = len(content)
    if kind == "truncated":
        out = content[: max(1, (n * 2) // 3)]
    else:
        out = content[: n // 3] + content[(n * 2) // 3:].replace('"', "", 1)
    return out if not _parses(out) else out + "\x00"


def _parses(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
