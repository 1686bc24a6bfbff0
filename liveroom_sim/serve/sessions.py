"""The served sessions: one room each, found by id, counted for ``/health`` and ``/metrics``.

OpenEnv's server owns a session's lifetime (it opens one per WebSocket, enforces
``--max-sessions`` and expires idle ones); this registry is what LiveRoom adds: an id the
client is told at reset (its MCP tools live under it), and the operator's numbers.
Steps run in the server's worker threads, so the counters take a lock.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from typing import Any

#: Seconds of history behind ``steps_per_s``.
RATE_WINDOW_S = 10.0


class Sessions:
    """The rooms being served, and the server's counters.

    Args:
        max_sessions: How many sessions may be open at once (reported; OpenEnv enforces it).
        idle_timeout_s: Seconds without a request after which a session expires (``None``: never).
    """

    def __init__(self, max_sessions: int, idle_timeout_s: float | None):
        self.max_sessions = max_sessions
        self.idle_timeout_s = idle_timeout_s
        self.started = time.time()
        self._rooms: dict[str, Any] = {}  # session id -> serve.room.RoomEnvironment
        self._lock = threading.Lock()
        self._recent: deque[float] = deque()
        self.counts = {"sessions_opened": 0, "sessions_closed": 0, "sessions_expired": 0,
                       "episodes": 0, "steps": 0, "tool_calls": 0, "errors": 0, "crashes": 0}

    @staticmethod
    def new_id() -> str:
        """A fresh session id (unguessable: it addresses the session's MCP tools)."""
        return uuid.uuid4().hex

    def open(self, session_id: str, room) -> None:
        """Register a room under its session id (at its first reset)."""
        with self._lock:
            self._rooms[session_id] = room
            self.counts["sessions_opened"] += 1

    def close(self, session_id: str, *, expired: bool = False) -> None:
        """Forget a room (its WebSocket closed, or it expired)."""
        with self._lock:
            if self._rooms.pop(session_id, None) is not None:
                self.counts["sessions_closed"] += 1
                self.counts["sessions_expired"] += int(expired)

    def get(self, session_id: str):
        return self._rooms.get(session_id)

    def count(self, key: str, n: int = 1) -> None:
        """Add ``n`` to a counter (``steps`` also feeds ``steps_per_s``)."""
        with self._lock:
            self.counts[key] += n
            if key == "steps":
                now = time.monotonic()
                self._recent.append(now)
                while self._recent and self._recent[0] < now - RATE_WINDOW_S:
                    self._recent.popleft()

    def metrics(self) -> dict[str, Any]:
        """The operator's numbers: sessions open, steps, steps per second, errors."""
        with self._lock:
            now = time.monotonic()
            while self._recent and self._recent[0] < now - RATE_WINDOW_S:
                self._recent.popleft()
            window = min(RATE_WINDOW_S, max(time.time() - self.started, 1e-9))
            return {"sessions": len(self._rooms), "max_sessions": self.max_sessions,
                    "idle_timeout_s": self.idle_timeout_s, **self.counts,
                    "steps_per_s": round(len(self._recent) / window, 2),
                    "uptime_s": round(time.time() - self.started, 1)}
