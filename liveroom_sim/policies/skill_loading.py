"""Skills on demand for the built-in avatars: which skills the harness lists now (read
from the system prompt, as an LLM would), which were loaded this exchange, and the
loading calls an action needs first. No skill name is known in advance: names, the
skill tool's name and its argument come from what the harness states now, so this works
under any Harness-State Augmentation."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from liveroom_sim.harness.prompt import SKILL_LIST_INTRO, SKILL_TYPE_LABELS
from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.policies.reading import CLOCK, language_of, params_of, system_text
from liveroom_sim.world.phrasebook import Phrasebook

#: The note of a tool turn that only loads skills (the next turn decides afresh).
LOADING = "loading skills"
_AFTER_SALES = {"order_status", "refund", "damaged"}
_SELLING = ("price", "promotion", "stock")


@lru_cache(maxsize=4)
def _patterns(language: str) -> tuple[re.Pattern, re.Pattern, dict[str, str]]:
    intro = re.escape(SKILL_LIST_INTRO[language]).replace(re.escape("{tool}"), r"(\S+)")
    labels = {label: kind for kind, label in SKILL_TYPE_LABELS[language].items()}
    listed = re.compile(r"^- (\S+) \[(" + "|".join(map(re.escape, labels)) + r")\]: (.*)$", re.M)
    return re.compile(intro), listed, labels


def listed_skills(info: dict) -> tuple[dict, list[tuple[str, str, str]]] | None:
    """``(the skill tool's schema, [(name, type, description)])`` when the harness has
    skills on demand, else ``None``."""
    messages = info.get("messages") or ()
    if not messages:
        return None
    system = system_text(messages)
    intro, listed, labels = _patterns(language_of(info))
    found = intro.search(system)
    if not found:
        return None
    name = found.group(1).rstrip("。.,，")
    tool = next((t["function"] for t in info.get("tools", ()) if t["function"]["name"] == name), None)
    if tool is None or not params_of(tool):
        return None
    return tool, [(n, labels[t], d) for n, t, d in listed.findall(system)]


def _loading_note(messages: list[dict]) -> bool:
    """Whether the tool results at the end answer a turn that only loaded skills."""
    i = len(messages) - 1
    while i > 0 and messages[i]["role"] == "tool":
        i -= 1
    return messages[i]["role"] == "assistant" and (messages[i].get("content") or "").startswith(LOADING)


def _loaded(messages: list[dict], tool: str) -> set[str]:
    """Skills done with since the latest room update: loaded, denied, or asked for twice
    (a load that failed twice is not asked again: the host then replies without it)."""
    start = max((i for i, m in enumerate(messages) if m["role"] == "user" and CLOCK.match(m.get("content") or "")),
                default=0)
    asked: dict[str, str] = {}  # call id -> skill name
    tries: dict[str, int] = {}
    done: set[str] = set()
    for m in messages[start:]:
        if m["role"] == "assistant":
            for c in m.get("tool_calls") or ():
                if c["function"]["name"] != tool:
                    continue
                try:
                    args = json.loads(c["function"]["arguments"])
                except (TypeError, ValueError):
                    continue
                for v in args.values() if isinstance(args, dict) else ():
                    if isinstance(v, str):
                        asked[c.get("id")] = v
                        tries[v] = tries.get(v, 0) + 1
        elif m["role"] == "tool" and m.get("tool_call_id") in asked:
            try:
                result = json.loads(m.get("content") or "")
            except (TypeError, ValueError):
                continue  # unreadable (a fault): asked again once
            if isinstance(result, dict) and ("instructions" in result or "timeout" not in str(result.get("error", ""))):
                done.add(asked[m["tool_call_id"]])  # loaded, denied, or no such skill: do not ask again
    return done | {n for n, k in tries.items() if k >= 2}


def _needed(intents: set[str], listed: list[tuple[str, str, str]], book: Phrasebook) -> list[str]:
    """The listed skills a situation of ``intents`` needs: every reply skill; the
    compliance skills for a refusal; the after-sales skills for an order problem; the
    strategy skills whose description is about prices and deals, when the request (or
    the pitch) is."""
    selling = [c.lower() for i in _SELLING for c in book.cues.get(i, ())]
    out = []
    for name, kind, description in listed:
        low = description.lower()
        if (kind == "reply" or (kind == "compliance" and "refuse" in intents)
                or (kind == "after-sales" and intents & _AFTER_SALES)
                or (kind == "strategy" and intents & {*_SELLING, "pitch"} and any(c in low for c in selling))):
            out.append(name)
    return out


def _with_skills(action: str, info: dict, tool: dict, listed: list, book: Phrasebook) -> str:
    """``action`` with the loading of the skills it needs and has not loaded this
    exchange: added to its tool turn, or a loading turn of its own before a reply."""
    messages = info["messages"]
    turn = None
    if action.lstrip().startswith("{"):
        try:
            turn = json.loads(action)
        except ValueError:
            turn = None
    intents: set[str] = set()
    if isinstance(turn, dict) and turn.get("tool_calls"):
        parts = [p.strip() for p in ((turn.get("content") or "") + "||").split("|")]
        intents = set(parts[1].split("+"))
        if parts[0] in ("serving -", "serving"):
            intents.add("pitch")  # nobody waits: presenting the featured product
    elif any(line.lower() in action.lower() for line in host_lines(language_of(info)).lines["refuse"]):
        intents.add("refuse")  # a refusal said at once (the product's disclosures known) needs the rules too
    missing = [n for n in _needed(intents, listed, book) if n not in _loaded(messages, tool["name"])]
    if not missing:
        return action
    field = params_of(tool)[0]
    calls = [{"id": f"skill_{i}", "type": "function",
              "function": {"name": tool["name"], "arguments": json.dumps({field: n}, ensure_ascii=False)}}
             for i, n in enumerate(missing)]
    if isinstance(turn, dict) and turn.get("tool_calls"):
        return json.dumps({**turn, "tool_calls": [*calls, *turn["tool_calls"]]}, ensure_ascii=False)
    return json.dumps({"content": LOADING, "tool_calls": calls}, ensure_ascii=False)
