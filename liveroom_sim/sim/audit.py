"""Simulator QA: generate rooms and check every viewer message (``liveroom audit``).

tau2-bench found about 30 % of failed retail runs to be the user simulator's fault, so a
simulator is checked, not trusted. :func:`audit` plays rooms of a spec with the built-in
hosts (even seeds with the scripted host, which answers, so follow-ups happen; odd seeds
with the naive one, which ignores, so complaints and departures happen), puts every
message to the checks of :mod:`liveroom_sim.sim.fidelity`, checks the viewers' handles,
and measures the numbers a room operator watches (:func:`room_numbers`).

The threshold: every check kind must pass on at least :data:`THRESHOLD` of the messages
it applies to. Template viewers are meant to pass all of them; the margin allows a rare
slip in user data (a persona line without a category) to be reported, not to fail a
build, while a defect that hits a whole intent or category (1 in 20 messages or more)
fails it. A simulator error rate of 2 % is small next to the policy errors the reward
exists to find, which is the point of the bound.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from liveroom_sim.sim.buzz import BOUGHT, REACTION_INTENTS
from liveroom_sim.sim.fidelity import CHECKS, check_message
from liveroom_sim.sim.naming import stem
from liveroom_sim.sim.room import Room
from liveroom_sim.world.personas import FACT_INTENTS

#: Least share of messages each check kind must pass.
THRESHOLD = 0.98
KINDS = (*CHECKS, "names")
#: The paper's kinds of viewer message, by intent.
MESSAGE_KINDS = {
    "purchase intent": ("price", "stock", "promotion"),
    "after-sales": ("order_status", "returns", "warranty"),
    "chit-chat": ("greet", "chat", "troll"),
    "adversarial": ("bait", "inject"),
}


#: Seeds over which the audit counts distinct campaign timelines.
TIMELINE_SEEDS = 10
#: Seconds after a flash sale starts within which chat should speak of it.
FLASH_MENTION_S = 60.0
#: The bounds on the numbers about the show (docs/simulator.md): distinct event-kind
#: sequences over :data:`TIMELINE_SEEDS` seeds (of a spec that draws its timeline), flash
#: sales that chat mentions within :data:`FLASH_MENTION_S`, and the purchase rate during
#: flash sales over the rate outside them.
SHOW_TARGETS = {"distinct_timelines": (">=", 8), "flash_mentioned": (">=", 0.8), "flash_purchase_lift": (">", 1.5)}


@dataclass
class AuditReport:
    """Checks passed per kind, failure examples, operator numbers per host, the numbers
    about the show (``show``, bounded by :data:`SHOW_TARGETS`) and about the chat's text
    (``chat``)."""

    env: str
    seeds: int
    messages: int = 0
    passed: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)
    phrased: int = 0
    fell_back: int = 0
    numbers: dict[str, dict] = field(default_factory=dict)
    show: dict = field(default_factory=dict)
    chat: dict = field(default_factory=dict)

    def rate(self, kind: str) -> float:
        return self.passed[kind] / self.total[kind] if self.total[kind] else 1.0

    def ok(self, threshold: float = THRESHOLD) -> bool:
        """Every check kind at or above ``threshold``, and every number about the show
        that applies within its target."""
        return all(self.rate(k) >= threshold for k in KINDS) and all(self.show_verdicts().values())

    def show_verdicts(self) -> dict[str, bool]:
        """Each number about the show that applies (a pinned timeline has one sequence by
        design; a room without flash sales has none to mention), against its target."""
        out = {}
        for name, (op, bound) in SHOW_TARGETS.items():
            value = self.show.get(name)
            if value is not None:
                out[name] = value >= bound if op == ">=" else value > bound
        return out

    def show_table(self) -> str:
        """The numbers about the show and about the chat's text, each with its target."""
        verdicts = self.show_verdicts()
        lines = [f"the show of {self.env}:"]
        for name, (op, bound) in SHOW_TARGETS.items():
            value = self.show.get(name)
            mark = "n/a" if value is None else ("ok" if verdicts[name] else "MISSED")
            detail = self.show.get(f"{name}_detail", "")
            lines.append(f"  {name:<22} {_shown(value):>8}  target {op} {bound:g}  {mark}  {detail}".rstrip())
        if self.chat:
            lines.append(f"the chat of {self.env}:")
            for name, value in self.chat.items():
                if name in ("lines", "targets") or name.endswith("examples"):
                    continue
                target = self.chat.get("targets", {}).get(name)
                mark = "" if target is None else "  target {} {:g}  {}".format(
                    target[0], target[1], "ok" if _meets(value, target) else "MISSED")
                lines.append(f"  {name:<22} {_shown(value):>8}{mark}")
        return "\n".join(lines)

    def table(self) -> str:
        """The fidelity table: one row per check kind, then failure examples."""
        lines = [f"fidelity of {self.env}: {self.messages} messages, {self.seeds} seeds",
                 f"{'check':<10} {'passed':>7} {'of':>7} {'rate':>7}"]
        for k in KINDS:
            lines.append(f"{k:<10} {self.passed[k]:>7} {self.total[k]:>7} {self.rate(k):>7.1%}")
        if self.phrased or self.fell_back:
            lines.append(f"LLM-phrased: {self.phrased} kept, {self.fell_back} fell back to the template")
        for k, examples in self.examples.items():
            lines.append(f"failures of {k}:")
            lines += [f"  - {e}" for e in examples]
        return "\n".join(lines)


