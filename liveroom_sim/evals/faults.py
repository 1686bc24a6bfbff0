"""Tool faults pinned on ``robust`` cases, through the room's own fault plan.

A robust case names a fault (``timeout``, ``malformed``, ``truncated`` or ``denied``:
:data:`liveroom_sim.harness.faults.FAULT_KINDS`) and which call of the turn it hits (0:
the first). :func:`pin_fault` pins it on the room's :class:`~liveroom_sim.harness.faults.ToolFaultPlan`
once the room stands at the case's turn, so the room itself answers that call with the
fault (and does not count it as a lookup), exactly as in a training episode with faults
on; every other call answers normally, so a policy that notices and calls again gets the
real result (a denial stays denied for the rest of the exchange, as the plan says).
See ``docs/tool-faults.md``.
"""

from __future__ import annotations

from liveroom_sim.evals.cases import Case
from liveroom_sim.harness.faults import FAULT_KINDS

__all__ = ["FAULT_KINDS", "pin_fault"]


def pin_fault(case: Case, env) -> None:
    """Pin the case's fault (if any) on the turn's ``fault.call``-th call (0-based)."""
    if case.fault is None:
        return
    faults = env.unwrapped.room.faults
    faults.pin(case.fault.kind, call=faults.calls + 1 + case.fault.call)
