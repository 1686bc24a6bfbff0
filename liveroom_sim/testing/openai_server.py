"""A real OpenAI-compatible chat-completions HTTP server for tests and offline demos.

Standard library only: one asyncio event loop, in a daemon thread, serves every connection
(HTTP/1.1 with keep-alive). It answers `POST /v1/chat/completions` (plain and `"stream": true`)
and `GET /v1/models` on 127.0.0.1, asks a *responder* for each choice, and can inject faults
from a seeded `FaultPlan` (rate limits, server errors, timeouts, dropped connections, broken
bodies), so the real `openai` client runs its real retry, timeout and parsing code.

Example:
    >>> import openai
    >>> with OpenAICompatServer(scripted_responder(["Hi there!"])) as srv:
    ...     client = openai.OpenAI(base_url=srv.base_url, api_key="test")
    ...     reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    >>> reply.choices[0].message.content
    'Hi there!'

Command line: `python -m liveroom_sim.testing.openai_server --port 8000 --latency 0.2`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import threading
import time
import math
from collections import Counter, deque
from collections.abc import Callable, Sequence
from typing import Self

from liveroom_sim.errors import UnknownNameError
from liveroom_sim.testing.faults import (
    MALFORMED_BODY,
    STATUS_FAULTS,
    FaultPlan,
    error_body,
    fault_replies,
)
from liveroom_sim.testing.tokenizer import with_tokens  # token ids and logprobs, as vLLM returns them
from liveroom_sim.testing.http import (
    _BadRequest,
    _event_stream,
    _json_bytes,
    _json_response,
    _read_request,
    _Request,
    _Response,
    _run_until_stopped,
    _send,
)
from liveroom_sim.testing.completions import _choice, _digest, _stream_chunks, _usage, _validate, parse_body
from liveroom_sim.testing.responders import (
    RESPONDERS,
    Responder,
    count_tokens,
    echo_responder,
    policy_responder,
    scripted_responder,
    text_of,
)

__all__ = ["RESPONDERS", "OpenAICompatServer", "Responder", "count_tokens", "echo_responder", "main",
           "policy_responder", "scripted_responder", "text_of"]


class OpenAICompatServer:
    """An OpenAI-compatible chat-completions server, served by an asyncio loop in a daemon thread.

    Args:
        responder: Called once per choice as `responder(request, choice_index)`; returns the
            content string or a message dict `{"content", "tool_calls": [{"name", "arguments"}]}`
            (arguments a dict or JSON string; OpenAI-format tool calls pass through). Calls are
            serialized on the server's thread, so stateful responders need no lock; a slow one
            holds up every other request. Defaults to `echo_responder`.
        model: Model name, or names, listed by `/v1/models`; the first answers requests that
            name no model. A request's own model is echoed back.
        latency: Seconds to wait before answering each chat request, or `latency(request)`.
        faults: A `FaultPlan`; by default every request is answered normally.
        host: Interface to bind.
        port: Port to bind; 0 picks a free one.
        max_logged_requests: How many request bodies `requests` keeps (the latest);
            `request_count` counts them all. Memory stays bounded however long it runs.
        idle_timeout: Seconds a keep-alive connection may wait for its next request.
        header_timeout: Seconds a client has to send a request's head and body once it
            has started (a slow client gets a 408, so slow connections cannot pile up).
        max_connections: Open connections served at once; past it a connection gets a 503
            and is closed. By default a margin below the process's descriptor limit, so
            the server never runs out of descriptors (it would log an error per accept).

    Attributes:
        requests: Bodies of the latest valid chat-completion requests, in arrival order.
        request_count: How many valid chat-completion requests arrived in all.
        faults_served: Fault kind -> how many times it was served.
    """

    def __init__(self, responder: Responder | None = None, *, model: str | Sequence[str] = "test-model",
                 latency: float | Callable[[dict], float] = 0.0, faults: FaultPlan | None = None,
                 host: str = "127.0.0.1", port: int = 0, max_logged_requests: int = 1_000,
                 idle_timeout: float = 120.0, header_timeout: float = 30.0,
                 max_connections: int | None = None) -> None:
        self.responder = responder or echo_responder
        self.models = [model] if isinstance(model, str) else list(model)
        self.latency = latency
        self.faults = faults or FaultPlan()
        self._address = (host, port)
        self._lock = threading.Lock()  # requests and faults are read from other threads
        self._requests: deque[dict] = deque(maxlen=max(0, max_logged_requests))
        self._count = 0
        self.idle_timeout, self.header_timeout = idle_timeout, header_timeout
        self.max_connections = max_connections or _connection_limit()
        self._faults: Counter[str] = Counter()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task] = set()  # one per open connection; only the loop thread uses it

    @property
    def base_url(self) -> str:
        """Base URL for `openai.OpenAI(base_url=...)`, ending in `/v1`."""
        if self._server is None:
            raise RuntimeError("the server is not running; call start() or use it in a `with` block")
        host, port = self._server.sockets[0].getsockname()[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def request_count(self) -> int:
        with self._lock:
            return self._count

    @property
    def faults_served(self) -> dict[str, int]:
        with self._lock:
            return dict(self._faults)

    def start(self) -> Self:
        """Bind and start serving in a daemon thread; returns self."""
        if self._loop is None:
            loop = asyncio.new_event_loop()
            loop.set_exception_handler(_QuietErrors())
            thread = threading.Thread(target=_run_until_stopped, args=(loop,), name="openai-compat-server", daemon=True)
            thread.start()
            # A burst of hundreds of connects must not overflow the listen queue (each drop costs a 1 s retry).
            listening = asyncio.start_server(self._handle, *self._address, backlog=1024)
            try:
                self._server = asyncio.run_coroutine_threadsafe(listening, loop).result()
            except BaseException:
                loop.call_soon_threadsafe(loop.stop)
                thread.join()
                raise
            self._loop, self._thread = loop, thread
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection; requests still waiting are dropped."""
        loop, thread, server = self._loop, self._thread, self._server
        if loop is None or thread is None or server is None:
            return
        asyncio.run_coroutine_threadsafe(self._shutdown(server), loop)
        thread.join(timeout=2.0)
        self._loop = self._thread = self._server = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def _shutdown(self, server: asyncio.Server) -> None:
        """Stop listening, drop every connection (and the request it waits on), then stop the loop."""
        server.close()
        # Connections accepted a moment ago start their handlers in the next loop turns: wait for those too.
        while others := asyncio.all_tasks() - {asyncio.current_task()}:
            for handler in others & self._handlers:
                handler.cancel()
            await asyncio.sleep(0)
        loop = asyncio.get_running_loop()
        loop.call_soon(loop.stop)  # after the callbacks, already queued, that close the aborted sockets

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection: requests one after another, until either side closes it."""
        handler = asyncio.current_task()
        self._handlers.add(handler)
        try:
            if len(self._handlers) > self.max_connections:
                busy = _json_response(503, error_body("The server has too many open connections; try again.",
                                                      "server_error", "too_many_connections"), {"Retry-After": "1"})
                await _send(writer, busy, close=True)
                return
            while True:
                try:
                    request = await _read_request(reader, writer, self.idle_timeout, self.header_timeout)
                except _BadRequest as bad:
                    error = _json_response(bad.status, error_body(str(bad), code="bad_request"))
                    await _send(writer, error, close=True)
                    return
                if request is None:
                    return
                try:
                    response = await self._route(request)
                except Exception as exc:  # noqa: BLE001 - a server bug answers 500, never a dropped connection
                    response = _json_response(500, error_body(f"internal error: {type(exc).__name__}: {exc}",
                                                              "server_error"))
                if response is None:
                    return  # a "disconnect" fault: close without an answer
                if request.method == "HEAD":
                    response = response._replace(body=b"", events=())
                close = response.close or not request.keep_alive
                await _send(writer, response, close)
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the client went away (perhaps because its timeout fired), or sat idle past idle_timeout
        except asyncio.CancelledError:  # stop() drops the connection and the request it waits on
            writer.transport.abort()  # not re-raised: Python 3.11 logs an error for a handler that ends cancelled
        finally:
            self._handlers.discard(handler)
            writer.close()

    async def _route(self, request: _Request) -> _Response | None:
        path = request.target.split("?")[0]
        if request.method == "GET" and path == "/v1/models":
            models = [{"id": m, "object": "model", "created": 0, "owned_by": "liveroom"} for m in self.models]
            return _json_response(200, {"object": "list", "data": models})
        if request.method != "POST" or path != "/v1/chat/completions":
            message = f"Unknown request URL: {request.method} {request.target}."
            return _json_response(404, error_body(message, code="unknown_url"))
        body, unreadable = parse_body(request.body)
        if unreadable:
            return _json_response(400, error_body(unreadable, code="invalid_json"))
        problem = _validate(body)
        if problem:
            return _json_response(400, error_body(problem, code="invalid_request"))
        return await self._serve(body, request.body, request.arrived)

    async def _serve(self, request: dict, raw: bytes, arrived: float) -> _Response | None:
        """Answer one valid chat-completion request `latency` seconds after it `arrived`
        (the server's own work is inside that time, as a model server's would be): a fault
        or a completion."""
        with self._lock:
            index = self._count
            self._count += 1
            self._requests.append(request)
            fault = self.faults.fault_for(index)
            if fault:
                self._faults[fault] += 1
        try:
            delay = float(self.latency(request) if callable(self.latency) else self.latency)
        except Exception as exc:  # noqa: BLE001 (a broken latency function is the test author's bug: report it)
            return _json_response(500, error_body(f"latency function failed: {exc!r}", "server_error"))
        response = self._answer(request, raw, index, fault)
        if fault == "timeout":
            delay += self.faults.timeout_seconds  # then answer normally
        await asyncio.sleep(arrived + delay - time.monotonic())
        return response

    def _answer(self, request: dict, raw: bytes, index: int, fault: str | None) -> _Response | None:
        if fault == "disconnect":
            return None
        if fault in STATUS_FAULTS:
            status, kind, code, message = STATUS_FAULTS[fault]
            headers = self.faults.retry_after_headers() if fault == "429" else None
            return _json_response(status, error_body(message, kind, code), headers)
        if fault == "malformed_json":
            return _event_stream([MALFORMED_BODY]) if request.get("stream") else _json_response(200, MALFORMED_BODY)
        try:
            completion = self._completion(request, raw, index, fault)
        except Exception as exc:  # noqa: BLE001 (a responder's failure goes back to the client, not a crash)
            return _json_response(500, error_body(f"responder failed: {exc!r}", "server_error"))
        if request.get("stream"):
            include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
            chunks = _stream_chunks(completion, include_usage)
            return _event_stream(_json_bytes(chunk) for chunk in chunks)
        return _json_response(200, completion)

    def _completion(self, request: dict, raw: bytes, index: int, fault: str | None) -> dict:
        n = request.get("n") or 1
        salt = hashlib.sha256(raw).hexdigest()[:24]  # ids follow the request: the same one gets the same ids
        limit = request.get("max_completion_tokens", request.get("max_tokens"))
        replies = fault_replies(self.faults, fault, request, n) if fault else None
        if replies is None:
            replies = [self.responder(request, i) for i in range(n)]
        choices = [_choice(i, reply, salt, None if fault else limit) for i, reply in enumerate(replies)]
        return with_tokens(request, {
            "id": f"chatcmpl-{_digest(salt, index)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.models[0],
            "system_fingerprint": "fp_liveroom",
            "choices": choices,
            "usage": _usage(request["messages"], choices),
        })


def _connection_limit() -> int:
    """A margin below the soft descriptor limit (the process's clients need some too)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):  # pragma: no cover - no resource module (Windows)
        return 512
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(8, min(4096, soft // 2))


class _QuietErrors:
    """The loop's exception handler: each kind of error is logged once a minute at most,
    with how many were suppressed (running out of descriptors made asyncio log one
    traceback per accept attempt: 23 MB of stderr in 8 s)."""

    def __init__(self, every_s: float = 60.0):
        self.every_s, self.last, self.suppressed = every_s, {}, Counter()

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict) -> None:
        kind = (context.get("message"), type(context.get("exception")).__name__)
        now = time.monotonic()
        if now - self.last.get(kind, -math.inf) < self.every_s:
            self.suppressed[kind] += 1
            return
        self.last[kind] = now
        context = dict(context)
        if self.suppressed[kind]:
            context["message"] = f"{context.get('message')} ({self.suppressed.pop(kind)} more like it not shown)"
        loop.default_exception_handler(context)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until Ctrl-C: `python -m liveroom_sim.testing.openai_server --port 8000`."""
    parser = argparse.ArgumentParser(prog="python -m liveroom_sim.testing.openai_server",
                                     description="Serve an OpenAI-compatible chat-completions API.")
    add = parser.add_argument
    add("--host", default="127.0.0.1")
    add("--port", type=int, default=8000, help="0 picks a free port")
    add("--model", action="append", help="model name (repeatable; default test-model)")
    add("--latency", type=float, default=0.0, help="seconds before each answer")
    add("--responder", choices=sorted(RESPONDERS), default="echo")
    add("--fault-rate", action="append", default=[], metavar="KIND=RATE", help="e.g. 500=0.1 (repeatable)")
    add("--fault-at", action="append", default=[], metavar="INDEX=KIND", help="e.g. 0=429 (repeatable)")
    add("--seed", type=int, default=0, help="seed of the fault draws")
    add("--fault-timeout", type=float, default=30.0, help="seconds a timeout fault waits")
    args = parser.parse_args(argv)
    try:
        plan = FaultPlan.from_strings(rates=args.fault_rate, schedule=args.fault_at, seed=args.seed,
                                      timeout_seconds=args.fault_timeout)
    except (ValueError, UnknownNameError) as exc:
        parser.error(str(exc))
    server = OpenAICompatServer(RESPONDERS[args.responder](), model=args.model or ["test-model"],
                                latency=args.latency, faults=plan, host=args.host, port=args.port)
    with server:
        try:  # (a Ctrl-C while the banner is still being written stops it cleanly too)
            print(f"Serving an OpenAI-compatible API at {server.base_url} (Ctrl-C to stop)", flush=True)
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    # Run the imported module's main so RESPONDERS entries registered elsewhere are visible.
    from liveroom_sim.testing.openai_server import main as _main

    raise SystemExit(_main())
