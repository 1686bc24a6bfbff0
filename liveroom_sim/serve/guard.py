"""The server's door: the optional bearer token, the session limit, and counting errors.

A pure ASGI middleware, so it sees HTTP requests and WebSocket handshakes alike:

- With a token set, every request but ``GET /health`` must carry ``Authorization: Bearer
  <token>`` (or HTTP Basic with the token as password, which is what a URL such as
  ``http://liveroom:<token>@host:8000`` makes clients send, OpenEnv's among them). A
  request without it gets ``401`` and a reason; a WebSocket handshake is refused the same
  way, before any room is built.
- A WebSocket past ``max_sessions`` is refused at the handshake with ``503`` and a reason.
- HTTP answers of 400 and above, and OpenEnv's WebSocket error frames, add to the
  ``errors`` counter of ``/metrics``.
"""

from __future__ import annotations

import base64
import hmac
import json

from liveroom_sim.serve.sessions import Sessions

#: Open without the token: an operator's liveness probe.
OPEN_PATHS = frozenset({"/health"})


class Guard:
    """ASGI middleware: bearer-token check and error counting.

    Args:
        app: The wrapped ASGI app.
        sessions: Where the ``errors`` counter lives.
        token: The bearer token clients must present, or ``None`` for an open server.
    """

    def __init__(self, app, sessions: Sessions, token: str | None, open_sessions=None):
        self.app, self.sessions, self.token = app, sessions, token
        self.open_sessions = open_sessions  # () -> sessions open now (OpenEnv's count)

    async def __call__(self, scope, receive, send):
        kind = scope["type"]
        if kind not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        if self.token and scope["path"] not in OPEN_PATHS and not self._authorized(scope):
            self.sessions.count("errors")
            return await self._refuse(scope, receive, send, 401, (
                "this server needs a bearer token: send 'Authorization: Bearer <token>' "
                "(or put it in the URL as http://liveroom:<token>@host:port)"))
        if kind == "websocket" and scope["path"] == "/ws" and self.open_sessions is not None \
                and self.open_sessions() >= self.sessions.max_sessions:
            # Refused at the handshake, with a status a client reports (OpenEnv would accept
            # the socket, send CAPACITY_REACHED and close it before the client's first message).
            self.sessions.count("errors")
            return await self._refuse(scope, receive, send, 503, (
                f"the server is at capacity ({self.sessions.max_sessions} sessions): retry when one closes"))
        counting = send
        if kind == "http":
            async def counting(message):
                if message["type"] == "http.response.start" and message["status"] >= 400:
                    self.sessions.count("errors")
                await send(message)
        else:
            gone = False
            inner = receive

            async def receive():
                nonlocal gone
                message = await inner()
                gone = gone or message["type"] == "websocket.disconnect"
                return message

            async def counting(message):
                if message["type"] == "websocket.close":
                    # OpenEnv closes the socket after the client's "close" message, when the
                    # client may have closed it already: nothing left to tell it.
                    if not gone:
                        try:
                            await send(message)
                        except OSError:
                            pass
                    return
                # OpenEnv's error frames are {"type":"error",...}
                text = message.get("text") if message["type"] == "websocket.send" else None
                if text is not None and text.startswith('{"type":"error"'):
                    self.sessions.count("errors")
                await send(message)
        return await self.app(scope, receive, counting)

    def _authorized(self, scope) -> bool:
        header = dict(scope.get("headers") or ()).get(b"authorization", b"").decode("latin-1")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer":
            presented = value.strip()
        elif scheme.lower() == "basic":
            try:
                presented = base64.b64decode(value.strip()).decode().partition(":")[2]
            except ValueError:
                return False
        else:
            return False
        return hmac.compare_digest(presented.encode(), self.token.encode())

    @staticmethod
    async def _refuse(scope, receive, send, status: int, reason: str) -> None:
        body = json.dumps({"detail": reason}).encode()
        headers = [(b"content-type", b"application/json")]
        if status == 401:
            headers.append((b"www-authenticate", b'Bearer realm="liveroom"'))
        if scope["type"] == "websocket":
            await receive()  # websocket.connect comes first
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
        elif "websocket.http.response" in scope.get("extensions", {}):
            # Refuse the handshake with a real status and the reason (ASGI's denial response).
            await send({"type": "websocket.http.response.start", "status": status, "headers": headers})
            await send({"type": "websocket.http.response.body", "body": body})
        else:
            await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
