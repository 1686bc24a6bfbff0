"""One place that builds OpenAI-compatible clients (vLLM, SGLang, OpenAI).

Options follow the openai client: ``base_url`` and ``api_key`` default to the standard
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` variables. Keys never appear in reprs, logs
or errors that LiveRoom writes.
"""

from __future__ import annotations

import os
import weakref
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Endpoint:
    """Where a model is served and how to call it (serialisable; holds no client)."""

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    max_retries: int = 2

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL")

    def _key(self) -> str:
        # Local servers (vLLM, SGLang, the test server) accept any key.
        return self.api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"

    def client(self):
        """The process's synchronous ``openai.OpenAI`` client for this endpoint (shared:
        one connection pool however many episodes use it)."""
        import openai

        key = (self, self.resolved_base_url(), self._key())
        if key not in _CLIENTS:
            _CLIENTS[key] = openai.OpenAI(base_url=key[1], api_key=key[2], timeout=self.timeout_s,
                                          max_retries=self.max_retries)
        return _CLIENTS[key]

    def async_client(self):
        """An ``openai.AsyncOpenAI`` client for this endpoint, shared by the episodes of
        the running event loop (async connection pools belong to one loop)."""
        import asyncio

        import openai

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        key = (self, self.resolved_base_url(), self._key(), id(loop))
        entry = _ASYNC_CLIENTS.get(key)
        if entry is None or entry[0]() is not loop:
            client = openai.AsyncOpenAI(base_url=key[1], api_key=key[2], timeout=self.timeout_s,
                                        max_retries=self.max_retries)
            entry = _ASYNC_CLIENTS[key] = (weakref.ref(loop) if loop else (lambda: None), client)
        return entry[1]


_CLIENTS: dict[tuple, object] = {}
_ASYNC_CLIENTS: dict[tuple, tuple] = {}


def redact(text: str, endpoint: Endpoint | None = None) -> str:
    """``text`` with any API key in use replaced by ``***``."""
    keys = {os.environ.get("OPENAI_API_KEY")}
    if endpoint is not None:
        keys.add(endpoint.api_key)
    for key in keys:
        if key and len(key) >= 6:
            text = text.replace(key, "***")
    return text
