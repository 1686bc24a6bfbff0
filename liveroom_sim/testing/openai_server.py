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
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Self

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
    _json_response,
    _read_request,
    _Request,
    _Response,
    _run_until_stopped,
    _send,
)
from liveroom_sim.testing.responders import (
    _TOKEN_RE,
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


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _wire_tool_call(call: Any, salt: str) -> dict:
    """Convert `{"name", "arguments"}` or an OpenAI tool call to wire format with a stable id."""
    if not isinstance(call, Mapping):
        raise TypeError(f"a tool call must be a dict, got {type(call).__name__}")
    function = call["function"] if isinstance(call.get("function"), Mapping) else call
    name, arguments = str(function.get("name")), function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = call.get("id") or f"call_{_digest(salt, name, arguments)}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _choice(index: int, reply: Any, salt: str, max_tokens: int | None) -> dict:
    """Build one OpenAI choice from a responder reply."""
    if isinstance(reply, str):
        reply = {"content": reply}
    if not isinstance(reply, Mapping):
        raise TypeError(f"responder returned {type(reply).__name__}; expected str or message dict")
    content = reply.get("content")
    calls = [_wire_tool_call(c, f"{salt}:{index}:{k}") for k, c in enumerate(reply.get("tool_calls") or [])]
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    if isinstance(content, str) and max_tokens is not None and count_tokens(content) > max_tokens:
        ends = [m.end() for m, _ in zip(_TOKEN_RE.finditer(content), range(max_tokens))]
        content, finish = content[: ends[-1] if ends else 0], "length"
    message = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    return {"index": index, "message": message, "logprobs": None, "finish_reason": finish}


def _usage(messages: list, choices: list[dict]) -> dict:
    prompt = 3 + sum(4 + count_tokens(text_of(m.get("content"))) for m in messages if isinstance(m, Mapping))
    completion = 0
    for choice in choices:
        message = choice["message"]
        completion += count_tokens(message.get("content"))
        for call in message.get("tool_calls", []):
            completion += count_tokens(call["function"]["name"]) + count_tokens(call["function"]["arguments"])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _validate(request: Any) -> str | None:
    """Return why a chat-completion request body is invalid, or None."""
    if not isinstance(request, dict):
        return "The request body must be a JSON object."
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a non-empty list of message objects."
    n = request.get("n", 1)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 128):
        return "'n' must be an integer between 1 and 128."
    limit = request.get("max_completion_tokens", request.get("max_tokens"))
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        return "'max_tokens' must be a positive integer."
    return None


def _stream_chunks(completion: dict, include_usage: bool) -> Iterator[dict]:
    """Split a finished completion into `chat.completion.chunk` objects, as OpenAI streams them."""
    head = {key: completion[key] for key in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(index: int, delta: dict, finish: str | None = None) -> dict:
        return {**head, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    for choice in completion["choices"]:
        index, message = choice["index"], choice["message"]
        yield chunk(index, {"role": "assistant", "content": "" if message["content"] is not None else None})
        content, start = message["content"] or "", 0
        ends = [match.end() for match in _TOKEN_RE.finditer(content)]
        step = max(1, -(-len(ends) // 64))  # a token per chunk, but at most ~64 chunks per choice
        for end in [*ends[step - 1 :: step], len(content)]:
            if end > start:
                yield chunk(index, {"content": content[start:end]})
                start = end
        for k, call in enumerate(message.get("tool_calls", [])):
            yield chunk(index, {"tool_calls": [{"index": k, **call}]})
        yield chunk(index, {}, choice["finish_reason"])
    if include_usage:
        yield {**head, "choices": [], "usage": completion["usage"]}



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

    Attributes:
        requests: Bodies of the valid chat-completion requests so far, in arrival order.
        faults_served: Fault kind -> how many times it was served.
    """

    def __init__(self, responder: Responder | None = None, *, model: str | Sequence[str] = "test-model",
                 latency: float | Callable[[dict], float] = 0.0, faults: FaultPlan | None = None,
                 host: str = "127.0.0.1", port: int = 0) -> None:
        self.responder = responder or echo_responder
        self.models = [model] if isinstance(model, str) else list(model)
        self.latency = latency
        self.faults = faults or FaultPlan()
        self._address = (host, port)
        self._lock = threading.Lock()  # requests and faults are read from other threads
        self._requests: list[dict] = []
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
    def faults_served(self) -> dict[str, int]:
        with self._lock:
            return dict(self._faults)

    def start(self) -> Self:
        """Bind and start serving in a daemon thread; returns self."""
        if self._loop is None:
            loop = asyncio.new_event_loop()
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
            while True:
                try:
                    request = await _read_request(reader, writer)
                except _BadRequest as bad:
                    error = _json_response(bad.status, error_body(str(bad), code="bad_request"))
                    await _send(writer, error, close=True)
                    return
                if request is None:
                    return
                response = await self._route(request)
                if response is None:
                    return  # a "disconnect" fault: close without an answer
                if request.method == "HEAD":
                    response = response._replace(body=b"", events=())
                close = response.close or not request.keep_alive
                await _send(writer, response, close)
                if close:
                    return
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away, perhaps because its timeout fired
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
        try:
            body = json.loads(request.body)
        except ValueError as exc:
            return _json_response(400, error_body(f"We could not parse the JSON body of your request: {exc}.",
                                                  code="invalid_json"))
        problem = _validate(body)
        if problem:
            return _json_response(400, error_body(problem, code="invalid_request"))
        return await self._serve(body, request.body, request.arrived)

    async def _serve(self, request: dict, raw: bytes, arrived: float) -> _Response | None:
        """Answer one valid chat-completion request `latency` seconds after it `arrived`
        (the server's own work is inside that time, as a model server's would be): a fault
        or a completion."""
        with self._lock:
            index = len(self._requests)
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
            return _event_stream(json.dumps(chunk, ensure_ascii=False).encode() for chunk in chunks)
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
        print(f"Serving an OpenAI-compatible API at {server.base_url} (Ctrl-C to stop)", flush=True)
        try:
            while True:
                time.sleep(1.0)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    # Run the imported module's main so RESPONDERS entries registered elsewhere are visible.
    from liveroom_sim.testing.openai_server import main as _main

    raise SystemExit(_main())
