"""The harness's tools over MCP, driven by the ``mcp`` SDK's own client, beside OpenEnv's control loop."""

from __future__ import annotations

import asyncio
import json

import pytest
from mcp import Client
from openenv.core.generic_client import GenericEnvClient


def mcp(url: str, calls):
    """Open an MCP session at ``url`` and run ``await calls(client)``."""

    async def run():
        async with Client(url) as client:
            return await calls(client)

    return asyncio.run(run())


def tool_call(name: str, arguments: dict, call_id: str = "c1") -> str:
    return json.dumps({"content": "", "tool_calls": [{"id": call_id, "type": "function", "function": {
        "name": name, "arguments": json.dumps(arguments)}}]})


def test_the_agent_lists_the_tools_the_policy_is_shown(server):
    url, _ = server
    with GenericEnvClient(base_url=url).sync() as room:
        info = room.reset(seed=0).observation["info"]

        async def listing(client):
            return (await client.list_tools()).tools

        tools = mcp(url + info["session"]["mcp_path"], listing)
    shown = {t["function"]["name"]: t["function"] for t in info["tools"]}
    assert [t.name for t in tools] == list(shown)
    for tool in tools:
        assert tool.description == shown[tool.name]["description"]
        assert tool.input_schema == shown[tool.name]["parameters"]


def test_a_tool_call_over_mcp_is_a_tool_turn_of_the_trainers_room(server, plan_of):
    """The answer is the room's, the room moves on as if the trainer had stepped the call,
    and the trainer's next step carries the turn and its reward."""
    import gymnasium as gym

    url, _ = server
    reply = "@everyone the serum is 28.99 right now!"
    twin = gym.make("LiveRoom-v0")  # the same episode in process: the call as a step, then the reply
    twin.reset(seed=4)
    _, tool_reward, _, _, tool_info = twin.step(tool_call("get_price_stock", {"product_id": "sk-serum-01"}))
    obs_after, reply_reward, *_ = twin.step(reply)
    with GenericEnvClient(base_url=url).sync() as room:
        session = room.reset(seed=4).observation["info"]["session"]

        async def call(client):
            return await client.call_tool("get_price_stock", {"product_id": "sk-serum-01"})

        result = mcp(url + session["mcp_path"], call)
        assert result.is_error is False
        assert result.content[0].text == tool_info["messages"][-1]["content"]
        assert json.loads(result.content[0].text)["product_id"] == "sk-serum-01"
        step = room.step({"message": reply})
    assert step.observation["prompt"] == obs_after
    assert step.reward == pytest.approx(tool_reward + reply_reward)
    [turn] = step.observation["info"]["mcp_tool_turns"]
    assert (turn["tool"], turn["reward"]) == ("get_price_stock", tool_reward)


def test_tool_faults_and_stale_names_reach_the_agent_as_mcp_errors():
    """Under Harness-State Augmentation the agent sees the renamed tools; a pinned fault
    and a name the harness no longer uses come back with isError and the room's reason."""
    from liveroom_sim.serve.app import create_app, serving

    app = create_app("LiveRoom-HarnessVariant-v0")
    with serving(app) as url, GenericEnvClient(base_url=url).sync() as room:
        info = room.reset(seed=5, options={"tool_faults": [{"kind": "timeout", "tool": "get_price_stock"}]}) \
            .observation["info"]
        shown = [t["function"]["name"] for t in info["tools"]]
        # What the augmented harness calls the price lookup this episode (the test reads the room).
        view = app.state.sessions.get(info["session"]["id"])._room.env.unwrapped.room.harness.tools["get_price_stock"]
        price_name, field = view.name, view.fields.get("product_id", "product_id")

        async def session(client):
            names = [t.name for t in (await client.list_tools()).tools]
            faulted = await client.call_tool(price_name, {field: "sk-serum-01"})
            stale = await client.call_tool("get_price_stock", {"product_id": "sk-serum-01"})
            return names, faulted, stale

        names, faulted, stale = mcp(url + info["session"]["mcp_path"], session)
        assert names == shown and price_name in shown and price_name != "get_price_stock"
        assert faulted.is_error and "timeout" in faulted.content[0].text
        assert stale.is_error and f"did you mean {price_name!r}" in stale.content[0].text
        turns = room.step({"message": "One moment, checking that for you."}).observation["info"]["mcp_tool_turns"]
        assert [t["tool_faults"] != [] for t in turns] == [True, False]
        assert turns[1]["reward_breakdown"]["harness"] < 0  # a stale name costs what it costs in a step


def test_a_closed_session_has_no_tools(server):
    from mcp.shared.exceptions import MCPError

    url, _ = server
    with GenericEnvClient(base_url=url).sync() as room:
        path = room.reset(seed=0).observation["info"]["session"]["mcp_path"]

    async def listing(client):
        return await client.list_tools()

    with pytest.raises(BaseException) as caught:  # anyio wraps it in an exception group
        mcp(url + path, listing)
    errors = caught.value.exceptions if isinstance(caught.value, BaseExceptionGroup) else [caught.value]
    while any(isinstance(e, BaseExceptionGroup) for e in errors):
        errors = [x for e in errors for x in (e.exceptions if isinstance(e, BaseExceptionGroup) else [e])]
    assert any(isinstance(e, MCPError) and "Not Found" in str(e) for e in errors)


def test_a_stream_that_ends_on_an_mcp_tool_turn_ends_at_the_trainers_next_step():
    from liveroom_sim.serve.models import RoomAction
    from liveroom_sim.serve.room import InlineRoomEnvironment, RequestError
    from liveroom_sim.serve.sessions import Sessions

    room = InlineRoomEnvironment("LiveRoom-v0", Sessions(1, None), {})
    room.reset(seed=0)
    rewards = []
    while not (room.state.terminated or room.state.truncated):  # the agent keeps looking things up
        room.call_tool("get_promotions", {})
        rewards.append(room._pending[-1]["reward"])
    end = room.step(RoomAction(message="Thanks for watching!"))
    assert end.done and len(end.info["mcp_tool_turns"]) == len(rewards)
    assert end.reward == pytest.approx(sum(rewards))
    with pytest.raises(RequestError, match="the episode is over"):
        room.step(RoomAction(message="Anyone still here?"))
