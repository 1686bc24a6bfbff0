"""LiveRoom served over the wire: OpenEnv's protocol for the control loop, MCP for the tools.

``liveroom serve`` (or :func:`create_app` in your own ASGI stack) serves any registered
env or spec: one room per OpenEnv WebSocket session, the room's harness tools over MCP at
``/sessions/<id>/mcp``, ``/health`` and ``/metrics``, an optional bearer token, and the
rooms optionally on a Ray cluster. Needs the ``serve`` extra
(``pip install 'liveroom_sim[serve]'``). See ``docs/serving.md``.

Modules: :mod:`.app` (the FastAPI app on OpenEnv's server), :mod:`.room` (a session's
room), :mod:`.sessions` (registry and counters), :mod:`.guard` (token, error counts),
:mod:`.mcp_tools` (MCP), :mod:`.ray_rooms` (rooms on Ray), :mod:`.models` (the wire
types), :mod:`.client` (the typed OpenEnv client), :mod:`.check` (``--check``).
"""

from __future__ import annotations

__all__ = ["create_app", "serving"]


def __getattr__(name: str):
    # openenv, FastAPI and mcp load only when the server is asked for.
    if name in __all__:
        from liveroom_sim.serve import app

        return getattr(app, name)
    raise AttributeError(name)
