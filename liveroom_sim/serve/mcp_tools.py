"""The harness's tools over MCP: each session's agent gets its room's tools at ``/sessions/<id>/mcp``.

The control loop and the tools are separate, as OpenEnv separates them: the trainer
resets and steps the session over OpenEnv's WebSocket; the agent it runs lists and calls
the room's tools with any MCP client (Streamable HTTP, the ``mcp`` SDK's server here).

- ``tools/list`` answers the tools as the harness names them *now*: a campaign event that
  renames a tool, or Harness-State Augmentation, shows in the next listing.
- ``tools/call`` is a tool turn of the session's room
  (:meth:`liveroom_sim.serve.room.RoomEnvironment.call_tool`): the room parses it against
  its current harness and runs it on the catalog as of now, with the episode's faults.
- A tool that fails (unknown product, a timeout the fault plan injects, a name the
  harness no longer uses, bad arguments) answers with ``isError: true`` and the room's
  message, which the agent reads and can act on; a session that is unknown, closed or not
  reset is an MCP protocol error.
"""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from starlette.responses import JSONResponse

from liveroom_sim.serve.room import RequestError
from liveroom_sim.serve.sessions import Sessions

#: JSON-RPC's "invalid request" (session gone or not reset) and "invalid params" codes.
_INVALID_REQUEST, _INVALID_PARAMS = -32600, -32602


def mcp_server(sessions: Sessions) -> Server:
    """An MCP server whose tools are, per request, those of the session its URL names."""

    def room_of(ctx):
        session_id = ctx.request.path_params["session_id"] if ctx.request is not None else None
        room = sessions.get(session_id) if session_id else None
        if room is None:
            raise MCPError(_INVALID_REQUEST, f"no open session {session_id!r}: it closed or expired")
        return room

    async def list_tools(ctx, params) -> types.ListToolsResult:
        room = room_of(ctx)
        try:
            schemas = await anyio.to_thread.run_sync(room.tools)
        except RequestError as e:
            raise MCPError(_INVALID_REQUEST, str(e)) from e
        return types.ListToolsResult(tools=[
            types.Tool(name=s["function"]["name"], description=s["function"].get("description"),
                       input_schema=s["function"].get("parameters") or {"type": "object", "properties": {}})
            for s in schemas])

    async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        room = room_of(ctx)
        try:
            answer, failed = await anyio.to_thread.run_sync(room.call_tool, params.name, params.arguments or {})
        except RequestError as e:
            raise MCPError(_INVALID_REQUEST, str(e)) from e
        return types.CallToolResult(content=[types.TextContent(text=answer)], is_error=failed)

    from liveroom_sim import __version__

    return Server("liveroom", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                  instructions="The live room's tools, as the harness names them now. Look facts up here; "
                               "your replies to the room go through the trainer.")


class SessionMCP:
    """The ASGI endpoint of ``/sessions/{session_id}/mcp``: MCP for open sessions, 404 otherwise.

    Its :meth:`run` context (entered for the app's lifetime) runs the ``mcp`` SDK's
    Streamable HTTP session manager, which keeps each MCP client's session.
    """

    def __init__(self, sessions: Sessions, idle_timeout_s: float | None):
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

        self.sessions = sessions
        self.manager = StreamableHTTPSessionManager(app=mcp_server(sessions), session_idle_timeout=idle_timeout_s)

    def run(self):
        return self.manager.run()

    async def __call__(self, scope, receive, send) -> None:
        session_id = scope.get("path_params", {}).get("session_id")
        if self.sessions.get(session_id) is None:
            response = JSONResponse({"detail": f"no open session {session_id!r}: reset one over /ws first, "
                                               "then use the mcp_path its reset info names"}, status_code=404)
            await response(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)
