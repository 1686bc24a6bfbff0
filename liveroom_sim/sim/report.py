"""What the room reports: metrics for ``info["metrics"]`` and notes on campaign events."""

from __future__ import annotations

from liveroom_sim.world import campaign as ev


def room_metrics(room) -> dict:
    """The business numbers of a room now (viewers, questions, purchases, GMV, latency)."""
    s = room.crowd.stats
    present = room.crowd.present
    stayed = len(present) * room.clock - sum(v.arrived for v in present)
    phraser = room.crowd.writer.phraser
    return {
        "clock_s": round(room.clock, 3),
        "viewers_present": len(present),
        "viewers_total": s.arrived,
        "messages": s.messages,
        "questions_asked": s.questions,
        "questions_answered": s.answered,
        "questions_ignored": s.ignored,
        "questions_waiting": sum(m.is_fact_question for m in room.crowd.pending),
        "replies": room.replies,
        "replies_blocked": room.blocked,
        "tool_errors": room.tool_errors,
        **({"tool_faults": room.faults.faults} if room.faults.enabled else {}),
        "purchases": s.purchases,
        "buyers": s.buyers,
        "gmv": s.gmv,
        "conversion": round(s.buyers / s.arrived, 4) if s.arrived else 0.0,
        "avg_dwell_s": round((s.dwell_total + stayed) / s.arrived, 2) if s.arrived else 0.0,
        **({} if phraser is None else {"llm_viewer_calls": phraser.calls, "llm_viewer_failures": phraser.failures}),
        "latency_s": round(room._last_latency, 3),
        "mean_latency_s": round(room.latency_total / room.steps, 3) if room.steps else 0.0,
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
