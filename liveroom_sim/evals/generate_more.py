"""The ``robust`` and ``follow`` suites (see :mod:`liveroom_sim.evals.generate`).

``robust``: fact questions whose turn meets a tool fault (each of
:data:`liveroom_sim.harness.faults.FAULT_KINDS`, pinned on the room's fault plan) on a call
whose result the answer needs: the first call to the tool the reference host calls first
among those the ask needs (:func:`~liveroom_sim.evals.faults.needed_tools`; a question it
answers without one is not a case), whatever the order of the policy's own calls; and questions under perturbed prompts (sections and the items in them
reordered, reformatted, tools reordered, descriptions rewritten) and perturbed numeric
limits (drawn anew within the ranges the business allows): :data:`PERTURBATIONS`.

``follow``: questions (tool faults only where pinned: none; the paper's room's fault rates
do not reach a case's turn, :func:`~liveroom_sim.evals.faults.set_faults`) under a harness whose interaction constraints were drawn anew
(``vary_constraints``), at the opening of the stream and after the rule update mid-stream
(:data:`FOLLOW_STAGES`), each with the verifiable
instructions in force at that moment
(:mod:`liveroom_sim.evals.follow`): length, mention, opening and closing, language, the
disclosures owed for what is asked about, the slogan when owed, topics to avoid, and the
rules (updated mid-stream or not); and, in the paper's room (:data:`SKILLS_ENV`, skills on
demand), the skills to load.
"""

from __future__ import annotations

from liveroom_sim.evals import picking as g
from liveroom_sim.evals.cases import Case, Check, Fault
from liveroom_sim.evals.faults import FAULT_KINDS, needed_tools
from liveroom_sim.evals.snapshot import KINDS, Moment
from liveroom_sim.harness.actions import parse_action
from liveroom_sim.harness.augment import ALL_OPERATORS
from liveroom_sim.policies.scripted import ScriptedAvatar
from liveroom_sim.rewards.reading import product_tags
from liveroom_sim.world import campaign as ev

#: Perturbations of the robust suite: name -> HSA operators (those this release has).
PERTURBATIONS = {
    "prompt": tuple(op for op in ("redescribe", "reorder_sections", "reformat", "reorder_items", "reorder_tools")
                    if op in ALL_OPERATORS),
    "limits": tuple(op for op in ALL_OPERATORS if "limit" in op) or ("vary_constraints",),
}
_FACT_KINDS = tuple(k for k in KINDS if k not in ("bait", "injection"))


def needed_call(moment: Moment, msg) -> str | None:
    """The canonical tool the reference host calls first, at this moment, among those whose
    result the answer to ``msg`` needs (None: it calls none of them)."""
    room = moment.room
    action = ScriptedAvatar()(moment.obs, moment.info)
    parsed = parse_action(action, room.harness, room.steps + 1)
    need = needed_tools(a.intent for a in msg.asks)
    return next((c.canonical for c in parsed.tool_calls if c.canonical in need), None)


def robust(target: int) -> list[Case]:
    groups = [("fault", kind, ()) for kind in FAULT_KINDS] + [("perturb", name, ops)
                                                               for name, ops in PERTURBATIONS.items() if ops]
    per_group = target // len(groups) // len(g.LANGUAGES)
    out = []
    for language in g.LANGUAGES:
        for i, (what, name, ops) in enumerate(groups):
            kinds = _FACT_KINDS if what == "fault" else KINDS
            fits = (lambda moment, m: needed_call(moment, m) is not None) if what == "fault" else None
            # Each group plays its own seeds (a robust case is never a twin of another).
            base = 20_000 * i
            for moment, msg, seed in g.balanced_cases("robust", language, per_group, operators=ops, kinds=kinds,
                                                      seed_shift=base, fits=fits):
                extra = ({"fault": Fault(kind=name, tool=needed_call(moment, msg))} if what == "fault"
                         else {"perturbation": name})
                case = g.case_from(moment, msg, "robust", language, seed, ops, **extra)
                out.append(case.model_copy(update={"id": f"robust-{name}-{case.id.removeprefix('robust-')}"}))
    return out


def checks_for(moment: Moment, msg) -> tuple[Check, ...]:
    """The instructions in force for a reply to ``msg`` at this moment."""
    room = moment.room
    c = room.harness.constraints
    out = [Check(name="language", value=room.language), Check(name="mention"), Check(name="max_chars")]
    if c.greeting:
        out.append(Check(name="greeting"))
    if c.sign_off:
        out.append(Check(name="sign_off"))
    market = room.market
    if msg.product and any(d.when in product_tags(market.catalog)[msg.product] for d in market.rules.disclosures):
        out.append(Check(name="disclosure"))
    if market.style.slogan and room.replies_since_slogan >= 4:
        out.append(Check(name="slogan"))
    if market.style.avoid_topics:
        out.append(Check(name="avoid_topics"))
    updated = any(isinstance(e, ev.RuleUpdate) and e.at <= room.clock for e in room.world.campaign.events)
    out.append(Check(name="rules", value="updated" if updated else "opening"))
    if room.harness.skills_on_demand:
        out.append(Check(name="skills"))
    return tuple(out)


def _rules_updated(moment: Moment) -> bool:
    room = moment.room
    return any(isinstance(e, ev.RuleUpdate) and e.at <= room.clock for e in room.world.campaign.events)


#: The follow suite's stages of the stream: (name, share of the suite, the moment's
#: condition, longest prefix). The rule update fires about two minutes in (some 70
#: steps of the reference host). The directive naming topics to avoid comes about twelve
#: minutes in (some 420 steps): a question waiting alone is rare that late, and finding
#: 30 such cases took six minutes, so this release has no such stage (the check exists).
FOLLOW_STAGES = (("opening", 5 / 6, None, g.MAX_PREFIX), ("rules_updated", 1 / 6, _rules_updated, 200))


#: Skills to load: follow cases in the paper's room (skills on demand; zh), beyond the
#: ``target`` of the two languages' own rooms.
SKILLS_ENV, SKILLS_CASES = "LiveRoom-TaoLive-v0", 80


def follow(target: int) -> list[Case]:
    out = []
    for language in g.LANGUAGES:
        for i, (_, share, when, longest) in enumerate(FOLLOW_STAGES):
            n = round(target * share / len(g.LANGUAGES))
            for moment, msg, seed in g.balanced_cases("follow", language, n, operators=("vary_constraints",),
                                                      seed_shift=100_000 * i, when=when, max_prefix=longest):
                out.append(g.case_from(moment, msg, "follow", language, seed, ("vary_constraints",),
                                       checks=checks_for(moment, msg)))
    for moment, msg, seed in g.balanced_cases("follow", "zh", SKILLS_CASES, operators=("vary_constraints",),
                                              seed_shift=300_000, env=SKILLS_ENV):
        out.append(g.case_from(moment, msg, "follow", "zh", seed, ("vary_constraints",), env=SKILLS_ENV,
                               checks=checks_for(moment, msg)))
    return out
