"""``liveroom serve``: any registered env or spec over HTTP and WebSocket, in OpenEnv's protocol.

The app is OpenEnv's own server (``openenv-core``'s ``HTTPEnvServer`` on FastAPI):
``/ws`` is one session per WebSocket, one room per session (reset, step, state, close:
OpenEnv's message shapes, so its ``EnvClient`` drives it unchanged), and ``/reset``,
``/step``, ``/state``, ``/schema``, ``/metadata`` are its HTTP routes (stateless: each
request gets a fresh room). OpenEnv enforces ``max_sessions`` (a session past it gets
``CAPACITY_REACHED``) and closes sessions idle for ``idle_timeout_s``. LiveRoom adds:

- ``GET /health``: status, env id, provenance, sessions open (no token needed);
- ``GET /metrics``: sessions, episodes, steps, steps/s, tool calls, errors, crashes;
- ``GET /sessions/{id}``: one session's state; ``/sessions/{id}/mcp``: its tools over MCP;
- an optional bearer token (:mod:`liveroom_sim.serve.guard`); requests the room cannot
  serve answer 4xx with a reason (:class:`~liveroom_sim.serve.room.RequestError`).

Example:
    >>> app = create_app("LiveRoom-v0", max_sessions=4)
    >>> {"/ws", "/health", "/metrics", "/sessions/{session_id}/mcp"} <= {r.path for r in app.routes}
    True
"""

from __future__ import annotations

import functools
from contextlib import AsyncExitStack, contextmanager

from liveroom_sim.provenance import env_provenance
from liveroom_sim.serve.room import InlineRoomEnvironment, LocalRoom, RequestError, RoomEnvironment
from liveroom_sim.serve.sessions import Sessions


def create_app(env: str, *, max_sessions: int = 64, idle_timeout_s: float | None = 600.0,
               token: str | None = None, make_room=LocalRoom, backend=None):
    """The ASGI app serving ``env`` (a registered id or a spec file).

    Args:
        env: A registered env id or a spec YAML (registered here).
        max_sessions: Sessions open at once; one more is refused with ``CAPACITY_REACHED``.
        idle_timeout_s: Seconds without a request after which a session closes (``None``: never).
        token: A bearer token every request but ``/health`` must carry (``None``: open).
        make_room: Builds a session's room from the env id (the Ray backend passes its own).
        backend: A callable returning what ``/health`` says about where rooms run.

    Raises:
        UnknownNameError: ``env`` is neither a registered id nor a spec file.
        ValueError: a limit is not positive.
    """
    from fastapi import FastAPI
    from openenv.core.env_server.http_server import HTTPEnvServer
    from openenv.core.env_server.types import ConcurrencyConfig
    from starlette.routing import Route

    from liveroom_sim import __version__, resolve_env_id
    from liveroom_sim.serve.guard import Guard
    from liveroom_sim.serve.mcp_tools import SessionMCP
    from liveroom_sim.serve.models import RoomAction, RoomObservation

    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
    if idle_timeout_s is not None and idle_timeout_s <= 0:
        raise ValueError(f"idle_timeout_s must be positive (or None: never), got {idle_timeout_s}")
    env_id = resolve_env_id(env)
    stated = env_provenance(env_id)
    sessions = Sessions(max_sessions, idle_timeout_s)
    backend = backend or (lambda: {"kind": "local"})

    app = FastAPI(title=f"LiveRoom {env_id}", version=__version__,
                  description="A LiveRoom env served in OpenEnv's protocol: one room per WebSocket session "
                              "(/ws), the room's tools over MCP (/sessions/{id}/mcp). See docs/serving.md.")
    app.state.sessions, app.state.env_id, app.state.provenance = sessions, env_id, stated
    _add_status_routes(app, backend, max_sessions)  # (before OpenEnv's routes, so these answer /health)
    mcp = SessionMCP(sessions, idle_timeout_s)
    app.router.routes.append(Route("/sessions/{session_id}/mcp", endpoint=mcp))
    # Rooms in this process step on the event loop; remote ones (Ray) in OpenEnv's worker threads.
    kind = InlineRoomEnvironment if make_room is LocalRoom else RoomEnvironment
    if make_room is LocalRoom:
        warm_up(env_id)
    factory = functools.partial(kind, env_id, sessions, stated, make_room)
    server = HTTPEnvServer(factory, RoomAction, RoomObservation, concurrency_config=ConcurrencyConfig(
        max_concurrent_envs=max_sessions, session_timeout=idle_timeout_s))
    server.register_routes(app)
    _run_for_app_lifetime(app, mcp.run)
    app.add_middleware(Guard, sessions=sessions, token=token, open_sessions=lambda: server.active_sessions)
    return app


