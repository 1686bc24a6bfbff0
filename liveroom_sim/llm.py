"""One place that builds OpenAI-compatible clients (vLLM, SGLang, OpenAI).

Options follow the openai client: ``base_url`` and ``api_key`` default to the standard
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` variables. Keys never appear in reprs, logs
or errors that LiveRoom writes.
"""

from __future__ import annotations

import contextlib
import os
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
        the running event loop (async connection pools belong to one loop) and closed
        when that loop shuts down (``asyncio.run`` and Ray actors do that).

        It sends through the client's aiohttp transport (``openai.DefaultAioHttpClient``):
        with hundreds of requests in flight, httpx's connection pool cost about 2 ms of
        CPU per request here, aiohttp's about 0.3 ms.
        """
        import asyncio

        import openai

        loop = asyncio.get_running_loop()
        if loop not in _ASYNC_CLIENTS:
            clients: dict = {}
            closer = _close_at_shutdown(loop, clients)
            with contextlib.suppress(StopIteration):  # run it to its yield: the loop now finalises it
                closer.__anext__().send(None)
            _ASYNC_CLIENTS[loop] = (clients, closer)
        clients = _ASYNC_CLIENTS[loop][0]
        key = (self, self.resolved_base_url(), self._key())
        if key not in clients:
            clients[key] = openai.AsyncOpenAI(base_url=key[1], api_key=key[2], timeout=self.timeout_s,
                                              max_retries=self.max_retries, http_client=openai.DefaultAioHttpClient())
        return clients[key]


async def _close_at_shutdown(loop, clients: dict):
    """An async generator the event loop finalises in ``shutdown_asyncgens()``, which
    ``asyncio.run`` calls as it ends: a place to close the loop's clients without
    asking every caller to."""
    try:
        yield
    finally:
        _ASYNC_CLIENTS.pop(loop, None)
        for client in clients.values():
            await client.close()


_CLIENTS: dict[tuple, object] = {}
_ASYNC_CLIENTS: dict = {}  # event loop -> ({key: client}, its closer)


def redact(text: str, endpoint: Endpoint | None = None) -> str:
    """``text`` with any API key in use replaced by ``***``."""
    keys = {os.environ.get("OPENAI_API_KEY")}
    if endpoint is not None:
        keys.add(endpoint.api_key)
    for key in keys:
        if key and len(key) >= 6:
            text = text.replace(key, "***")
    return text
