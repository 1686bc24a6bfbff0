"""Render a room as text: clock, viewers, recent chat, campaign state, last turn."""

from __future__ import annotations

from liveroom_sim.sim.room import Room, Turn


def render_room(room: Room, turn: Turn | None = None) -> str:
    m = room.market
    mm, ss = divmod(int(room.clock), 60)
    featured = m.catalog.by_id[m.featured]
    lines = [
        f"== {room.spec.room.name} [{mm:02d}:{ss:02d} / {int(room.spec.stream.duration_s) // 60:02d}:00]"
        f"  viewers {len(room.crowd.present)}  purchases {room.crowd.stats.purchases}  GMV {room.crowd.stats.gmv:.2f}",
        f"featured: {featured.name} @ {m.price(featured.id):g} (stock {m.stock[featured.id]})",
    ]
    if m.flash:
        lines.append("flash sales: " + ", ".join(f"{pid} @ {p:g}" for pid, (p, _) in m.flash.items()))
    if m.coupons:
        lines.append("coupons: " + ", ".join(m.coupons))
    lines.append("-- chat")
    lines += [f"  {c.viewer.name}: {c.text}" for c in room.crowd.chat[-8:]]
    if turn is not None:
        r = turn.reward.as_dict()
        lines.append(f"-- last turn: {turn.kind}" + ("" if turn.delivered or turn.kind == "tool" else " (not delivered)"))
        lines.append("   reward " + " ".join(f"{k}={v:+.2f}" for k, v in r.items()))
    return "\n".join(lines)