def _add_status_routes(app, backend, max_sessions: int) -> None:
    """The routes that report the server's state (``/health``, ``/metrics``, a session's
    state) and the answer to a bad request, on ``app`` (whose ``state`` holds the sessions,
    the env id and its provenance)."""
    from fastapi import Request
    from fastapi.responses import JSONResponse

    sessions, env_id, stated = app.state.sessions, app.state.env_id, app.state.provenance

    @app.get("/health", tags=["Health"])
    def health() -> dict:
        return {"status": "healthy", "env_id": env_id, "provenance": stated, "backend": backend(),
                "sessions": sessions.metrics()["sessions"], "max_sessions": max_sessions}

    @app.get("/metrics", tags=["Health"])
    def metrics() -> dict:
        return {"env_id": env_id, **sessions.metrics()}

    @app.get("/sessions/{session_id}", tags=["State Management"])
    def session_state(session_id: str) -> dict:
        room = sessions.get(session_id)
        if room is None:
            return JSONResponse({"detail": f"no open session {session_id!r}"}, status_code=404)
        return room.state.model_dump()

    @app.exception_handler(RequestError)
    async def request_error(request: Request, error: RequestError):
        return JSONResponse({"detail": str(error)}, status_code=error.status)


def warm_up(env_id: str, steps: int = 3) -> None:
    """Play a throwaway room of ``env_id`` for a few of the scripted host's steps.

    What a spec builds once per process (its rule books' patterns, the reading's
    vocabularies) is then built before the first session: otherwise the first step
    served, which runs on the event loop, would build it and hold up every session's
    steps for seconds. Nothing of it changes a room's numbers.
    """
    from liveroom_sim.policies import ScriptedAvatar

    room, policy = LocalRoom(env_id), ScriptedAvatar()
    out = room.reset(0, None)
    for _ in range(steps):
        out = room.step(policy(out["prompt"], out["info"]))
        if out["terminated"] or out["truncated"]:
            break
    room.close()


def _run_for_app_lifetime(app, context) -> None:
    """Enter ``context()`` when the app starts and leave it when it stops."""
    stack = AsyncExitStack()

    async def start() -> None:
        await stack.enter_async_context(context())

    async def stop() -> None:
        await stack.aclose()

    app.router.on_startup.append(start)
    app.router.on_shutdown.append(stop)


#: A step's answer is tens of kB of JSON (the prompt and the chat): compressing it costs more
#: than sending it on a local network, and a long stream's chat can pass websockets' 1 MiB default.
_UVICORN = {"ws_max_size": 64 * 2**20, "ws_per_message_deflate": False}


def run(app, host: str = "127.0.0.1", port: int = 8000, log_level: str = "warning") -> None:
    """Serve ``app`` with uvicorn until interrupted.

    What is built by now (the libraries, the spec, the warmed-up rule books) lives as long
    as the server: frozen out of the garbage collector's sight, its full collections only
    walk the sessions' objects (a pause there is a pause of every session's step).
    """
    import gc

    import uvicorn

    gc.collect()
    gc.freeze()
    uvicorn.run(app, host=host, port=port, log_level=log_level, **_UVICORN)


@contextmanager
def serving(app, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
    """Serve ``app`` with uvicorn in a background thread; yields its base URL (``http://host:port``).

    ``port=0`` takes a free port. For tests, checks and benchmarks; stops on exit.
    """
    import threading
    import time

    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level=log_level, **_UVICORN))
    thread = threading.Thread(target=server.run, name="liveroom-serve", daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise OSError(f"the server could not start on {host}:{port} (is the port taken?)")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{bound}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
