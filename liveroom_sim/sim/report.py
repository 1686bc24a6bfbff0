"""What the room reports: metrics for ``info["metrics"]`` and notes on campaign events."""

from __future__ import annotations

from collections.abc import Callable

from liveroom_sim.harness.faults import ToolFaultPlan
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.ledger import EpisodeLedger
from liveroom_sim.world import campaign as ev


def metrics_later(clock: float, crowd: Crowd, ledger: EpisodeLedger, steps: int,
                  faults: ToolFaultPlan) -> Callable[[], dict]:
    """A function that returns the business numbers of a room (viewers, questions,
    purchases, GMV, latency) as they are now, whenever it is called: the numbers are
    read now, the dict is built on the call (for an ``info`` built on first read)."""
    s = crowd.stats
    phraser = crowd.writer.phraser
    llm = None if phraser is None else (phraser.calls, phraser.failures)
    numbers = (clock, len(crowd.present), crowd.arrival_sum_later(), s.arrived, s.messages, s.questions,
               s.answered, s.ignored, crowd.questions_waiting(), ledger.replies, ledger.blocked, ledger.tool_errors,
               s.purchases, s.buyers, s.gmv, s.dwell_total, llm, ledger.last_latency, ledger.latency_total, steps,
               faults.faults if faults.enabled else None)
    return lambda: _metrics(*numbers)


def _metrics(clock, present, arrival_sum, arrived, messages, questions, answered, ignored, waiting, replies,
             blocked, tool_errors, purchases, buyers, gmv, dwell_total, llm, last_latency, latency_total,
             steps, tool_faults) -> dict:
    stayed = present * clock - arrival_sum()
    return {
        "clock_s": round(clock, 3),
        "viewers_present": present,
        "viewers_total": arrived,
        "messages": messages,
        "questions_asked": questions,
        "questions_answered": answered,
        "questions_ignored": ignored,
        "questions_waiting": waiting,
        "replies": replies,
        "replies_blocked": blocked,
        "tool_errors": tool_errors,
        **({} if tool_faults is None else {"tool_faults": tool_faults}),
        "purchases": purchases,
        "buyers": buyers,
        "gmv": gmv,
        "conversion": round(buyers / arrived, 4) if arrived else 0.0,
        "avg_dwell_s": round((dwell_total + stayed) / arrived, 2) if arrived else 0.0,
        **({} if llm is None else {"llm_viewer_calls": llm[0], "llm_viewer_failures": llm[1]}),
        "latency_s": round(last_latency, 3),
        "mean_latency_s": round(latency_total / steps, 3) if steps else 0.0,
    }


def event_note(event, record: dict, before, after) -> str:
    """The ops note the policy reads about a fired event, in the policy's terms (tools by
    their names under the harness ``after`` the event; ``before`` is the one it replaced)."""
    if isinstance(event, ev.HarnessChange):
        details = [f"tool {before.tool_name(c)} is now called {after.tool_name(c)}" for c in event.rename_tool]
        details += [f"skill {event.skill!r} added or updated"] if event.skill else []
    elif isinstance(event, ev.RuleUpdate):
        r = event.rules
        details = ([f"banned phrases {[b.phrase for b in r.banned]}"] if r.banned else []) + \
                  ([f"banned claims {[c.name for c in r.claims]}"] if r.claims else []) + \
                  ([f"disclosures {[d.name for d in r.disclosures]}"] if r.disclosures else [])
    else:
        details = [f"{k}={v}" for k, v in record.items() if k not in ("type", "at", "note")]
    summary = f"{record['type'].replace('_', ' ')}: {', '.join(details)}"
    return f"{event.note} ({summary})" if event.note else summary
