"""Render what the policy sees from the current harness and room state: the system
prompt, the OpenAI tool schemas, and each turn's room update."""

from __future__ import annotations

import json

import numpy as np

from liveroom_sim.harness.core import SKILL_TOOL, Harness
from liveroom_sim.world.market import Market

_LABELS = {
    "en": {"banned": "Banned phrases", "claims": "No {name} claims about", "disclose": "Say {forms} when talking about {when} products",
           "featured": "Featured product now: {name} ({id}). Present it.", "slogan": "Say the slogan: \"{slogan}\"",
           "tone": "Tone: {tone}", "avoid": "Avoid these topics: {topics}", "max": "Keep replies under {n} characters",
           "always": "(always)", "loads": "(loads when the chat mentions: {triggers})", "any": "any",
           "greeting": "Begin every reply with \"{text}\" (after the mention).", "sign_off": "End every reply with \"{text}\".",
           "max_tool_turns": "Make at most {text} tool turns before each reply.",
           "on_demand": "Skills hold instructions you load when you need them: call {tool} with a skill's name. "
                        "Load at least one reply skill before each reply; load the other skills a request needs.",
           "types": {"reply": "reply", "strategy": "strategy", "after-sales": "after-sales", "compliance": "compliance"}},
    "zh": {"banned": "禁用语", "claims": "不得宣称{name}，适用于", "disclose": "讲到{when}商品时要说{forms}",
           "featured": "当前主推：{name}（{id}），请重点介绍。", "slogan": "口播口号：“{slogan}”",
           "tone": "语气：{tone}", "avoid": "避开话题：{topics}", "max": "每条回复不超过{n}个字",
           "always": "（始终加载）", "loads": "（弹幕提到这些词时加载：{triggers}）", "any": "所有",
           "greeting": "每条回复在点名之后先说\"{text}\"。", "sign_off": "每条回复结尾说\"{text}\"。",
           "max_tool_turns": "每次回复前最多调用 {text} 轮工具。",
           "on_demand": "技能是按需加载的说明：用 {tool} 按技能名加载。每次回复前至少加载一个回复技能；请求需要的其他技能也要加载。",
           "types": {"reply": "回复", "strategy": "策略", "after-sales": "售后", "compliance": "合规"},
           "when": {"sponsored": "推广", "health_food": "保健食品", "skincare": "护肤", "apparel": "服饰",
                    "snacks": "食品", "electronics": "数码"}},
}


def tool_schemas(harness: Harness) -> list[dict]:
    """The harness's tools in OpenAI ``tools`` format (:attr:`Harness.tool_schemas`:
    made once per harness state; read-only)."""
    return harness.tool_schemas


def system_prompt(harness: Harness, market: Market, language: str, room: dict, active_skills: frozenset[str]) -> str:
    """The system prompt rendered from the harness's sections in its format."""
    L = _LABELS[language]
    c = harness.constraints
    values = {
        "host_name": room["host_name"],
        "room_name": room["name"],
        "lineup": _in_order(market.catalog.lineup, harness.item_order),
        "rules": _in_order(_rules_text(market.rules, L), harness.item_order),
        "directives": _directives_text(market, L),
        "max_chars": min(c.max_chars, market.style.max_chars or c.max_chars),
        "mention": c.mention_format.format(name="name"),
        "skills": _skills_text(harness, active_skills, L),
        "etiquette": " ".join(L[k].format(text=getattr(c, k)) for k in ("greeting", "sign_off", "max_tool_turns")
                              if getattr(c, k)),
    }
    parts = [(s.name, s.title, s.text.format(**values)) for s in harness.sections]
    if harness.format == "xml":
        return "\n".join(f"<{n}>\n{body}\n</{n}>" for n, _, body in parts)
    if harness.format == "json":
        return json.dumps({n: body for n, _, body in parts}, ensure_ascii=False, indent=1)
    return "\n\n".join(f"## {title}\n{body}" for _, title, body in parts)


def _in_order(lines: str, seed: int | None) -> str:
    """``lines`` (one item a line) in the order ``seed`` draws, or as they are."""
    if seed is None:
        return lines
    items = lines.split("\n")
    return "\n".join(items[i] for i in np.random.default_rng(seed).permutation(len(items)))


def _rules_text(r, L: dict) -> str:
    lines = [f"{L['banned']}: " + ", ".join(f'"{b.phrase}"' for b in r.banned)] if r.banned else []
    for claim in r.claims:
        cats = ", ".join(claim.categories) or L["any"]
        # A family of verbs and objects only ("boost immunity") is shown by them: no rule line ends empty.
        said = ", ".join(claim.patterns[:6]) or " / ".join(claim.verbs[:4]) + " " + " / ".join(claim.objects[:4])
        lines.append(L["claims"].format(name=claim.name) + f" {cats}: " + said.strip())
    for d in r.disclosures:
        when = L.get("when", {}).get(d.when, d.when.replace("_", " "))
        lines.append(L["disclose"].format(forms=" / ".join(f'"{f}"' for f in d.forms), when=when))
    return "\n".join(lines)


def _directives_text(market: Market, L: dict) -> str:
    p = market.catalog.by_id[market.featured]
    s = market.style
    lines = [L["featured"].format(name=p.name, id=p.id)]
    if s.slogan:
        lines.append(L["slogan"].format(slogan=s.slogan))
    if s.tone:
        lines.append(L["tone"].format(tone=s.tone))
    if s.max_chars:
        lines.append(L["max"].format(n=s.max_chars))
    if s.avoid_topics:
        lines.append(L["avoid"].format(topics=", ".join(s.avoid_topics)))
    return "\n".join(lines)


def _skills_text(harness: Harness, active: frozenset[str], L: dict) -> str:
    if harness.skills_on_demand:
        listed = "\n".join(f"- {sk.name} [{L['types'][sk.type]}]: {sk.description}" for sk in harness.skills)
        return L["on_demand"].format(tool=harness.tool_name(SKILL_TOOL)) + "\n" + listed
    out = []
    for sk in harness.skills:
        if sk.when == "always" or sk.name in active:
            out.append(f"### {sk.name} {L['always'] if sk.when == 'always' else ''}\n{sk.instructions}")
        else:
            out.append(f"### {sk.name} " + L["loads"].format(triggers=", ".join(sk.triggers)))
    return "\n\n".join(out)


def active_skills(harness: Harness, chat_text: str) -> frozenset[str]:
    """Triggered skills whose trigger words appear in the (lower-cased) chat."""
    return frozenset(sk.name for sk in harness.skills
                     if sk.when != "always" and any(t.lower() in chat_text for t in sk.triggers))


#: How the prompt labels each skill type, per language (what a policy reads back).
SKILL_TYPE_LABELS = {lang: dict(L["types"]) for lang, L in _LABELS.items()}
#: The sentence that introduces skills on demand (``{tool}``: the skill tool's name now).
SKILL_LIST_INTRO = {lang: L["on_demand"] for lang, L in _LABELS.items()}
