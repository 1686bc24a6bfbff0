"""``liveroom serve --check N``: serve, step one room over the wire with OpenEnv's client, stop.

The client is OpenEnv's ``GenericEnvClient`` (plain dicts, nothing of LiveRoom needed on
the client side) and the actions are the scripted host's, chosen from what the client
received, so the check exercises exactly what a remote trainer does.
"""

from __future__ import annotations

import sys


def check(app, host: str, port: int, steps: int, token: str | None = None, out=None) -> int:
    """Serve ``app``, play ``steps`` steps of seed 0 through OpenEnv's client, print them; 0 if all went well."""
    from openenv.core.generic_client import GenericEnvClient

    from liveroom_sim.policies import ScriptedAvatar
    from liveroom_sim.serve.app import serving

    out = out or sys.stdout
    with serving(app, host, port) as url:
        client_url = url.replace("://", f"://liveroom:{token}@", 1) if token else url
        policy = ScriptedAvatar()
        with GenericEnvClient(base_url=client_url).sync() as room:
            result = room.reset(seed=0)
            observation = result.observation
            session = observation["info"]["session"]
            print(f"served {url}: OpenEnv client connected; session {session['id']}, "
                  f"provenance {session['provenance']}", file=out)
            total = 0.0
            for step in range(1, steps + 1):
                action = policy(observation["prompt"], observation["info"])
                result = room.step({"message": action})
                observation, total = result.observation, total + result.reward
                kind = observation["info"].get("turn", {}).get("kind")
                print(f"step {step}: {kind:<5} reward {result.reward:+.3f}  {action[:70]!r}", file=out)
                if result.done:
                    break
            print(f"ok: {step} steps over the wire, return {total:+.3f}; MCP tools at {url}{session['mcp_path']}",
                  file=out)
    return 0
