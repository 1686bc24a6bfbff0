"""One place that builds OpenAI-compatible clients (vLLM, SGLang, OpenAI).

Options follow the openai client: ``base_url`` and ``api_key`` default to the standard
``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` variables. Keys never appear in reprs, logs
or errors that LiveRoom writes.

Calls go through the openai client. For rollouts with hundreds of episodes in flight,
``Endpoint(direct=True)`` posts the async calls over a small HTTP/1.1 client instead
(:class:`DirectChatClient`): the same JSON, retry rules and timeout, without the openai
client's request pipeline, which costs about 0.5 ms of CPU per call and caps one process
at a few hundred calls a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib.metadata
import json
import os
import random
import re
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime

from liveroom_sim.errors import LiveRoomError
from liveroom_sim.llm.redaction import mask_path, redact, safe_url, scrub, url_secrets  # noqa: F401 (public here too)


class EndpointError(LiveRoomError):
    """An endpoint failed (after retries) or answered nothing usable."""


class EndpointUnavailable(EndpointError):
    """The endpoint could not be reached or did not answer: connection refused or reset,
    a timeout, HTTP 408, 409, 429 or 5xx after retries, an answer cut off. An outage, not
    the policy's doing: episodes wait it out (see :mod:`liveroom_sim.episode`)."""


class EndpointRefused(EndpointError):
    """The endpoint refused the request (HTTP 400, 401, 403, 404...): a configuration
    problem (model name, key, context length), not something waiting fixes."""


@dataclass(frozen=True)
class Endpoint:
    """Where a model is served and how to call it (serialisable; holds no client).

    ``timeout_s`` bounds each attempt; failed attempts are retried ``max_retries`` times
    as the openai client does. ``direct`` sends async calls with :class:`DirectChatClient`.
    """

    model: str
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    timeout_s: float = 30.0
    max_retries: int = 2
    direct: bool = False

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

    def complete(self, body: dict) -> dict:
        """POST a chat-completions ``body``; the answer's JSON (sync, the openai client)."""
        try:
            return self.client().post("/chat/completions", **_post_options(body)).json()
        except UnicodeEncodeError:  # lone surrogates a model said earlier: UTF-8 cannot send them
            return self.client().post("/chat/completions", **_post_options(sendable(body))).json()

    async def acomplete(self, body: dict) -> dict:
        """:meth:`complete` for asyncio (the openai client, or :class:`DirectChatClient`
        when ``direct``)."""
        client = self.async_client()
        if self.direct:
            return await client.complete(body)
        try:
            return (await client.post("/chat/completions", **_post_options(body))).json()
        except UnicodeEncodeError:
            return (await client.post("/chat/completions", **_post_options(sendable(body)))).json()

    def async_client(self):
        """The async client for this endpoint, shared by the episodes of the running event
        loop (async connection pools belong to one loop) and closed when that loop shuts
        down (``asyncio.run`` and Ray actors do that): a :class:`DirectChatClient` when
        ``direct``, else an ``openai.AsyncOpenAI`` on the client's aiohttp transport
        (``openai.DefaultAioHttpClient``; with hundreds of requests in flight, httpx's
        connection pool cost about 2 ms of CPU per request here, aiohttp's about 0.3 ms).
        """
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
            clients[key] = DirectChatClient(self) if self.direct else _async_openai(*key[1:], self)
        return clients[key]


def _async_openai(base_url: str | None, api_key: str, endpoint: Endpoint):
    import openai

    # aiohttp refuses a URL with user info next to the Authorization header the client
    # sets ("Cannot combine AUTHORIZATION header ..."): the key goes in the header, as on
    # the sync client and the direct one.
    if base_url and "@" in urllib.parse.urlsplit(base_url).netloc:
        parts = urllib.parse.urlsplit(base_url)
        base_url = urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))
    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=endpoint.timeout_s,
                              max_retries=endpoint.max_retries, http_client=openai.DefaultAioHttpClient())


