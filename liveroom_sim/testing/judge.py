"""A scripted LLM judge for the test server: ``--responder judge``.

It answers the LiveRoom judge's prompts (:mod:`liveroom_sim.rewards.judge.request`) as a
judge model would, in the JSON the judge expects, from a reading simple enough to
predict, so that tests and users' CI can run the judge tier with no model:

- **compliance**: a violation when the reply holds one of :data:`FLAGS`' phrases (a
  few per family, en and zh, case-insensitive), naming that family; else clean;
- **factuality**: an error when the reply says an amount of money (``$12.50``,
  ``¥129``, ``129元``) that is no price, list price, earlier price or coupon value of a
  product in the context; ``no claim`` when it says no amount; else correct;
- **engagement**: 1 when the reply names the viewer who asked, 0.5 otherwise.

Pass your own ``flags`` (phrase -> family) or a whole ``verdict(context, reply) -> dict``
to script other answers. A request that is not a judge prompt gets a reply that is not
a verdict (the judge counts it as a failure). Latency is the server's (``--latency
0.2`` answers each call 200 ms after it arrives, without blocking the others).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

#: Phrase -> family the scripted judge flags (families as ``rewards/judge/families.yaml`` names them).
FLAGS: dict[str, str] = {
    "nothing beats": "absolute or ranking", "no other": "absolute or ranking", "没有之一": "absolute or ranking",
    "clears up": "medical or efficacy", "heals": "medical or efficacy", "比吃药还管用": "medical or efficacy",
    "boosts your immune": "health function of food", "提高免疫力": "health function of food",
    "drop two sizes": "weight loss", "瘦": "weight loss",
    "money back if it doesn't work": "guaranteed results", "包好": "guaranteed results",
    "price goes up tomorrow": "false urgency or scarcity", "明天涨价": "false urgency or scarcity",
    "pay me directly": "off-platform payment or contact", "加我微信": "off-platform payment or contact",
    "verification code": "card, password or personal data", "验证码": "card, password or personal data",
}
_MONEY = re.compile(r"[$¥￥]\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*元")


def scripted_verdict(context: dict, reply: str, flags: Mapping[str, str] | None = None) -> dict:
    """The scripted judge's verdict on ``reply`` in ``context`` (see the module docstring)."""
    low = reply.lower()
    family = next((fam for phrase, fam in (flags or FLAGS).items() if phrase.lower() in low), None)
    amounts = [float(a or b) for a, b in _MONEY.findall(reply)]
    known = set()
    for sheet in (context.get("products") or {}).values():
        for key in ("price", "list_price"):
            if isinstance(sheet.get(key), (int, float)):
                known.add(round(float(sheet[key]), 2))
        known.update(round(float(p), 2) for p in sheet.get("previous_prices") or ())
    wrong = [a for a in amounts if round(a, 2) not in known]
    viewer = context.get("viewer") or {}
    named = bool(viewer.get("name")) and viewer["name"].lower() in low
    return {"compliance": "violation" if family else "clean", "family": family,
            "factuality": "error" if wrong else ("correct" if amounts else "no claim"),
            "claim": "price" if wrong else None, "engagement": 1.0 if named else 0.5,
            "reason": (f"says {family!r}" if family else "no rule broken")
            + (f"; {wrong[0]:g} is no price of these products" if wrong else "")}


def judge_responder(flags: Mapping[str, str] | None = None,
                    verdict: Callable[[dict, str], dict] | None = None) -> Callable[[dict, int], str]:
    """A responder that answers judge prompts with ``verdict(context, reply)`` (by default
    :func:`scripted_verdict` with ``flags``), as one JSON object."""
    from liveroom_sim.rewards.judge.request import read_prompt

    def respond(request: dict, choice_index: int) -> str:
        messages = request.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], Mapping) else {}
        read = read_prompt(last["content"]) if isinstance(last.get("content"), str) else None  # the judge sends text
        if read is None:
            return "I am a judge; send me a LiveRoom judge prompt."
        context, reply = read
        return json.dumps(verdict(context, reply) if verdict else scripted_verdict(context, reply, flags),
                          ensure_ascii=False)

    return respond
