"""LLM-phrased viewers: the simulator decides what a viewer wants, an LLM words it.

The intent, the product and the facts asked about are drawn by the simulator (so the
ground truth stays verifiable); the template's wording is the draft the model rewrites
in the persona's voice, given the product on stage and the recent chat. A failed call,
or an answer that is empty, too long or drops the product's name, falls back to the
template for that message, and the failure is counted.
"""

from __future__ import annotations

from liveroom_sim.llm.client import Endpoint

_SYSTEM = {
    "en": "You write one message in the chat of a live-shopping stream, as the viewer described. "
          "Reply with the message only: one short line, casual chat style, no quotes.",
    "zh": "你在直播间弹幕里以下面这位观众的身份发一条消息。只输出这条弹幕：一行、口语化、简短，不要引号。",
}
_USER = {
    "en": "Viewer: {persona}\nProduct on stage: {featured}\nRecent chat:\n{recent}\n\n"
          "Rewrite this draft in the viewer's own words, keeping its meaning{keep}:\n{draft}",
    "zh": "观众：{persona}\n台上商品：{featured}\n最近弹幕：\n{recent}\n\n用这位观众自己的话改写下面这条弹幕，意思不变{keep}：\n{draft}",
}
_KEEP = {"en": " and the words \"{name}\"", "zh": "，保留“{name}”这几个字"}


class ViewerPhraser:
    """Rewords viewer messages through an OpenAI-compatible endpoint.

    Args:
        endpoint: The model that phrases.
        language: ``en`` or ``zh``.
        personas: Persona names to phrase (empty: all).
        max_chars: Longer answers are rejected (the template is used).

    Attributes:
        calls / failures: Counters, reported in the room's metrics.
    """

    def __init__(self, endpoint: Endpoint, language: str, personas: tuple[str, ...] = (), max_chars: int = 200):
        self.endpoint, self.language, self.personas, self.max_chars = endpoint, language, set(personas), max_chars
        self.calls = self.failures = 0

    def applies(self, persona_name: str) -> bool:
        return not self.personas or persona_name in self.personas

    def phrase(self, persona, draft: str, keep: str | None, featured: str, recent: list[str], seed: int) -> str | None:
        """The reworded message, or ``None`` (use the draft) when the model fails."""
        lang = self.language if self.language in _SYSTEM else "en"
        user = _USER[lang].format(
            persona=persona.description.strip(), featured=featured, recent="\n".join(recent[-5:]) or "-",
            draft=draft, keep=_KEEP[lang].format(name=keep) if keep else "")
        self.calls += 1
        try:
            response = self.endpoint.client().chat.completions.create(
                model=self.endpoint.model, seed=seed, temperature=0.8, max_tokens=80,
                messages=[{"role": "system", "content": _SYSTEM[lang]}, {"role": "user", "content": user}])
            text = " ".join((response.choices[0].message.content or "").split()).strip().strip("\"“”")
        except Exception:  # any endpoint failure: the template stands
            self.failures += 1
            return None
        if not text or len(text) > self.max_chars or (keep and keep.lower() not in text.lower()):
            self.failures += 1
            return None
        return text
