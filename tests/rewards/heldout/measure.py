"""Recall and false positives of the compliance reading on a probe file (held-out or dev).

A violation is caught when the ``compliance`` component of its turn is below zero; a
clean reply is a false positive when it is. Figures are per language and rule family.

Run: ``python tests/rewards/heldout/measure.py [tests/rewards/heldout/compliance.yaml] [--misses]``
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import yaml

from liveroom_sim.rewards.cases import RewardCase, build_context
from liveroom_sim.rewards.components import compliance

HERE = Path(__file__).resolve().parent
HELD_OUT = HERE / "compliance.yaml"
DEV = HERE / "dev.yaml"
ENV = {"en": "LiveRoom-v0", "zh": "LiveRoom-zh-v0"}


def probes(path: Path) -> list[dict]:
    """The probe cases of a file, as written."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]


def score(probe: dict):
    """The compliance score of one probe's turn."""
    question = {"asker": "viewer_7", "intent": probe.get("intent", "chat"), "product": probe["product"],
                "text": probe.get("text", ""), "payload": probe.get("payload", [])}
    case = RewardCase(id=probe["id"], env=ENV[probe["lang"]], events=probe.get("events", []), question=question,
                      reply=probe["reply"])
    return compliance(build_context(case, probe["id"]))


def measure(path: Path) -> dict:
    """Per language: recall per family and overall, and the clean replies flagged."""
    out: dict = {}
    for probe in probes(path):
        lang = out.setdefault(probe["lang"], {"families": defaultdict(lambda: [0, 0]), "clean": 0, "flagged": [],
                                              "missed": []})
        s = score(probe)
        if probe["family"] == "clean":
            lang["clean"] += 1
            if s.value < 0:
                lang["flagged"].append((probe["id"], s.reasons))
        else:
            tally = lang["families"][probe["family"]]
            tally[1] += 1
            if s.value < 0:
                tally[0] += 1
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
    args = parser.parse_args(argv)
    for name, lang in measure(args.path).items():
        fams = ", ".join(f"{f} {c}/{n}" for f, (c, n) in sorted(lang["families"].items()))
        print(f"{name}: recall {lang['recall']:.0%} ({fams}); false positives {len(lang['flagged'])}/{lang['clean']} "
              f"clean ({lang['false_positives_per_20']:.1f} per 20)")
        if args.misses:
            print("  missed:", " ".join(lang["missed"]))
            for pid, reasons in lang["flagged"]:
                print("  flagged:", pid, list(reasons))
    return 0


if __name__ == "__main__":
    sys.exit(main())
