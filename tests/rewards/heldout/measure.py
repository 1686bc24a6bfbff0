"""Recall and false positives of the compliance reading on a probe file (held-out or dev).

A violation is caught when the ``compliance`` component of its turn is below zero; a
clean reply is a false positive when it is. Figures are per language and rule family.

Run: ``python tests/rewards/heldout/measure.py [tests/rewards/heldout/compliance.yaml] [--misses]``

``--refusals`` reads a refusal probe file instead (families ``refusal`` and ``not_refusal``,
each a reply to a viewer's bait): how many polite refusals the reward reads as refusals
(the bait's need met), and how many other replies it reads as ones.

``--reasons`` also lists why each caught violation was charged (a catch for the wrong reason,
such as a missing disclosure, is not a catch of the family); ``--campaign-rules`` reads every
probe with its env campaign's ``rule_update`` events already in force (the rules a room has
later in the stream), for probes that assume them.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
from liveroom_sim.rewards.components import compliance

HERE = Path(__file__).resolve().parent
HELD_OUT = HERE / "compliance.yaml"
DEV = HERE / "dev.yaml"
ENV = {"en": "LiveRoom-v0", "zh": "LiveRoom-zh-v0"}


def probes(path: Path) -> list[dict]:
    """The probe cases of a file, as written."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]


def campaign_rules(env: str) -> list[dict]:
    """The ``rule_update`` events of an env's campaign, as probe events."""
    return [e.model_dump(mode="json") for e in world_for(env).campaign.events if e.type == "rule_update"]


def score(probe: dict, with_rules: bool = False):
    """The compliance score of one probe's turn (after the campaign's rule updates if ``with_rules``)."""
    return compliance(_context(probe, with_rules))


def _context(probe: dict, with_rules: bool = False):
    env = ENV[probe["lang"]]
    events = (campaign_rules(env) if with_rules else []) + probe.get("events", [])
    question = {"asker": "viewer_7", "intent": probe.get("intent", "chat"), "product": probe["product"],
                "text": probe.get("text", ""), "payload": probe.get("payload", [])}
    case = RewardCase(id=probe["id"], env=env, events=events, question=question, reply=probe["reply"])
    return build_context(case, probe["id"])


def refused(probe: dict) -> bool:
    """Whether the reward reads a bait probe's reply as a polite refusal (the bait's need
    met: refused, not obeyed)."""
    a = _context({**probe, "intent": "bait"}).analysis
    return a.refusal and not a.obeyed


def measure_refusals(path: Path) -> dict:
    """Per language: the refusals read as refusals and the others read as refusals (a
    refusal probe file: families ``refusal`` and ``not_refusal``)."""
    out: dict = {}
    for probe in probes(path):
        lang = out.setdefault(probe["lang"], {"refusal": [0, 0, []], "not_refusal": [0, 0, []]})
        tally = lang[probe["family"]]
        tally[1] += 1
        if refused(probe):
            tally[0] += 1
        if refused(probe) != (probe["family"] == "refusal"):
            tally[2].append(probe["id"])
    return out


def measure(path: Path, with_rules: bool = False) -> dict:
    """Per language: recall per family and overall, the clean replies flagged, and the
    violations missed and caught (each caught one with the reward's reasons)."""
    out: dict = {}
    for probe in probes(path):
        lang = out.setdefault(probe["lang"], {"families": defaultdict(lambda: [0, 0]), "clean": 0, "flagged": [],
                                              "missed": [], "caught": []})
        s = score(probe, with_rules)
        if probe["family"] == "clean":
            lang["clean"] += 1
            if s.value < 0:
                lang["flagged"].append((probe["id"], s.reasons))
        else:
            tally = lang["families"][probe["family"]]
            tally[1] += 1
            if s.value < 0:
                tally[0] += 1
                lang["caught"].append((probe["id"], s.reasons))
            else:
                lang["missed"].append(probe["id"])
    for lang in out.values():
        caught = sum(c for c, _ in lang["families"].values())
        total = sum(n for _, n in lang["families"].values())
        lang["recall"] = caught / total if total else 0.0
        lang["false_positives_per_20"] = 20 * len(lang["flagged"]) / lang["clean"] if lang["clean"] else 0.0
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=HELD_OUT)
    parser.add_argument("--misses", action="store_true", help="list the missed and flagged probes")
    parser.add_argument("--reasons", action="store_true", help="list why each caught violation was charged")
    parser.add_argument("--campaign-rules", action="store_true",
                        help="read probes with the env campaign's rule updates in force")
    parser.add_argument("--refusals", action="store_true",
                        help="a refusal probe file: how many polite refusals are read as refusals, and others as ones")
    args = parser.parse_args(argv)
    if args.refusals:
        for name, lang in measure_refusals(args.path).items():
            (r, n, r_wrong), (f, m, f_wrong) = lang["refusal"], lang["not_refusal"]
            print(f"{name}: refusals read {r}/{n} ({r / max(n, 1):.0%}); non-refusals read as refusals {f}/{m}")
            if args.misses:
                print("  missed:", " ".join(r_wrong), "| misread:", " ".join(f_wrong))
        return 0
    for name, lang in measure(args.path, args.campaign_rules).items():
        fams = ", ".join(f"{f} {c}/{n}" for f, (c, n) in sorted(lang["families"].items()))
        print(f"{name}: recall {lang['recall']:.0%} ({fams}); false positives {len(lang['flagged'])}/{lang['clean']} "
              f"clean ({lang['false_positives_per_20']:.1f} per 20)")
        if args.misses:
            print("  missed:", " ".join(lang["missed"]))
            for pid, reasons in lang["flagged"]:
                print("  flagged:", pid, list(reasons))
        if args.reasons:
            for pid, reasons in lang["caught"]:
                print("  caught:", pid, list(reasons))
    return 0


if __name__ == "__main__":
    sys.exit(main())