def audit(world, seeds: int = 4, max_steps: int | None = None, first_seed: int = 0) -> AuditReport:
    """Play ``seeds`` rooms of ``world`` and check every viewer message.

    Args:
        world: A loaded spec (:func:`liveroom_sim.spec.load_spec`).
        seeds: Rooms to play (seeds ``first_seed`` ...).
        max_steps: Stop each room after this many steps (default: the spec's).
    """
    from liveroom_sim.policies.naive import NaiveAvatar
    from liveroom_sim.policies.scripted import ScriptedAvatar

    report = AuditReport(world.spec.id, seeds)
    book, language = world.phrasebook, world.spec.language
    rooms: dict[str, list[Room]] = {"scripted": [], "naive": []}
    for seed in range(first_seed, first_seed + seeds):
        host = "scripted" if seed % 2 == 0 else "naive"
        room = play(world, ScriptedAvatar() if host == "scripted" else NaiveAvatar(), seed, max_steps)
        rooms[host].append(room)
        for msg in room.crowd.chat:
            verdict = check_message(msg, room.market, book, language)
            report.messages += 1
            for kind, reason in verdict.results.items():
                report.total[kind] += 1
                report.passed[kind] += not reason
                if reason and len(report.examples.setdefault(kind, [])) < 3:
                    report.examples[kind].append(f"seed {seed} {msg.viewer.name}: {msg.text!r} ({reason})")
        stems = Counter(stem(v.name) for v in room.crowd.viewers)
        for v in room.crowd.viewers:
            report.total["names"] += 1
            clone = stems[stem(v.name)] > 1
            report.passed["names"] += not clone
            if clone and len(report.examples.setdefault("names", [])) < 3:
                report.examples["names"].append(f"seed {seed}: {v.name!r} has a clone in the room")
        writer = room.crowd.writer
        report.phrased += writer.phrased
        report.fell_back += writer.fell_back
    report.examples = {k: v for k, v in report.examples.items() if v}
    report.numbers = {host: room_numbers(rs) for host, rs in rooms.items() if rs}
    played = [r for rs in rooms.values() for r in rs]
    report.show = show_numbers(world, played, first_seed)
    report.chat = chat_numbers(world, played)
    return report