class DirectChatClient:
    """Chat completions posted over a small keep-alive HTTP/1.1 client
    (:mod:`liveroom_sim.llm.http1`), retried as the openai client retries them.

    Connection errors, timeouts and HTTP 408, 409, 429 and 5xx are retried up to the
    endpoint's ``max_retries`` (a server's ``x-should-retry`` header overrides), after the
    server's ``retry-after-ms`` / ``Retry-After`` when it asks for at most 60 s, else an
    exponential 0.5 s, 1 s, 2 s ... up to 8 s, less up to 25 % jitter. What still fails
    raises :class:`EndpointError` naming the status and the server's message. Proxies are
    not supported: with ``HTTP(S)_PROXY`` set for the endpoint it refuses to start.
    """

    def __init__(self, endpoint: Endpoint):
        from liveroom_sim.llm.http1 import HTTPClient

        base = (endpoint.resolved_base_url() or "https://api.openai.com/v1").rstrip("/")
        url = urllib.parse.urlsplit(base)
        if not urllib.request.proxy_bypass(url.hostname or "") and urllib.request.getproxies().get(url.scheme):
            raise EndpointError(f"direct calls do not go through proxies, and one is set for {url.hostname}: add it "
                               "to NO_PROXY, or use the openai client (Endpoint(direct=False), no --direct)")
        self.target = (url.path or "") + "/chat/completions"
        self.headers = [("Authorization", f"Bearer {endpoint._key()}"), ("Content-Type", "application/json"),
                        ("Accept", "application/json"), ("User-Agent", f"liveroom-sim/{_package_version()}")]
        self.endpoint = endpoint
        self.http = HTTPClient(base)
        self._jitter = random.Random()  # waits only; nothing an episode records depends on it

    async def complete(self, body: dict) -> dict:
        try:
            data = json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:
            data = json.dumps(sendable(body), ensure_ascii=False).encode()
        for attempt in range(self.endpoint.max_retries + 1):
            retry_after = None
            try:
                status, headers, raw = await self.http.post(self.target, self.headers, data, self.endpoint.timeout_s)
                if status < 400:
                    return json.loads(raw)
                retry = _should_retry(status, headers.get("x-should-retry"))
                error = (EndpointUnavailable if _retryable_status(status) else EndpointRefused)(
                    f"HTTP {status}: {_error_message(raw)}")
                retry_after = _retry_after(headers)
            except TimeoutError:
                error = EndpointUnavailable(f"the request timed out after {self.endpoint.timeout_s:g} s")
                retry = True
            except OSError as exc:  # refused, reset, dropped, bad HTTP, TLS
                error, retry = EndpointUnavailable(_os_error(exc)), True
            if not retry or attempt == self.endpoint.max_retries:
                raise error
            wait = min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * self._jitter.random())
            await asyncio.sleep(retry_after if retry_after is not None else wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def is_closed(self) -> bool:
        return self.http.closed

    async def close(self) -> None:
        await self.http.close()


def sendable(value):
    """``value`` with every lone surrogate (which UTF-8 cannot carry) replaced by U+FFFD.
    Used only when a request fails to encode, so the usual path costs nothing; records
    keep the model's text as it was."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {sendable(k): sendable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sendable(v) for v in value]
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _should_retry(status: int, header: str | None) -> bool:
    if header in ("true", "false"):
        return header == "true"
    return _retryable_status(status)


def _retryable_status(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


def _os_error(exc: OSError) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return f"connection refused: {exc}"
    return f"connection error: {type(exc).__name__}: {exc}"


def _retry_after(headers) -> float | None:
    """The wait a server asked for, in seconds, when it is between 0 and 60 s."""
    seconds = None
    with contextlib.suppress(TypeError, ValueError):
        seconds = float(headers.get("retry-after-ms")) / 1000
    if seconds is None and headers.get("retry-after"):
        try:
            seconds = float(headers["retry-after"])
        except ValueError:
            with contextlib.suppress(TypeError, ValueError):
                seconds = parsedate_to_datetime(headers["retry-after"]).timestamp() - time.time()
    return seconds if seconds is not None and 0 < seconds <= 60 else None


def _error_message(raw: bytes) -> str:
    """The message of an OpenAI-style (``error.message``) or vLLM-style (``message``)
    error body, else the body's start."""
    with contextlib.suppress(ValueError, AttributeError):
        data = json.loads(raw)
        error = data.get("error")
        message = error.get("message") if isinstance(error, dict) else data.get("message") or error
        if message:
            return str(message)[:300]
    return raw[:300].decode("utf-8", "replace")


def _post_options(body: dict) -> dict:
    """``client.post`` arguments: the body as plain JSON, the raw response back (the typed
    ``create()`` walks every message with typing introspection, about 10 ms a call for a
    live-room prompt, and the typed completion costs 0.2 ms more to build)."""
    cast_to, options = _client_types()
    return {"body": body, "cast_to": cast_to, "options": options}


@functools.cache
def _client_types() -> tuple[type, dict]:
    """The installed openai client's HTTP response class (httpx2 from openai 3.x; httpx
    before) and the ``post`` options it needs (bearer auth where it asks for it)."""
    try:
        import httpx2
    except ImportError:  # pragma: no cover - openai 1.x and 2.x
        import httpx as httpx2
    from openai._types import RequestOptions

    return httpx2.Response, {"security": {"bearer_auth": True}} if "security" in RequestOptions.__annotations__ else {}


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


@functools.lru_cache(maxsize=1)
def _package_version() -> str:
    # Read from the installed metadata: importing the package root would make this layer
    # depend on everything the root registers.
    try:
        return importlib.metadata.version("liveroom_sim")
    except importlib.metadata.PackageNotFoundError:
        return "0+unknown"


def endpoint_failure(exc: BaseException, endpoint: Endpoint | None = None) -> EndpointError:
    """The :class:`EndpointError` for a failed call, naming its real cause.

    The openai client wraps what went wrong (its async transport reports a refused
    connection as ``APITimeoutError: Request timed out.``), so the cause is read from the
    deepest exception of the chain. Outages give :class:`EndpointUnavailable`, refused
    requests :class:`EndpointRefused`. The
    message is redacted and the error carries no ``__cause__`` or ``__context__``, so no
    unredacted server message rides along; raise it outside the ``except`` block.
    """
    chain, seen = [], set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    status = next((c.status_code for c in chain if isinstance(getattr(c, "status_code", None), int)), None)
    root, kind = chain[-1], EndpointUnavailable
    timeout = isinstance(root, TimeoutError) or "Timeout" in type(root).__name__
    if isinstance(exc, EndpointError):
        message, kind = str(exc), type(exc)
    elif status is not None:
        body = getattr(chain[0], "body", None)
        body = body.get("message") if isinstance(body, dict) and body.get("message") else None
        body = body or re.sub(r"^Error code: \d+ - ", "", getattr(chain[0], "message", None) or str(chain[0]))
        message, kind = f"HTTP {status}: {body}", EndpointUnavailable if _retryable_status(status) else EndpointRefused
    elif isinstance(root, OSError) and not timeout:
        message = _os_error(root)
    elif "Disconnect" in type(root).__name__:
        message = f"connection error: the server closed the connection without an answer ({type(root).__name__})"
    elif timeout:
        after = f" after {endpoint.timeout_s:g} s" if endpoint is not None else ""
        message = f"the request timed out{after}"
    elif isinstance(root, UnicodeError):  # text this side could not encode: no outage to wait out
        message, kind = f"{type(root).__name__}: {root}", EndpointError
    elif isinstance(root, json.JSONDecodeError):  # a body cut off, or not JSON
        message = f"the endpoint's answer is not valid JSON (cut off?): {type(root).__name__}: {root}"
    elif isinstance(root, ValueError):  # the client refused to make the request: configuration, not an outage
        message, kind = f"the request could not be made: {type(root).__name__}: {root}", EndpointRefused
    elif any("Connection" in type(c).__name__ for c in chain):
        message = f"connection error: {type(root).__name__}: {root}"
    else:
        message, kind = f"{type(exc).__name__}: {exc}", EndpointError
    error = kind(scrub(message, endpoint)[:500])
    error.__cause__ = error.__context__ = None
    error.__suppress_context__ = True
    return error
