"""The suite generator's self-checks, over every case of the suites (CI runs them; so
does ``liveroom eval-suites --check``).

Per case, on its room rebuilt as of its turn:

- **shown**: the room reproduces (the digest), and the case's question waits there as
  the policy is shown it (the same text: no case is graded on words it did not see);
- **answer derivable**: what each ask expects, derived again from the world as of that
  moment (:meth:`~liveroom_sim.evals.snapshot.Moment.answers`), is what the case holds,
  and a yes/no ask has its yes or no;
- **condition applied**: an ``hvqa`` case has operators and a twin, a ``robust`` case a
  fault on a tool the answer needs (:func:`~liveroom_sim.evals.faults.needed_tools`) or a
  perturbation with operators, a ``follow`` case instructions to check;
- **twin differs**: an ``hvqa`` case shows the policy other messages or tools than its
  ``lsqa`` twin (digests differ).
"""

from __future__ import annotations

from liveroom_sim.evals.asks import Underivable
from liveroom_sim.evals.cases import Case
from liveroom_sim.evals.faults import needed_tools
from liveroom_sim.evals.replay import Snapshot, StaleCase
from liveroom_sim.evals.snapshot import Moment


def check_case(case: Case, twins: dict[str, Case] | None = None) -> list[str]:
    """The problems of one case (empty: it passes); ``twins``: the ``lsqa`` cases by id."""
    problems = _condition(case, twins or {})
    try:
        snap = Snapshot.of(case)
    except StaleCase as exc:
        return [*problems, f"shown: {exc}"]
    room = snap.env.room
    msg = next((m for m in room.crowd.pending if m.mid == case.question.mid), None)
    if msg is None or msg.text != case.question.text:
        return [*problems, "shown: the case's question does not wait in its room as recorded"]
    if not any(case.question.text in str(m.get("content") or "") for m in snap.info["messages"]):
        problems.append("shown: the question's text is not in the messages the policy is shown")
    moment = Moment(snap.env, snap.info, case.prefix, len(case.prefix), case.mix, snap.obs)
    try:
        again = moment.answers(msg)
    except Underivable as exc:
        return [*problems, f"answer derivable: {exc}"]
    if again != case.answers:
        problems.append("answer derivable: the answers derived again differ from the case's")
    problems += [f"answer derivable: {a.intent} is a yes/no ask without its yes or no"
                 for a in case.answers if a.form == "yes_no" and a.yes is None]
    if msg.is_fact_question and not case.answers:
        problems.append("answer derivable: a fact question without answers")
    return problems


def _condition(case: Case, twins: dict[str, Case]) -> list[str]:
    out = []
    if case.suite == "hvqa":
        twin = twins.get(case.twin or "")
        if not case.operators:
            out.append("condition applied: an hvqa case without operators")
        if twin is None:
            out.append(f"condition applied: its twin {case.twin!r} is not in lsqa")
        elif twin.digest == case.digest:
            out.append("twin differs: the policy is shown what its lsqa twin shows")
    if case.suite == "robust":
        if case.fault is not None:
            need = needed_tools(case.question.asks or (case.question.intent,))
            if case.fault.tool not in need:
                out.append(f"condition applied: the fault hits {case.fault.tool!r}, not a tool the answer needs "
                           f"({', '.join(sorted(need))})")
        elif not (case.perturbation and case.operators):
            out.append("condition applied: a robust case with neither a fault nor a perturbation")
    if case.suite == "follow" and not case.checks:
        out.append("condition applied: a follow case without instructions")
    return out


def check_suites(suites: dict[str, list[Case]], progress=None) -> dict[str, list[str]]:
    """Problems by case id over ``suites`` (suite -> cases); empty when all pass."""
    twins = {c.id: c for c in suites.get("lsqa", ())}
    out = {}
    for cases in suites.values():
        for case in cases:
            found = check_case(case, twins)
            if found:
                out[case.id] = found
            if progress:
                progress(case)
    return out
