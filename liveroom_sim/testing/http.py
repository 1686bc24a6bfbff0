"""The HTTP/1.1 plumbing of the test server: reading requests, writing responses.

Standard library only, on asyncio streams: keep-alive, chunked request bodies,
``100-continue``, HTTP/1.0 and ``Connection: close``; malformed input is a
:class:`_BadRequest` with its status (400, 413, 431), never a dead loop.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Iterable, Mapping
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, NamedTuple

_MAX_BODY = 64 * 2**20  # bytes; a request body past this gets a 413 instead of filling memory


class _Request(NamedTuple):
    method: str
    target: str
    body: bytes
    keep_alive: bool
    arrived: float  # time.monotonic() once the whole request was read


class _Response(NamedTuple):
    """What to send: `body` goes out with the head; each of `events` follows in its own write."""

    status: int
    headers: Mapping[str, str]
    body: bytes = b""
    events: Iterable[bytes] = ()
    close: bool = False


class _BadRequest(Exception):
    """A request that cannot be read: answered with `status`, then the connection is closed."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def _json_bytes(body: Any) -> bytes:
    """`body` as UTF-8 JSON; text UTF-8 cannot hold (lone surrogates) goes out as `\\u` escapes."""
    text = json.dumps(body, ensure_ascii=False)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(body).encode()


def _json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> _Response:
    """An application/json response; `body` is JSON-encoded unless it is already bytes."""
    payload = body if isinstance(body, bytes) else _json_bytes(body)
    headers = {"Content-Type": "application/json", "Content-Length": str(len(payload)), **(headers or {})}
    return _Response(status, headers, payload)


def _event_stream(events: Iterable[bytes]) -> _Response:
    """Server-sent events `data: <event>`, then `data: [DONE]`; the body ends when the connection does."""
    headers = {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
    return _Response(200, headers, events=(b"data: " + e + b"\n\n" for e in itertools.chain(events, [b"[DONE]"])),
                     close=True)


async def _read_line(reader: asyncio.StreamReader, separator: bytes) -> bytes:
    try:
        return await reader.readuntil(separator)
    except asyncio.LimitOverrunError:
        raise _BadRequest("The request head or a chunk-size line is too large.", 431) from None


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    """Read a `Transfer-Encoding: chunked` body (chunk extensions and trailers are ignored)."""
    body = bytearray()
    while True:
        line = await _read_line(reader, b"\r\n")
        try:
            size = int(line.split(b";")[0], 16)
        except ValueError:
            size = -1
        if size < 0:
            raise _BadRequest(f"Bad chunk-size line {line[:200]!r} in a chunked request body.")
        if len(body) + size > _MAX_BODY:
            raise _BadRequest(f"The request body is larger than {_MAX_BODY} bytes.", 413)
        if size == 0:
            break
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise _BadRequest("A chunk of the request body does not end in CRLF.")
    while await _read_line(reader, b"\r\n") != b"\r\n":
        pass  # trailer fields: nothing here uses them
    return bytes(body)


async def _read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, idle_timeout: float = 120.0,
                        header_timeout: float = 30.0) -> _Request | None:
    """Read one HTTP/1.x request; None if the client closed the connection before sending one.

    The client may wait up to `idle_timeout` seconds before it starts a request, then has
    `header_timeout` seconds to send all of it.

    Raises:
        _BadRequest: On a malformed request line, header or body, one past the size limits,
            or one sent too slowly (408).
        asyncio.IncompleteReadError: If the client closed the connection in mid-request.
        TimeoutError: If the connection sat idle past `idle_timeout`.
    """
    try:
        first = await asyncio.wait_for(reader.readexactly(1), idle_timeout)
    except asyncio.IncompleteReadError:
        return None
    try:
        return await asyncio.wait_for(_read_rest(first, reader, writer), header_timeout)
    except TimeoutError:
        raise _BadRequest(f"The request was not sent within {header_timeout:g} s.", 408) from None


async def _read_rest(first: bytes, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> _Request:
    try:
        head = first + await _read_line(reader, b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        raise _BadRequest("The connection closed in the middle of a request head.") from None
    request_line, *lines = head[:-4].decode("latin-1").split("\r\n")
    parts = request_line.split(" ")
    if len(parts) != 3 or parts[2] not in ("HTTP/1.0", "HTTP/1.1"):
        raise _BadRequest(f"Bad HTTP request line {request_line[:200]!r}.")
    method, target, version = parts
    headers = {}
    for line in lines:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise _BadRequest(f"Bad HTTP header line {line[:200]!r}.")
        headers[name.lower()] = value.strip()
    keep_alive = version == "HTTP/1.1" and "close" not in headers.get("connection", "").lower()
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    if "transfer-encoding" in headers:
        if headers["transfer-encoding"].lower() != "chunked":
            raise _BadRequest(f"Unsupported Transfer-Encoding {headers['transfer-encoding'][:200]!r}.")
        return _Request(method, target, await _read_chunked(reader), keep_alive, time.monotonic())
    length = headers.get("content-length", "0")
    if not length.isdecimal():
        raise _BadRequest(f"Bad Content-Length {length[:200]!r}.")
    if len(length) > 12 or int(length) > _MAX_BODY:  # the length test first: int() refuses 4,300+ digits
        raise _BadRequest(f"The request body is larger than {_MAX_BODY} bytes.", 413)
    return _Request(method, target, await reader.readexactly(int(length)), keep_alive, time.monotonic())


async def _send(writer: asyncio.StreamWriter, response: _Response, close: bool) -> None:
    head = [f"HTTP/1.1 {response.status} {HTTPStatus(response.status).phrase}", "Server: LiveRoomOpenAICompat/1.0",
            f"Date: {formatdate(usegmt=True)}", *(f"{name}: {value}" for name, value in response.headers.items())]
    if close:
        head.append("Connection: close")
    writer.write("\r\n".join([*head, "", ""]).encode("latin-1") + response.body)
    for event in response.events:
        await writer.drain()  # raises once the client is gone, so a long stream stops early
        writer.write(event)
    await writer.drain()


def _run_until_stopped(loop: asyncio.AbstractEventLoop) -> None:
    try:
        loop.run_forever()
    finally:
        loop.close()
