"""A real OpenAI-compatible chat-completions HTTP server for tests and offline demos.

Standard library only. It answers `POST /v1/chat/completions` (plain and `"stream": true`)
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
import contextlib
import hashlib
import itertools
import json
import re
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union

from liveroom_sim.errors import UnknownNameError
from liveroom_sim.testing.faults import MALFORMED_BODY, STATUS_FAULTS, FaultPlan, error_body, fault_replies

Responder = Callable[[dict, int], Union[dict, str]]
"""`(request body, choice index) -> content str | {"content": ..., "tool_calls": [...]}`."""

_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
# One token per CJK character, one per run of other non-space characters: rough but stable.
_TOKEN_RE = re.compile(f"[{_CJK}]|[^\\s{_CJK}]+")


def count_tokens(text: str | None) -> int:
    """Approximate token count: whitespace-separated words plus one per CJK character.

    Example:
        >>> count_tokens("hello big world"), count_tokens("你好 world")
        (3, 3)
    """
    return sum(1 for _ in _TOKEN_RE.finditer(text or ""))


def text_of(content: Any) -> str:
    """Return the text of a message `content`: a string, None, or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type") == "text")
    return str(content)


def echo_responder(request: dict, choice_index: int) -> str:
    """Repeat the content of the last user message (empty if there is none)."""
    for message in reversed(request.get("messages") or []):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""


def scripted_responder(replies: Sequence[str | dict]) -> Responder:
    """Answer request k with `replies[k % len(replies)]`, cycling through the script.

    With `n` > 1, choice i of request k gets `replies[(k + i) % len(replies)]`. Requests that
    get a fault instead of a reply do not consume the script, so a retried request gets the
    reply the failed attempt would have had. Each reply is a content string or a message dict.

    Raises:
        ValueError: If `replies` is empty.
    """
    script = list(replies)
    if not script:
        raise ValueError("scripted_responder needs at least one reply")
    lock = threading.Lock()
    state = {"next": 0, "base": 0}

    def respond(request: dict, choice_index: int) -> str | dict:
        with lock:
            if choice_index == 0:
                state["base"], state["next"] = state["next"], state["next"] + 1
            return script[(state["base"] + choice_index) % len(script)]

    return respond


def policy_responder(policy: Callable[[str, dict], str]) -> Responder:
    """Adapt a LiveRoom policy `policy(observation, info) -> action` into a responder.

    The observation is the text of the last message; info is `{"messages", "tools"}` from the
    request. An action that is a JSON object with "tool_calls" (OpenAI format) or "content" is
    sent as that assistant message; any other action is sent as plain content.
    """

    def respond(request: dict, choice_index: int) -> str | dict:
        messages = request.get("messages") or []
        last = messages[-1] if messages and isinstance(messages[-1], Mapping) else {}
        info = {"messages": messages, "tools": request.get("tools") or []}
        action, parsed = policy(text_of(last.get("content")), info), None
        with contextlib.suppress(ValueError):
            parsed = json.loads(action) if action.lstrip().startswith("{") else None
        if isinstance(parsed, dict) and ("tool_calls" in parsed or "content" in parsed):
            return {"content": parsed.get("content"), "tool_calls": parsed.get("tool_calls") or []}
        return action

    return respond


def _scripted_avatar() -> Responder:
    from liveroom_sim.policies import ScriptedAvatar

    return policy_responder(ScriptedAvatar())


