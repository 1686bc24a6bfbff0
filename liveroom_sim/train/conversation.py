"""One episode as one multi-turn SFT conversation, built step by step from what the
policy was shown (``info["messages"]``) and what each step did (``info["turn"]``).

The conversation holds every message once, in order: the system prompt (again, as a
``system`` message, whenever what it shows changes: the featured product, rules, style,
skills), the room updates, the assistant's tool calls and their results, its replies and
the hooks' retry messages. Assistant messages carry ``weight`` (1: trained on, 0:
context only), as in the OpenAI fine-tuning chat format.

A reply a hook blocked and sent back for a retry is either dropped with the hook's
message (the conversation keeps only the final behaviour), or kept with weight 0 and
the hook's message, so the student sees the correction (the full retry); which, is
drawn per retry by ``keep_full_retry``.
"""

from __future__ import annotations

from collections.abc import Callable


class Conversation:
    """The conversation of one episode variant.

    Args:
        keep_full_retry: Called once per hook retry: ``True`` keeps the blocked reply
            (weight 0) and the hook's message, ``False`` drops both.
        min_reward: A reply whose turn reward is below this gets weight 0.
    """

    def __init__(self, keep_full_retry: Callable[[], bool], min_reward: float = 0.0):
        self.messages: list[dict] = []
        self.keep_full_retry = keep_full_retry
        self.min_reward = min_reward
        self.replies = self.trained = self.untrained = self.retries = self.retries_full = 0
        self._seen: set[int] = set()  # ids of the room's messages already taken (the room shares them)
        self._held: list[object] = []  # keeps the taken messages alive, so their ids stay unique
        self._system: str | None = None
        self._exchange_failed = False

    def start(self, info: dict) -> None:
        """Take what the policy is shown at reset."""
        self._take(info, None, 0.0)

    def step(self, info: dict, reward: float) -> None:
        """Take what one step added (its assistant message, tool results, hook message,
        the next room update) and what the policy is shown next."""
        self._take(info, info["turn"], reward)

    @property
    def assistant_turns(self) -> int:
        return self.trained + self.untrained

    def _take(self, info: dict, turn: dict | None, reward: float) -> None:
        shown = info["messages"]
        new = [m for m in shown[1:] if id(m) not in self._seen]
        self._seen.update(id(m) for m in new)
        self._held.extend(new)
        new = [dict(m) for m in new]
        blocked_retry = False
        if turn is not None:
            acted = next((m for m in new if m["role"] == "assistant"), None)
            if acted is not None:
                blocked_retry = self._weigh(acted, turn, reward, info)
        if blocked_retry:
            self.retries += 1
            if self.keep_full_retry():
                self.retries_full += 1
            else:
                new = [m for m in new if not (m is acted or _is_hook(m))]
                self.untrained -= 1  # the blocked reply is gone, not kept as context
        system = shown[0]["content"]
        if system != self._system:
            self._system = system
            # Shown before the next action: before the room update that opens the next
            # exchange, if this step opened one; else last.
            at = next((i for i, m in enumerate(new) if m["role"] == "user" and not _is_hook(m)), len(new))
            new.insert(at, {"role": "system", "content": system})
        if any(m["role"] == "user" and not _is_hook(m) for m in new):
            self._exchange_failed = False
        self.messages.extend(new)

    def _weigh(self, acted: dict, turn: dict, reward: float, info: dict) -> bool:
        """Set the action's weight; returns whether it was a reply a hook sent back."""
        if turn["kind"] == "tool":
            # The policy's own errors (bad calls) and redundant calls are not learned;
            # a tool fault is the service's, and retrying it is good behaviour.
            bad = bool(turn["tool_errors"]) or info["reward_breakdown"].get("tools", 0.0) < 0
            self._exchange_failed |= bool(turn["tool_errors"])
            self._mark(acted, not bad)
            return False
        self.replies += 1
        good = turn["delivered"] and reward >= self.min_reward and not self._exchange_failed
        self._mark(acted, good)
        return not turn["delivered"] and any(h.endswith(":block_retry") for h in turn["hooks"]) \
            and _is_hook(info["messages"][-1])

    def _mark(self, message: dict, trained: bool) -> None:
        message["weight"] = int(trained)
        if trained:
            self.trained += 1
        else:
            self.untrained += 1


def _is_hook(message: dict) -> bool:
    return message["role"] == "user" and (message.get("content") or "").startswith("[hook]")
