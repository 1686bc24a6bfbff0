"""``liveroom serve``: an env served over HTTP and WebSocket in OpenEnv's protocol, with MCP tools.

``liveroom serve --env LiveRoom-v0 --port 8000`` serves one room per WebSocket session
until interrupted (see ``docs/serving.md``). ``--check N`` starts the server, steps one
room N times with OpenEnv's own client over the wire, prints what it saw and stops: the
first thing to run after installing. ``--ray-address`` puts the rooms on a Ray cluster.
"""

from __future__ import annotations

import os

from liveroom_sim.cli.common import fail, float_in, int_at_least


def add_serve_parser(subparsers):
    """Add the ``serve`` command to a CLI's subparsers (sets ``func(args) -> int``)."""
    p = subparsers.add_parser(
        "serve", help="serve an env over HTTP/WebSocket (OpenEnv's protocol) with its tools over MCP",
        description="Serve a registered env or a spec file: one room per OpenEnv WebSocket session (/ws), "
                    "the room's tools over MCP (/sessions/<id>/mcp), /health and /metrics for operators.")
    p.add_argument("--env", default="LiveRoom-v0", help="registered env id or a spec YAML file")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (0.0.0.0: every interface)")
    p.add_argument("--port", type=int_at_least(0), default=8000, help="port to listen on (0: any free port)")
    p.add_argument("--max-sessions", type=int_at_least(1), default=64, help="sessions open at once")
    p.add_argument("--idle-timeout", type=float_in(0, open_low=True), default=600.0,
                   help="seconds without a request after which a session closes")
    p.add_argument("--token", default=None, help="bearer token every request but /health must carry "
                                                 "(default: $LIVEROOM_TOKEN; none: an open server)")
    p.add_argument("--ray-address", default=None, help="run the rooms on this Ray cluster ('auto', "
                                                       "'ray://host:10001', 'host:6379'; default: none, rooms in this process)")
    p.add_argument("--ray-hosts", type=int_at_least(1), default=2, help="room-host actors on the Ray cluster")
    p.add_argument("--ray-cpus", type=float_in(0, open_low=True), default=1.0, help="CPUs each room host reserves")
    p.add_argument("--check", type=int_at_least(1), default=None, metavar="STEPS",
                   help="start, step one room STEPS times with OpenEnv's client over the wire, print it, stop "
                        "(default: none, keep serving)")
    p.add_argument("--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"],
                   help="uvicorn's log level")
    p.set_defaults(func=run_serve)
    return p


def run_serve(args) -> int:
    """Serve (or check) what the parsed ``args`` ask for; returns the exit code."""
    try:
        from liveroom_sim.serve.app import create_app, run
    except ImportError as e:
        return fail("serve", f"{e.name or e} is missing: install the serve extra (pip install 'liveroom_sim[serve]')")
    from liveroom_sim.cli.common import env_id
    from liveroom_sim.errors import LiveRoomError

    token = args.token or os.environ.get("LIVEROOM_TOKEN") or None
    options = {"max_sessions": args.max_sessions, "idle_timeout_s": args.idle_timeout, "token": token}
    try:
        env = env_id(args.env)
        if args.ray_address:
            from liveroom_sim.serve.ray_rooms import RayRooms

            rooms = RayRooms(args.ray_address, hosts=args.ray_hosts, cpus_per_host=args.ray_cpus)
            options.update(make_room=rooms.make_room, backend=rooms.describe)
        app = create_app(env, **options)
    except (LiveRoomError, ValueError, ConnectionError) as e:
        return fail("serve", str(e))
    if args.check is not None:
        from liveroom_sim.serve.check import check

        return check(app, args.host, args.port, args.check, token)
    print(f"liveroom serve: {env} on http://{args.host}:{args.port} (OpenEnv WebSocket /ws, MCP "
          f"/sessions/<id>/mcp, /health, /metrics); Ctrl-C stops", flush=True)
    run(app, args.host, args.port, args.log_level)
    return 0
