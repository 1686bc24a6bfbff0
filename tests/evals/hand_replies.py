"""Hand-written replies graded on real suite cases (``data/hand_replies.yaml``): the
helper the grader's tests use, and a measuring script
(``python tests/evals/hand_replies.py``: each reply's verdict against a person's)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from liveroom_sim.evals.cases import Case, load_suite
from liveroom_sim.evals.replay import Snapshot
from liveroom_sim.evals.turn import run_turn
from liveroom_sim.policies.scripted import ScriptedAvatar

DATA = Path(__file__).parent / "data" / "hand_replies.yaml"


def entries() -> list[dict]:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))["replies"]


def fits(case: Case, where: dict) -> bool:
    q = case.question
    if case.language != where["language"] or len(q.asks) > 1:
        return False
    if q.intent != where["intent"] and not (where["intent"] == "bait" and q.intent == "bait"):
        return False
    if "text" in where and not re.search(where["text"], q.text):
        return False
    market = case.market.get(q.product or "", {})
    if where.get("stock") == "positive" and not (market.get("stock") or 0) > 0:
        return False
    if where.get("stock") == "zero" and market.get("stock") != 0:
        return False
    truth = [*case.must, *(f for a in case.answers for f in a.backing)]  # the catalog's facts as of the case
    if "must" in where and not any(where["must"].lower() in m.lower() for m in truth):
        return False
    if "not_must" in where and any(where["not_must"].lower() in m.lower() for m in truth):
        return False
    return not ("order" in where and (not case.must or case.must[0] != where["order"]))


def case_for(where: dict, cases: list[Case]) -> Case:
    found = next((c for c in cases if fits(c, where)), None)
    if found is None:
        raise LookupError(f"no lsqa case fits {where}")
    return found


class HandReply:
    """The reference host's tool calls, then a hand-written reply."""

    def __init__(self, text: str, case: Case, room):
        self.inner, self.text, self.case = ScriptedAvatar(), text, case
        self.fmt = room.harness.constraints.mention_format
        self.rival = room.market.catalog.competitors[0] if room.market.catalog.competitors else "them"
        # The disclosures the rules owe for the product asked about ("#ad" for a sponsored
        # one): said, so a reply is graded on its answer, not on a missing label.
        p = room.market.catalog.by_id.get(case.question.product or "")
        owed = [d.forms[0] for d in room.market.rules.disclosures
                if p is not None and (d.when == p.category or getattr(p, d.when, False))]
        self.label = "".join(f" {f}" for f in owed)

    def __call__(self, observation: str, info: dict) -> str:
        action = self.inner(observation, info)
        if action.lstrip().startswith("{") and '"tool_calls"' in action:
            return action
        q = self.case.question
        text = self.text.replace("{mention}", "{mention}" + self.label, 1)
        return text.format(mention=self.fmt.format(name=q.asker), order=q.order or "", rival=self.rival,
                           must=", ".join(self.case.must))


def grade_entry(entry: dict, cases: list[Case]) -> tuple[Case, dict]:
    case = case_for(entry["where"], cases)
    env, obs, info = Snapshot.of(case).fork(1)[0]
    sample, _ = run_turn(case, env, obs, info, HandReply(entry["reply"], case, env.unwrapped.room))
    return case, sample.verdict


if __name__ == "__main__":
    _, lsqa = load_suite("lsqa")
    right = graded = 0
    for e in entries():
        try:
            case, verdict = grade_entry(e, lsqa)
        except LookupError as missing:
            print(f"-   {e['id']:32} skipped: {missing}")
            continue
        graded += 1
        ok = bool(verdict["pass"]) == e["pass"]
        right += ok
        print(f"{'ok ' if ok else 'BAD'} {e['id']:32} want {'pass' if e['pass'] else 'fail'}, got "
              f"{'pass' if verdict['pass'] else 'fail'} (strict {verdict.get('strict', '-')}) on {case.id}: "
              f"{'; '.join(verdict['reasons'])[:150]}")
    print(f"{right}/{graded} graded as a person grades them ({len(entries()) - graded} find no case)")
