"""Tool faults in eval cases: only where a case pins one, on a call the answer needs.

A ``robust`` case names a fault (``timeout``, ``malformed``, ``truncated`` or ``denied``:
:data:`liveroom_sim.harness.faults.FAULT_KINDS`) and the canonical tool it hits: one whose
result the answer needs (:func:`needed_tools`), the first call to it in the turn, whatever
the order of the policy's calls. :func:`set_faults` gives every case's turn a fault plan
of its own once the room stands at the case's turn: no random faults (a spec's fault rates,
as the paper's room has, would make cases of other suites fail at random), and the case's
pinned fault, answered by the room itself (not counted as a lookup) as in a training
episode with faults on; every other call answers normally, so a policy that notices and
calls again gets the real result (a denial stays denied for the rest of the exchange, as
the plan says). See ``docs/tool-faults.md``.
"""

from __future__ import annotations

from liveroom_sim.evals.cases import Case
from liveroom_sim.harness.faults import FAULT_KINDS, FaultRates, ToolFaultPlan

__all__ = ["FAULT_KINDS", "lost", "needed_tools", "set_faults"]

#: The tools whose result answers each ask intent (others read a product's details).
_NEEDS = {"price": ("get_price_stock",), "stock": ("get_price_stock",),
          "promotion": ("get_promotions", "get_price_stock"), "shipping": ("get_policy",),
          "returns": ("get_policy",), "warranty": ("get_policy", "get_product"),
          "order_status": ("get_order_status",)}


def needed_tools(intents) -> frozenset[str]:
    """The canonical tools whose results the answer to asks of ``intents`` needs."""
    return frozenset(t for i in intents for t in _NEEDS.get(i, ("get_product",)))


#: Asks that either of their tools answers alone: ``get_price_stock`` carries the flash sale
#: and the price after the best coupon, ``get_promotions`` the coupons and flash sales.
_EITHER = frozenset({"promotion"})


def lost(intents, failed, got) -> bool:
    """Whether some ask of ``intents`` could not be answered: a tool it needs is in
    ``failed`` and, for an ask that either of its tools answers, none is in ``got`` (the
    tools that answered). "I can't check that right now" is honest only then."""
    for intent in intents:
        tools = set(_NEEDS.get(intent, ("get_product",)))
        if tools & set(failed) and not (intent in _EITHER and tools & set(got)):
            return True
    return False


def set_faults(case: Case, env) -> None:
    """The case's turn's fault plan: no random faults, the case's pinned fault (if any)."""
    room = env.unwrapped.room
    old = room.faults
    plan = ToolFaultPlan(old.config.model_copy(update={"faults": FaultRates(), "pinned": ()}), None)
    plan.calls = old.calls
    if case.fault is not None:
        if case.fault.tool:
            plan.pin(case.fault.kind, tool=case.fault.tool)
        else:
            plan.pin(case.fault.kind, call=plan.calls + 1 + case.fault.call)
    room.faults = plan
