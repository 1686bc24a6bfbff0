"""An avatar driven by any OpenAI-compatible endpoint (vLLM, SGLang, OpenAI).

It sends ``info["messages"]`` and ``info["tools"]`` and turns the response into the
env's action: tool calls become a JSON tool turn, content a reply. The env runs the
tools and calls the avatar again, until it replies. Every call's tokens and time are
recorded; when the endpoint returns the token ids and logprobs it sampled (vLLM with
``tokens=True``, see :mod:`liveroom_sim.llm.tokens`), each turn's tokens go into
:attr:`OpenAIAvatar.token_log`. Endpoint failures that survive the client's retries raise
:class:`EndpointError` (with any API key redacted), which runners record as data.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from liveroom_sim.llm.client import _LONE_SURROGATE, Endpoint, EndpointError, endpoint_failure
from liveroom_sim.llm.tokens import TOKEN_REQUEST, TokenLog, turn_tokens

__all__ = ["Accounting", "EndpointError", "OpenAIAvatar"]


@dataclass
class Accounting:
    """Per-policy totals: calls, tokens, wall time and errors."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    errors: int = 0
    last_error: str | None = None  # what the latest failed call came to (redacted), for the run's one-line reason
    invalid_code_points: int = 0  # lone surrogates in what the model said (the room hears U+FFFD)

    def as_dict(self) -> dict:
        out = {"calls": self.calls, "prompt_tokens": self.prompt_tokens,
               "completion_tokens": self.completion_tokens, "seconds": round(self.seconds, 4), "errors": self.errors}
        if self.invalid_code_points:
            out["invalid_code_points"] = self.invalid_code_points
        return {**out, "last_error": self.last_error} if self.last_error else out


class OpenAIAvatar:
    """A policy ``(observation, info) -> action`` backed by a chat-completions endpoint.

    Args:
        endpoint: Where the model is served (``Endpoint(model, base_url, api_key)``);
            ``base_url``/``api_key`` default to ``OPENAI_BASE_URL``/``OPENAI_API_KEY``.
        temperature, top_p, max_tokens, seed: Sampling parameters (sent when set).
        extra_body: Server-specific options (e.g. vLLM's ``top_k``), sent as is.
        max_output_chars: Longer outputs are cut (the env penalises long replies anyway).
        tokens: Ask the endpoint for the token ids and logprobs it samples
            (:data:`~liveroom_sim.llm.tokens.TOKEN_REQUEST`, vLLM's fields). Whenever a
            response carries them, with this flag or not, they are kept in
            :attr:`token_log`.

    Attributes:
        token_log: This episode's turns as tokens (a :class:`~liveroom_sim.llm.tokens.TokenLog`;
            emptied by :meth:`begin_episode`). Only single-choice calls are logged.

    Example:
        >>> from liveroom_sim.testing import OpenAICompatServer, scripted_responder
        >>> with OpenAICompatServer(scripted_responder(["@mia hi!"])) as srv:
        ...     avatar = OpenAIAvatar(Endpoint("m", srv.base_url))
        ...     avatar("", {"messages": [{"role": "user", "content": "hi"}], "tools": []})
        '@mia hi!'
    """

    def __init__(self, endpoint: Endpoint, *, temperature: float | None = None, top_p: float | None = None,
                 max_tokens: int | None = None, seed: int | None = None, extra_body: dict | None = None,
                 max_output_chars: int = 8000, tokens: bool = False):
        self.endpoint = endpoint
        if tokens:
            extra_body = {**TOKEN_REQUEST, **(extra_body or {})}
        self.params = {k: v for k, v in {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens,
                                          "seed": seed, "extra_body": extra_body}.items() if v is not None}
        self.token_log = TokenLog()
        self.max_output_chars = max_output_chars
        self.accounting = Accounting()

    # ------------------------------------------------------------------ calling
    def begin_episode(self, seed: int) -> None:
        """A new episode starts: forget the previous one's tokens."""
        self.token_log.clear()

    def __call__(self, observation: str, info: dict) -> str:
        return self.sample(observation, info, n=1)[0]

    def sample(self, observation: str, info: dict, n: int = 1) -> list[str]:
        """``n`` actions from one request (``n`` samples, e.g. for a GRPO group)."""
        start = time.perf_counter()
        try:
            completion = self.endpoint.complete(self._request(info, n))
        except Exception as exc:  # the client already retried what is retryable
            error = self._failed(exc, start)
        else:
            return self._actions(completion, start)
        raise error  # outside the except block: no unredacted __context__ rides along

    async def asample(self, observation: str, info: dict, n: int = 1) -> list[str]:
        """Async :meth:`sample`, for many episodes in flight in one process."""
        start = time.perf_counter()
        try:
            completion = await self.endpoint.acomplete(self._request(info, n))
        except Exception as exc:
            error = self._failed(exc, start)
        else:
            return self._actions(completion, start)
        raise error  # outside the except block: no unredacted __context__ rides along

    async def acall(self, observation: str, info: dict) -> str:
        return (await self.asample(observation, info, 1))[0]

    # ------------------------------------------------------------------ helpers
    def _request(self, info: dict, n: int) -> dict:
        # The request goes out as plain JSON through the client's post(), and the answer
        # comes back as the raw response, read as JSON: the typed create() walks every
        # message with typing introspection (about 10 ms a call for a live-room prompt)
        # and building the typed completion cost a further 0.2 ms; either would make the
        # client the rollout bottleneck.
        params = dict(self.params)
        request: dict[str, Any] = {"model": self.endpoint.model, "messages": info["messages"],
                                   **params.pop("extra_body", {}), **params}
        if info.get("tools"):
            request["tools"] = info["tools"]
        if n != 1:
            request["n"] = n
        return request

    def _failed(self, exc: Exception, start: float) -> EndpointError:
        self._account(start)
        return self._error(endpoint_failure(exc, self.endpoint))

    def _error(self, error: EndpointError) -> EndpointError:
        self.accounting.errors += 1
        self.accounting.last_error = str(error)[:200]
        return error

    def _account(self, start: float) -> None:
        took = time.perf_counter() - start
        a = self.accounting
        a.calls += 1
        a.seconds += took

    def _actions(self, completion, start: float) -> list[str]:
        self._account(start)
        if not isinstance(completion, dict):
            what = "null" if completion is None else f"a JSON {type(completion).__name__}"
            raise self._error(EndpointError(f"the endpoint answered {what}, not a chat completion"))
        usage = completion.get("usage")
        if isinstance(usage, dict):
            self.accounting.prompt_tokens += _count(usage.get("prompt_tokens"))
            self.accounting.completion_tokens += _count(usage.get("completion_tokens"))
        choices = completion.get("choices")
        if not choices or not isinstance(choices, list):
            raise self._error(EndpointError("the endpoint returned no choices"))
        if len(choices) == 1:  # one entry per step, so that entry i is step i
            self.token_log.add(turn_tokens(completion, choices[0]))
        actions = [self._action(choice.get("message") if isinstance(choice, dict) else None) for choice in choices]
        for action in actions:
            self.accounting.invalid_code_points += len(_LONE_SURROGATE.findall(action))
        return actions

    def _action(self, message) -> str:
        """The env's action for one choice's message: its content, or a JSON tool turn.
        Whatever the model got wrong in it is passed on for the env to judge."""
        if not isinstance(message, dict):
            return ""
        content = message.get("content")
        content = content[: self.max_output_chars] if isinstance(content, str) else ""
        calls = message.get("tool_calls")
        if not calls:
            return content
        return json.dumps({"content": content or None, "tool_calls": calls}, ensure_ascii=False)


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