RESPONDERS: dict[str, Callable[[], Responder]] = {
    "echo": lambda: echo_responder,
    "scripted-avatar": _scripted_avatar,
    "fixed": lambda: scripted_responder(["Thanks for watching, ask me anything about today's lineup!"]),
}
"""Responder name (the CLI's `--responder`) -> zero-argument factory."""


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "LiveRoomOpenAICompat/1.0"

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in separate writes; without this, Nagle meets delayed ACK (~40 ms).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.app._track(self.connection, add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.app._track(self.connection, add=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (stdlib signature)
        pass  # tests stay quiet; the CLI prints its base URL instead

    def do_GET(self) -> None:
        if self.path.split("?")[0] == "/v1/models":
            models = [{"id": m, "object": "model", "created": 0, "owned_by": "liveroom"} for m in self.server.app.models]
            self._send(200, {"object": "list", "data": models})
        else:
            self._not_found()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        if self.command != "POST" or self.path.split("?")[0] != "/v1/chat/completions":
            self._not_found()
            return
        try:
            request = json.loads(raw)
        except ValueError as exc:
            self._send(400, error_body(f"We could not parse the JSON body of your request: {exc}.", code="invalid_json"))
            return
        problem = _validate(request)
        if problem:
            self._send(400, error_body(problem, code="invalid_request"))
        else:
            self.server.app._serve(self, request)

    do_PUT = do_PATCH = do_DELETE = do_POST  # all answer 404, after reading the body

    def _not_found(self) -> None:
        self._send(404, error_body(f"Unknown request URL: {self.command} {self.path}.", code="unknown_url"))

    def _send(self, status: int, body: Any, headers: Mapping[str, str] | None = None) -> None:
        """Send `body` (JSON-encoded unless already bytes) as an application/json response."""
        payload = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json", "Content-Length": str(len(payload)), **(headers or {})}
        self._respond(status, headers, [payload])

    def _send_stream(self, events: Iterable[bytes]) -> None:
        """Send server-sent events `data: <event>`, then `data: [DONE]`, then close."""
        self.close_connection = True  # no Content-Length: the body ends when the connection does
        headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", "Connection": "close"}
        self._respond(200, headers, (b"data: " + e + b"\n\n" for e in itertools.chain(events, [b"[DONE]"])))

    def _respond(self, status: int, headers: Mapping[str, str], parts: Iterable[bytes]) -> None:
        try:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            for part in parts:
                self.wfile.write(part)
        except OSError:  # the client gave up (e.g. its timeout fired) before we answered
            self.close_connection = True

    def _drop(self) -> None:
        """Close the connection without a response."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default 5 drops SYNs under a burst and costs clients a 1 s retransmit
    block_on_close = False  # stop() must not wait for handlers sleeping in latency or faults

    def __init__(self, address: tuple[str, int], app: OpenAICompatServer) -> None:
        self.app = app
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a vanished client is not an error
            super().handle_error(request, client_address)


class OpenAICompatServer:
    """An OpenAI-compatible chat-completions server running in a daemon thread.

    Args:
        responder: Called once per choice as `responder(request, choice_index)`; returns the
            content string or a message dict `{"content", "tool_calls": [{"name", "arguments"}]}`
            (arguments a dict or JSON string; OpenAI-format tool calls pass through). Calls are
            serialized, so stateful responders need no lock. Defaults to `echo_responder`.
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
        self._lock = threading.Lock()
        self._responder_lock = threading.Lock()
        self._requests: list[dict] = []
        self._faults: Counter[str] = Counter()
        self._connections: set[socket.socket] = set()
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        """Base URL for `openai.OpenAI(base_url=...)`, ending in `/v1`."""
        if self._httpd is None:
            raise RuntimeError("the server is not running; call start() or use it in a `with` block")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict]:
        with self._lock:
            return list(self._requests)

    @property
    def faults_served(self) -> dict[str, int]:
        with self._lock:
            return dict(self._faults)

    def start(self) -> OpenAICompatServer:
        """Bind and start serving in a daemon thread; returns self."""
        if self._httpd is None:
            self._stopping.clear()
            self._httpd = _HTTPServer(self._address, self)
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name=f"openai-compat-server:{self._httpd.server_address[1]}", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close every open connection; requests still waiting are dropped."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in latency or a "timeout" fault
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:  # also wakes keep-alive handlers blocked on a read
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=2.0)
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    def _track(self, connection: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(connection)

    def _wait(self, seconds: float) -> bool:
        """Sleep, waking early on stop(); return False if the server is stopping."""
        return not self._stopping.wait(max(0.0, seconds))

    def _serve(self, handler: _Handler, request: dict) -> None:
        """Answer one valid chat-completion request: latency, then a fault or a completion."""
        with self._lock:
            index = len(self._requests)
            self._requests.append(request)
            fault = self.faults.fault_for(index)
            if fault:
                self._faults[fault] += 1
        try:
            delay = self.latency(request) if callable(self.latency) else self.latency
        except Exception as exc:  # a broken latency function is the test author's bug: report it
            handler._send(500, error_body(f"latency function failed: {exc!r}", "server_error"))
            return
        if not self._wait(delay) or fault == "disconnect":
            handler._drop()
        elif fault in STATUS_FAULTS:
            status, kind, code, message = STATUS_FAULTS[fault]
            headers = self.faults.retry_after_headers() if fault == "429" else None
            handler._send(status, error_body(message, kind, code), headers)
        elif fault == "timeout" and not self._wait(self.faults.timeout_seconds):
            handler._drop()
        elif fault == "malformed_json":
            if request.get("stream"):
                handler._send_stream([MALFORMED_BODY])
            else:
                handler._send(200, MALFORMED_BODY)
        else:
            try:
                completion = self._completion(request, index, fault)
            except Exception as exc:  # the responder's failure goes back to the client, not a crash
                handler._send(500, error_body(f"responder failed: {exc!r}", "server_error"))
                return
            if request.get("stream"):
                include_usage = bool((request.get("stream_options") or {}).get("include_usage"))
                handler._send_stream(json.dumps(c, ensure_ascii=False).encode()
                                     for c in _stream_chunks(completion, include_usage))
            else:
                handler._send(200, completion)

    def _completion(self, request: dict, index: int, fault: str | None) -> dict:
        n = request.get("n") or 1
        salt = _digest(request.get("messages"))
        limit = request.get("max_completion_tokens", request.get("max_tokens"))
        replies = fault_replies(self.faults, fault, request, n) if fault else None
        if replies is None:
            with self._responder_lock:
                replies = [self.responder(request, i) for i in range(n)]
        choices = [_choice(i, reply, salt, None if fault else limit) for i, reply in enumerate(replies)]
        return {
            "id": f"chatcmpl-{_digest(salt, index)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.models[0],
            "system_fingerprint": "fp_liveroom",
            "choices": choices,
            "usage": _usage(request["messages"], choices),
        }


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
