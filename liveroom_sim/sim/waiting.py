"""The messages waiting for an answer, kept so that no step scans them all.

A room of hundreds has hundreds of messages waiting, and the crowd posts, merges,
answers and expires them every step. :class:`Waiting` holds them in the order they were
posted (a dict under increasing numbers: a merged request keeps its number, so its
place), with each viewer's own numbers, the count of questions of fact and a heap of
deadlines. Finding a viewer's latest request, answering one, counting the questions and
finding the messages due then cost what they cost in a room of ten.
"""

from __future__ import annotations

import heapq

from liveroom_sim.sim.viewers import ChatMessage


class Waiting:
    """Waiting messages in posting order (see the module docstring).

    Messages are found by number (``add`` hands it out) or by identity (:meth:`number_of`);
    a viewer is known by its name (unique in a room). A message's deadline is set through
    :meth:`set_deadline` once it waits, so the heap knows it.
    """

    def __init__(self):
        self._items: dict[int, ChatMessage] = {}
        self._mine: dict[str, list[int]] = {}  # viewer name -> numbers of its messages, in order
        # (deadline, number) of each message; an entry whose deadline is no longer the
        # message's (or whose message went) is skipped when it comes up
        self._due: list[tuple[float, int]] = []
        self._next = 0
        self._list: list[ChatMessage] | None = []
        self.facts = 0  # questions of fact among them

    def __len__(self) -> int:
        return len(self._items)

    def messages(self) -> list[ChatMessage]:
        """The messages, oldest first (a list made again only after a change: read-only)."""
        if self._list is None:
            self._list = list(self._items.values())
        return self._list

    def get(self, number: int) -> ChatMessage | None:
        return self._items.get(number)

    def numbers(self, name: str) -> list[int]:
        """The numbers of viewer ``name``'s messages, oldest first (read-only)."""
        return self._mine.get(name, _NONE)

    def number_of(self, msg: ChatMessage) -> int | None:
        """``msg``'s number (the very object, not an equal one), or None."""
        for n in self._mine.get(msg.viewer.name, ()):
            if self._items[n] is msg:
                return n
        return None

    def add(self, msg: ChatMessage) -> int:
        n = self._next
        self._next += 1
        self._items[n] = msg
        mine = self._mine.get(msg.viewer.name)
        if mine is None:
            self._mine[msg.viewer.name] = [n]
        else:
            mine.append(n)
        heapq.heappush(self._due, (msg.deadline, n))
        self.facts += msg.is_fact_question
        self._list = None
        return n

    def replace(self, number: int, msg: ChatMessage) -> None:
        """Put ``msg`` (of the same viewer) in the place of message ``number``."""
        old = self._items[number]
        self._items[number] = msg
        self.facts += msg.is_fact_question - old.is_fact_question
        if msg.deadline != old.deadline:
            heapq.heappush(self._due, (msg.deadline, number))
        self._list = None

    def drop(self, number: int) -> None:
        msg = self._items.pop(number)
        mine = self._mine[msg.viewer.name]
        mine.remove(number)
        if not mine:
            del self._mine[msg.viewer.name]
        self.facts -= msg.is_fact_question
        self._list = None

    def set_deadline(self, number: int, deadline: float) -> None:
        self._items[number].deadline = deadline
        heapq.heappush(self._due, (deadline, number))

    def any_due(self, now: float) -> bool:
        """Whether :meth:`due` may find a message (it finds none when this is False)."""
        return bool(self._due) and self._due[0][0] <= now

    def due(self, now: float) -> set[int]:
        """The numbers of the messages whose deadline is ``now`` or earlier (their heap
        entries are taken: each must get a new deadline or go)."""
        found = set()
        heap, items = self._due, self._items
        while heap and heap[0][0] <= now:
            deadline, n = heapq.heappop(heap)
            msg = items.get(n)
            if msg is not None and msg.deadline == deadline:
                found.add(n)
        return found


_NONE: list[int] = []
