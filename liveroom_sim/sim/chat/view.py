"""The chat view: what the policy is shown of the room, and the trajectory it leaves.

The view owns the chat history (a window of the last ``stream.history_turns`` exchanges,
each a room update and what followed it), the ops notes waiting for the next update, the
system prompt as of now and the tool schemas; from them it renders the OpenAI messages,
the observation text and, when the room records, the whole transcript. The room tells it
when an exchange opens and what each turn added; the view reads the crowd and the market
(the episode's own) for the update's text and the prompt.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from liveroom_sim.harness.core import Harness
from liveroom_sim.sim.chat.history import Block
from liveroom_sim.sim.chat.prompts import SystemPrompts
from liveroom_sim.sim.crowd import Crowd
from liveroom_sim.sim.hooks import check_input
from liveroom_sim.world.market import Market


class ChatView:
    """The chat history, the system prompt and the tools the policy is shown.

    Args:
        crowd: The room's crowd (new chat and waiting questions go into each update).
        market: The room's market (the featured product; the prompt's rules and style).
        room_info: The room's ``name`` and ``host_name`` (the prompt names them).
        language: The room's language.
        history_turns: How many exchanges the policy is shown.
        record: Keep the whole trajectory (see :meth:`transcript`), not only the window.
    """

    def __init__(self, crowd: Crowd, market: Market, room_info: dict, language: str, history_turns: int,
                 record: bool = False):
        self._crowd, self._market = crowd, market
        self._record: list[dict] | None = [] if record else None
        self._history: deque[Block] = deque(maxlen=history_turns)
        self._notes: list[str] = []  # ops notes for the next update
        self._seen_chat = 0  # chat messages already shown in an update
        self._prompts = SystemPrompts(room_info, language)
        self._closed: tuple = (None, (), "")  # see _closed_blocks
        self._head: tuple = (None, "")  # (system prompt, its observation heading)

    # ------------------------------------------------------------------ the room writes
    def note(self, text: str) -> None:
        """An ops note (a fired campaign event) for the next room update."""
        self._notes.append(text)

    def open_exchange(self, clock: float, harness: Harness, inject_cues: tuple[str, ...]) -> tuple[str, ...]:
        """Start a new exchange with the room update (new chat, notes, waiting questions),
        after the harness's ``input_check`` hooks read it; returns the hooks that fired
        (``"type:action"``)."""
        crowd = self._crowd
        new = crowd.chat[self._seen_chat:]
        self._seen_chat = len(crowd.chat)
        update = room_update(clock, self._market, crowd, harness, self._notes, new)
        fired: tuple[str, ...] = ()
        if any(h.type == "input_check" for h in harness.hooks):  # it reads what the update shows
            shown = [*new[-12:], *crowd.waiting()]  # (waiting: read by the update just now)
            update, hooks = check_input(update, shown, harness, inject_cues)
            fired = tuple(f"{h.type}:{h.action}" for h, _ in hooks)
        self._notes = []
        block = Block(record=self._record)
        block.add({"role": "user", "content": update})
        self._history.append(block)
        return fired

    def add(self, *messages: dict) -> None:
        """Messages of the current exchange (fresh dicts: the view takes them over)."""
        self._history[-1].add(*messages)

    # ------------------------------------------------------------------ the policy reads
    def system_prompt(self, harness: Harness) -> str:
        """The system prompt under ``harness`` as the room is now."""
        return self._prompts.text(harness, self._market, self._crowd)

    def tools(self, harness: Harness) -> list[dict]:
        """``harness``'s tool schemas (OpenAI format); shared, read-only."""
        return harness.tool_schemas

    def messages(self, harness: Harness) -> list[dict]:
        """The OpenAI chat messages an LLM would be sent now (see ``Room.messages``)."""
        out = [{"role": "system", "content": self.system_prompt(harness)}]
        for block in self._history:
            out.extend(block.public)
        return out

    def messages_now(self, harness: Harness) -> Callable[[], list[dict]]:
        """A function that returns :meth:`messages` as they are now, whenever it is
        called (for an ``info`` built on first read: the room moves on meanwhile)."""
        system = self.system_prompt(harness)
        closed, _ = self._closed_blocks()
        public = self._history[-1].public
        n = len(public)

        def messages() -> list[dict]:
            out = [{"role": "system", "content": system}]
            for done in closed:
                out.extend(done)
            out.extend(public if len(public) == n else public[:n])  # the last block only grows
            return out

        return messages

    def observation(self, harness: Harness) -> str:
        """The next-turn prompt as text: :meth:`messages` flattened."""
        closed, closed_text = self._closed_blocks()
        prompt = self.system_prompt(harness)
        if self._head[0] is not prompt:  # (the prompt is kept until what it shows changes)
            self._head = (prompt, "system: " + prompt)
        head = self._head[1]
        if closed:
            return "\n\n".join((head, closed_text, self._history[-1].text()))
        return head + "\n\n" + self._history[-1].text()

    def transcript(self, harness: Harness) -> list[dict]:
        """The whole trajectory in OpenAI format (system prompt as at the end) when the
        view records; else the recent window."""
        if self._record is None:
            return self.messages(harness)
        return [{"role": "system", "content": self.system_prompt(harness)}, *(dict(m) for m in self._record)]

    def _closed_blocks(self) -> tuple[tuple[list[dict], ...], str]:
        """The exchanges before the current one: their public messages and their text
        joined. Only the last block of the history takes messages, so the earlier ones
        are fixed until the next exchange opens: gathered once per exchange (keyed on the
        last block's identity), not on every step."""
        last = self._history[-1]
        if self._closed[0] is not last:
            done = list(self._history)[:-1]
            self._closed = (last, tuple(b.public for b in done), "\n\n".join(b.text() for b in done))
        return self._closed[1], self._closed[2]


def room_update(clock: float, market: Market, crowd: Crowd, harness: Harness, notes: list[str], new_chat: list) -> str:
    """The text of a room update: clock, featured product, ops notes, new chat and the
    questions still waiting (at most 8, oldest first)."""
    featured = market.catalog.by_id[market.featured]
    mm, ss = divmod(int(clock), 60)
    lines = [f"[{mm:02d}:{ss:02d}] featured: {featured.name} ({featured.id}) | viewers: {len(crowd.present)}"]
    lines += [f"ops: {n}" for n in notes]
    if new_chat:
        lines.append("chat:")
        lines += [f"{m.viewer.name}: {m.text}" for m in new_chat[-12:]]
    waiting = crowd.waiting()[:8]
    if waiting:
        lines.append("waiting for an answer:")
        lines += [f"- {harness.constraints.mention_format.format(name=m.viewer.name)} "
                  f"({clock - m.at:.0f}s): {m.text}" for m in waiting]
    return "\n".join(lines)
