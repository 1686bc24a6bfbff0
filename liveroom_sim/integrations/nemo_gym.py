"""LiveRoom for NeMo-Gym (``nemo-gym`` 0.4, Python >= 3.12): a multi-turn resources server.

NeMo-Gym runs three kinds of servers: a **model server** (``responses_api_models``, e.g.
``vllm_model``, which turns Responses API calls into chat completions against any
OpenAI-compatible endpoint), an **agent server** (``responses_api_agents``) that plays the
episode, and a **resources server** (``resources_servers``) that holds the environment.
LiveRoom's resources server, :class:`~liveroom_sim.integrations.nemo_gym_server.LiveRoomResourcesServer`,
is a ``GymnasiumServer`` played by NeMo-Gym's own ``gymnasium_agent``:

- ``/reset`` opens the row's stream (``seed``, env or spec, optionally a segment); the
  row's prompt is the stream's opening (system prompt and first room update) and its
  ``tools`` the room's tools as the harness names them at that seed (HSA included).
- ``/step`` turns the model's response into the room's action (``function_call`` items are
  tool calls, the message text is the reply), steps the room and answers with what the
  room said back: tool results as ``tool_outputs`` (NeMo-Gym's ``function_call_output``
  items), and the viewers' next messages as the observation: the room's viewers are
  the simulated user. The step reward is LiveRoom's; the agent sums them.
- The episode ends with the stream, the segment, or the row's ``max_steps`` (then the
  room's early-end settlement is paid on the last step); the last step's ``info`` holds
  the return by component, the metrics and the provenance.

This module needs no NeMo-Gym: it builds the rows (:func:`make_rows`), converts actions
(:func:`action_from_response`) and writes the server folder NeMo-Gym's runner expects
(:func:`write_server`). The server class itself is in
:mod:`liveroom_sim.integrations.nemo_gym_server`, which imports NeMo-Gym.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from liveroom_sim.integrations.verifiers import DEFAULT_ENV_ID, check_env, open_room

__all__ = ["AGENT_NAME", "SERVER_NAME", "action_from_response", "link_server_venvs", "main", "make_rows",
           "responses_tools", "room_reply", "write_server"]

SERVER_NAME = "liveroom"
AGENT_NAME = "liveroom_agent"
DEFAULT_TURNS = 24
#: The servers a LiveRoom run starts: (kind, name) as NeMo-Gym lays out its server folders.
SERVERS = (("resources_servers", SERVER_NAME), ("responses_api_agents", "gymnasium_agent"),
           ("responses_api_models", "vllm_model"))


def responses_tools(tools: list[dict]) -> list[dict]:
    """Chat-completions tool schemas in the Responses API's flat shape (what NeMo-Gym's rows carry).

    >>> responses_tools([{"type": "function", "function": {"name": "get_policy", "parameters": {"type": "object"}}}])
    [{'type': 'function', 'name': 'get_policy', 'description': '', 'parameters': {'type': 'object'}, 'strict': False}]
    """
    return [{"type": "function", "name": t["function"]["name"], "description": t["function"].get("description", ""),
             "parameters": t["function"].get("parameters", {"type": "object", "properties": {}}), "strict": False}
            for t in tools]


def action_from_response(response: dict) -> str:
    """The room's action from a Responses API response (NeMo-Gym's ``NeMoGymResponse``, as a dict).

    ``function_call`` items become a tool turn; otherwise the output text (``<think>``
    blocks removed) is the reply said to the room. Reasoning items are not said.

    >>> action_from_response({"output": [{"type": "message", "role": "assistant",
    ...     "content": [{"type": "output_text", "text": "<think>hm</think>Welcome in!"}]}]})
    'Welcome in!'
    >>> json.loads(action_from_response({"output": [{"type": "function_call", "call_id": "c1",
    ...     "name": "get_promotions", "arguments": "{}"}]}))["tool_calls"][0]["function"]["name"]
    'get_promotions'
    """
    from liveroom_sim.integrations.verl import action_from_message

    text, calls = [], []
    for item in response.get("output") or ():
        if item.get("type") == "function_call":
            calls.append({"id": item.get("call_id") or item.get("id"), "type": "function",
                          "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"}})
        elif item.get("type") == "message":
            content = item.get("content")
            if isinstance(content, str):
                text.append(content)
            else:
                text += [c.get("text", "") for c in content or () if c.get("type") in ("output_text", "text")]
    return action_from_message({"role": "assistant", "content": "".join(text), **({"tool_calls": calls} if calls else {})})


def room_reply(messages: list[dict]) -> tuple[str | None, list[dict]]:
    """What the room said back after the latest action: the observation text (the viewers'
    messages, hook notes, the next update) and the tool outputs (``{"call_id", "output"}``).

    >>> room_reply([{"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
    ...             {"role": "tool", "tool_call_id": "c1", "content": '{"price": 20}'}])
    (None, [{'call_id': 'c1', 'output': '{"price": 20}'}])
    """
    from liveroom_sim.integrations.verifiers import room_answer

    said, outputs = [], []
    for message in room_answer(messages):
        if message["role"] == "tool":
            outputs.append({"call_id": message.get("tool_call_id"), "output": message.get("content") or ""})
        elif message.get("content"):
            said.append(message["content"])
    return ("\n\n".join(said) or None), outputs


def make_rows(env_id: str = DEFAULT_ENV_ID, n: int = 16, seed: int = 0, *, spec: str | None = None,
              segment_turns: int | None = DEFAULT_TURNS, max_steps: int | None = None,
              env_kwargs: dict | None = None, agent_name: str = AGENT_NAME) -> list[dict]:
    """NeMo-Gym dataset rows, one per stream (seeds ``seed .. seed+n-1``): write them as JSONL.

    Each row's ``responses_create_params`` holds the stream's opening (the system prompt and
    the room update, a segment's earlier exchanges told as text) and the room's tools as
    named at that seed; ``liveroom`` holds what ``/reset`` reopens; ``agent_ref`` names the agent.

    Args:
        segment_turns: Play segments of this many room steps from a seeded start; ``None``
            plays whole streams (then set ``max_steps``).
        max_steps: Room steps after which the server ends the episode and settles it (default:
            ``segment_turns``). Set the agent's ``max_steps`` to at least this: an agent that
            stops first leaves the episode unsettled.

    Raises:
        ValueError: an unknown env or a bad spec; a whole stream with no ``max_steps``.
    """
    check_env(env_id, spec)
    max_steps = max_steps if max_steps is not None else segment_turns
    if max_steps is None or int(max_steps) < 1:
        raise ValueError("set max_steps (>= 1) for whole streams: NeMo-Gym's agent stops at its own max_steps")
    from liveroom_sim.trajectory.segments import segment_prompt

    rows = []
    for s in range(seed, seed + n):
        env, info = open_room(env_id, spec, s, segment_turns, env_kwargs)
        env.close()
        room = {"env_id": env_id, "spec": spec, "seed": s, "segment_turns": segment_turns,
                "max_steps": int(max_steps), "env_kwargs": dict(env_kwargs or {})}
        rows.append({"responses_create_params": {"input": segment_prompt(info["messages"]),
                                                 "tools": responses_tools(info["tools"])},
                     "liveroom": room, "agent_ref": {"type": "responses_api_agents", "name": agent_name}})
    return rows


def write_server(root: str | Path, *, rows: list[dict] | None = None, max_steps: int = DEFAULT_TURNS,
                 model_server: str = "policy_model") -> Path:
    """Write the folder NeMo-Gym's runner starts LiveRoom from: ``root/resources_servers/liveroom``.

    It holds ``app.py`` (the server's entry point), ``requirements.txt`` (for a venv of
    its own), ``configs/liveroom.yaml`` (the resources server and a ``gymnasium_agent``
    named ``liveroom_agent`` over ``model_server``) and ``data/liveroom.jsonl`` (``rows``,
    default: 8 segments of LiveRoom-v0). Run NeMo-Gym from ``root``. Returns the folder.
    """
    folder = Path(root) / "resources_servers" / SERVER_NAME
    (folder / "configs").mkdir(parents=True, exist_ok=True)
    (folder / "data").mkdir(exist_ok=True)
    (folder / "app.py").write_text(
        '"""LiveRoom\'s resources server (written by liveroom_sim.integrations.nemo_gym.write_server)."""\n\n'
        "from liveroom_sim.integrations.nemo_gym_server import LiveRoomResourcesServer\n\n"
        'if __name__ == "__main__":\n    LiveRoomResourcesServer.run_webserver()\n', encoding="utf-8")
    (folder / "requirements.txt").write_text("nemo-gym>=0.4,<0.5\nliveroom_sim[nemo-gym]\n", encoding="utf-8")
    rows = make_rows(n=8) if rows is None else rows
    data = folder / "data" / f"{SERVER_NAME}.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    steps = max([int(r["liveroom"]["max_steps"]) for r in rows] + [int(max_steps)])
    (folder / "configs" / f"{SERVER_NAME}.yaml").write_text(f"""\
{SERVER_NAME}:
  resources_servers:
    {SERVER_NAME}:
      entrypoint: app.py
      domain: agent
      description: LiveRoom live-commerce streams; the room's viewers are the user, LiveRoom's reward model the reward
      verified: false
{AGENT_NAME}:
  responses_api_agents:
    gymnasium_agent:
      entrypoint: app.py
      resources_server:
        type: resources_servers
        name: {SERVER_NAME}
      model_server:
        type: responses_api_models
        name: {model_server}
      max_steps: {steps}
      datasets:
      - name: example
        type: example
        jsonl_fpath: resources_servers/{SERVER_NAME}/data/{SERVER_NAME}.jsonl
""", encoding="utf-8")
    return folder


def link_server_venvs(venv_dir: str | Path, python_prefix: str | None = None) -> dict[str, Any]:
    """Let NeMo-Gym run every LiveRoom server in this Python's environment (no venv per server).

    NeMo-Gym's runner makes a uv venv per server and installs its requirements from the
    package index on start. With ``skip_venv_if_present`` it uses a venv already at
    ``<uv_venv_dir>/<kind>/<name>/.venv``: this links each such path to ``python_prefix``
    (default: the running environment, which has nemo-gym and LiveRoom), so a run needs
    no install and no network. Returns the global config keys to pass to the runner.
    """
    prefix = Path(python_prefix or sys.prefix).resolve()
    for kind, name in SERVERS:
        link = Path(venv_dir) / kind / name / ".venv"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists():
            os.symlink(prefix, link, target_is_directory=True)
    return {"skip_venv_if_present": True, "uv_venv_dir": str(Path(venv_dir).resolve())}


def main(argv: list[str] | None = None) -> int:
    """``python -m liveroom_sim.integrations.nemo_gym DIR``: write the server folder (and link
    the server venvs), then print the NeMo-Gym commands that run it."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m liveroom_sim.integrations.nemo_gym",
                                     description="Write LiveRoom's NeMo-Gym resources server folder and its rows.")
    parser.add_argument("dir", help="the folder to run NeMo-Gym from")
    parser.add_argument("--env-id", default=DEFAULT_ENV_ID)
    parser.add_argument("--spec", help="a spec file of your own")
    parser.add_argument("--n", type=int, default=8, help="rows (streams)")
    parser.add_argument("--seed", type=int, default=0, help="the first row's seed")
    parser.add_argument("--segment-turns", type=int, default=DEFAULT_TURNS, help="room steps per row (0: whole streams)")
    parser.add_argument("--max-steps", type=int, help="steps after which an episode is settled (whole streams)")
    parser.add_argument("--link-venvs", action="store_true",
                        help="run every server in this Python's environment (no venv per server, no install)")
    args = parser.parse_args(argv)
    try:
        rows = make_rows(args.env_id, args.n, args.seed, spec=args.spec, segment_turns=args.segment_turns or None,
                         max_steps=args.max_steps)
    except ValueError as exc:
        parser.error(str(exc))
    folder = write_server(args.dir, rows=rows)
    extra = ""
    if args.link_venvs:
        keys = link_server_venvs(Path(args.dir) / "venvs")
        extra = f" +skip_venv_if_present=true +uv_venv_dir={keys['uv_venv_dir']}"
    print(f"wrote {folder} ({len(rows)} rows). From {Path(args.dir).resolve()}:\n"
          f"  gym env start --resources-server {SERVER_NAME} --model-type vllm_model --model <model> "
          f"--model-url <base-url> --model-api-key <key>{extra}\n"
          f"  gym eval run --no-serve --agent {AGENT_NAME} --input resources_servers/{SERVER_NAME}/data/"
          f"{SERVER_NAME}.jsonl --output rollouts.jsonl")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