def episode_rng(seed: int) -> np.random.Generator:
    """The generator of the episode of ``seed``, as the env's ``reset(seed=...)`` makes it."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))


def show_numbers(world, rooms: list[Room], first_seed: int = 0) -> dict:
    """The numbers about the show (see :data:`SHOW_TARGETS`; ``None`` where one does not
    apply): distinct campaign timelines (as event-kind sequences) over
    :data:`TIMELINE_SEEDS` seeds from ``first_seed``, and over ``rooms`` the share of flash
    sales chat mentions (the spec's reaction cues) within :data:`FLASH_MENTION_S` of their
    start (of those that started that long before the room stopped) and the purchase rate
    during flash sales over the rate outside them."""
    sequences = {tuple(e.type for e in world.for_episode(episode_rng(s)).campaign.events)
                 for s in range(first_seed, first_seed + TIMELINE_SEEDS)}
    drawn = not world.spec.world.campaign.pinned
    cues = world.reactions
    sales = mentioned = bought_in = bought_out = 0
    time_in = time_out = 0.0
    for room in rooms:
        events, end = room.world.campaign.events, room.clock
        windows = []
        for e in events:
            if e.type != "flash_sale_start" or e.at >= end:
                continue
            stop = next((x.at for x in events if x.type == "flash_sale_end" and x.product == e.product and x.at > e.at), end)
            windows.append((e.at, min(stop, end)))
            if e.at + FLASH_MENTION_S > end:
                continue  # (the room stopped before the minute was up: not counted either way)
            sales += 1
            mentioned += any(e.at <= m.at <= e.at + FLASH_MENTION_S and m.intent != BOUGHT
                             and cues.mentions("flash_sale", m.text) for m in room.crowd.chat)
        inside = sum(b - a for a, b in windows)
        time_in, time_out = time_in + inside, time_out + end - inside
        for at, _ in room.crowd.sales:
            hit = any(a <= at <= b for a, b in windows)
            bought_in, bought_out = bought_in + hit, bought_out + (not hit)
    rate_in = bought_in / time_in * 60 if time_in else 0.0
    rate_out = bought_out / time_out * 60 if time_out else 0.0
    # (no purchase outside flash sales leaves no rate to compare with: not measured)
    lift = round(rate_in / rate_out, 2) if time_in and rate_out else None
    return {
        "distinct_timelines": len(sequences) if drawn else None,
        "distinct_timelines_detail": f"of {TIMELINE_SEEDS} seeds" + ("" if drawn else f" (pinned: {len(sequences)})"),
        "flash_mentioned": round(mentioned / sales, 3) if sales else None,
        "flash_mentioned_detail": f"{mentioned} of {sales} flash sales",
        "flash_purchase_lift": lift,
        "flash_purchase_lift_detail": (f"{rate_in:.2f} purchases/min in flash sales ({bought_in}), "
                                       f"{rate_out:.2f} outside ({bought_out})"),
    }


def chat_numbers(world, rooms: list[Room]) -> dict:
    """The figures of the chat's text over ``rooms`` (``liveroom_sim.sim.chat_stats``),
    with their targets: every line viewers typed (not the platform's purchase notices)."""
    try:  # (written beside this module by the chat's own work; absent, nothing to print)
        from liveroom_sim.sim import chat_stats as figures_of
    except ImportError:
        return {}
    lines = [m.text for r in rooms for m in r.crowd.chat if m.intent != BOUGHT]
    products = world.catalog.products
    known = [*(p.brand for p in products), *(a for p in products for a in p.aliases)]
    figures = figures_of.chat_stats(lines, world.spec.language, [p.name for p in products], known)
    return {**figures, "targets": figures_of.TARGETS.get(world.spec.language, {})}


def _shown(value) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _meets(value, target) -> bool:
    op, bound = target
    return value >= bound if op == ">=" else value <= bound


def play(world, policy, seed: int, max_steps: int | None = None) -> Room:
    """One room of ``world`` played by ``policy(observation, info)`` to its end."""
    room = Room(world, episode_rng(seed))
    room_info = {"language": world.spec.language}
    limit = max_steps or world.spec.stream.max_steps
    while not (room.terminated or room.truncated) and room.steps < limit:
        info = {"messages": room.messages(), "tools": room.tools(), "room": room_info}
        room.step(policy(room.observation(), info))
    return room


def room_numbers(rooms: list[Room]) -> dict:
    """The numbers a room operator watches, over ``rooms`` (see docs/simulator.md)."""
    # Viewers by room and handle (unique in a room), each with its time in the room.
    stays = {(i, v.name): (v, (v.left_at if v.left_at is not None else r.clock) - max(v.arrived, 0.0))
             for i, r in enumerate(rooms) for v in r.crowd.viewers}
    viewers = [v for v, _ in stays.values()]
    dwell = {key: d for key, (_, d) in stays.items()}
    chat = [m for r in rooms for m in r.crowd.chat]
    minutes = sum(dwell.values()) / 60
    spoke = {(i, m.viewer.name) for i, r in enumerate(rooms) for m in r.crowd.chat}
    asks = Counter()
    for m in chat:
        if m.intent in ("complaint", "follow_up", *REACTION_INTENTS):
            continue
        for a in m.asks:
            kind = next((k for k, intents in MESSAGE_KINDS.items() if a.intent in intents),
                        "product inquiry" if a.intent in FACT_INTENTS else "chit-chat")
            asks[kind] += 1
    total_asks = sum(asks.values()) or 1
    fact_msgs = [m for m in chat if m.intent in FACT_INTENTS]

    def group(keys):
        vs = [stays[k][0] for k in keys]
        if not vs:
            return {"viewers": 0}
        return {"viewers": len(vs), "avg_dwell_s": round(sum(dwell[k] for k in keys) / len(vs), 1),
                "conversion": round(sum(v.purchases > 0 for v in vs) / len(vs), 4),
                "left_early": round(sum(v.left_at is not None and v.strikes >= v.persona.patience_strikes
                                        for v in vs) / len(vs), 4)}

    return {
        "rooms": len(rooms),
        "viewers": len(viewers),
        "comments_per_viewer_min": round(len(chat) / minutes, 3) if minutes else 0.0,
        "comments_per_min": round(len(chat) / (sum(r.clock for r in rooms) / 60), 2) if rooms else 0.0,
        "silent_share": round(1 - len(spoke) / len(viewers), 4) if viewers else 0.0,
        "question_mix": {k: round(n / total_asks, 3) for k, n in sorted(asks.items())},
        "multi_ask_share": round(sum(len(m.asks) > 1 for m in fact_msgs) / max(1, len(fact_msgs)), 3),
        "avg_dwell_s": round(sum(dwell.values()) / len(viewers), 1) if viewers else 0.0,
        "conversion": round(sum(v.purchases > 0 for v in viewers) / len(viewers), 4) if viewers else 0.0,
        "answered_viewers": group([k for k, (v, _) in stays.items() if v.answered > 0]),
        "ignored_viewers": group([k for k, (v, _) in stays.items() if v.strikes > 0 and v.answered == 0]),
    }
