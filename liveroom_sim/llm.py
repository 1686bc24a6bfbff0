"""One place that builds OpenAI-compatible clients (vLLM, SGLang, OpenAI).

Options follow the openai client: ``base_url`` and ``api_key`` default to the standard
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` variables. Keys never appear in reprs, logs
or errors that LiveRoom writes.
"""

from __future__ import annotations

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
        """A synchronous ``openai.OpenAI`` client for this endpoint."""
        import openai

        return openai.OpenAI(base_url=self.resolved_base_url(), api_key=self._key(),
                             timeout=self.timeout_s, max_retries=self.max_retries)

    def async_client(self):
        """An ``openai.AsyncOpenAI`` client for this endpoint."""
        import openai

        return openai.AsyncOpenAI(base_url=self.resolved_base_url(), api_key=self._key(),
                                  timeout=self.timeout_s, max_retries=self.max_retries)


def redact(text: str, endpoint: Endpoint | None = None) -> str:
    """``text`` with any API key in use replaced by ``***``."""
    keys = {os.environ.get("OPENAI_API_KEY")}
    if endpoint is not None:
        keys.add(endpoint.api_key)
    for key in keys:
        if key and len(key) >= 6:
            text = text.replace(key, "***")
    return text
