"""What an operator and a client rely on: limits, expiry, the token, errors with reasons, metrics."""

from __future__ import annotations

import time

import pytest
from openenv.core.generic_client import GenericEnvClient


def test_health_and_metrics_state_the_spec_and_count_the_work(server, http):
    url, app = server
    get, _ = http
    status, health = get(f"{url}/health")
    assert status == 200 and health["status"] == "healthy" and health["env_id"] == "LiveRoom-v0"
    assert health["provenance"] == app.state.provenance and len(health["provenance"]["spec_digest"]) == 16
    before = get(f"{url}/metrics")[1]
    with GenericEnvClient(base_url=url).sync() as room:
        room.reset(seed=0)
        for _ in range(3):
            room.step({"message": "Hello, everyone!"})
        during = get(f"{url}/metrics")[1]
        state = room.state()
    assert during["sessions"] == before["sessions"] + 1
    assert during["steps"] == before["steps"] + 3 and during["episodes"] == before["episodes"] + 1
    assert during["steps_per_s"] > 0
    assert state["step_count"] == 3 and state["seed"] == 0 and state["provenance"] == app.state.provenance
    # Closed with its client: the server learns of the close asynchronously (a loaded
    # machine took a moment), so wait for it, up to 10 s.
    deadline = time.monotonic() + 10
    while get(f"{url}/metrics")[1]["sessions"] != before["sessions"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert get(f"{url}/metrics")[1]["sessions"] == before["sessions"]


def test_a_session_past_the_limit_is_refused_until_one_closes(plan_of):
    from liveroom_sim.serve.app import create_app, serving

    with serving(create_app("LiveRoom-v0", max_sessions=2)) as url:
        first, second = GenericEnvClient(base_url=url).sync(), GenericEnvClient(base_url=url).sync()
        first.reset(seed=0)
        second.reset(seed=1)
        with pytest.raises(ConnectionError, match="503"), GenericEnvClient(base_url=url).sync() as third:
            third.reset(seed=2)
        first.close()
        time.sleep(0.3)
        with GenericEnvClient(base_url=url).sync() as third:
            assert third.reset(seed=2).observation["prompt"] == plan_of("LiveRoom-v0", 2, steps=0)[0][1]
        second.close()


def test_bad_requests_get_a_reason_and_the_session_goes_on(server, http):
    url, _ = server
    get, post = http
    errors = get(f"{url}/metrics")[1]["errors"]
    with GenericEnvClient(base_url=url).sync() as room:
        with pytest.raises(RuntimeError, match="reset the session before stepping"):
            room.step({"message": "hi"})
        with pytest.raises(RuntimeError, match="seed must be a non-negative integer"):
            room.reset(seed="seven")
        with pytest.raises(RuntimeError, match="unknown: colour"):
            room.reset(seed=1, colour="red")
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            room.step({"text": "not the action's field"})
        room.reset(seed=1)
        assert room.step({"message": "Welcome!"}).done is False  # still usable
    status, body = post(f"{url}/step", {"action": {"message": "hi"}})  # HTTP is stateless in OpenEnv
    assert status == 409 and "sessions live on the WebSocket /ws" in body["detail"]
    status, body = post(f"{url}/reset", {"seed": 1, "colour": "red"})
    assert status == 400 and "unknown: colour" in body["detail"]
    assert get(f"{url}/sessions/not-a-session")[0] == 404
    assert get(f"{url}/metrics")[1]["errors"] >= errors + 7


def test_a_crashed_room_is_an_error_for_its_session_only(server, http, plan_of):
    url, app = server
    get, _ = http
    plan = plan_of("LiveRoom-v0", 3, steps=4)
    with GenericEnvClient(base_url=url).sync() as broken, GenericEnvClient(base_url=url).sync() as healthy:
        session = broken.reset(seed=3).observation["info"]["session"]["id"]
        healthy.reset(seed=3)

        def explode(action):
            raise ZeroDivisionError("a bug in the room")

        app.state.sessions.get(session)._room.step = explode  # the room breaks, as a bug would break it
        with pytest.raises(RuntimeError, match="the room crashed at step 1 .*ZeroDivisionError"):
            broken.step({"message": plan[1][0]})
        with pytest.raises(RuntimeError, match="needs a reset"):
            broken.step({"message": plan[1][0]})
        assert "ZeroDivisionError" in broken.state()["crashed"]
        assert get(f"{url}/sessions/{session}")[1]["crashed"].startswith("ZeroDivisionError")
        for action, obs, reward, *_ in plan[1:]:  # the other session plays on, unaffected
            result = healthy.step({"message": action})
            assert (result.observation["prompt"], result.reward) == (obs, reward)
        assert broken.reset(seed=3).observation["prompt"] == plan[0][1]  # a reset brings a fresh room
        assert broken.state()["crashed"] is None
    assert get(f"{url}/metrics")[1]["crashes"] >= 1


@pytest.mark.slow
def test_an_idle_session_expires(http):
    from liveroom_sim.serve.app import create_app, serving

    get, _ = http
    with serving(create_app("LiveRoom-v0", idle_timeout_s=1.0)) as url, GenericEnvClient(base_url=url).sync() as room:
        room.reset(seed=0)
        assert get(f"{url}/metrics")[1]["sessions"] == 1
        deadline = time.time() + 30  # OpenEnv's reaper looks every 5 s at the least
        while get(f"{url}/metrics")[1]["sessions"] and time.time() < deadline:
            time.sleep(0.5)
        metrics = get(f"{url}/metrics")[1]
        assert (metrics["sessions"], metrics["sessions_expired"]) == (0, 1)
        with pytest.raises(RuntimeError, match="expired after being idle: open a new session"):
            room.step({"message": "still there?"})


def test_a_token_guards_everything_but_health(http):
    import asyncio
    import json

    import websockets

    from liveroom_sim.serve.app import create_app, serving

    get, _ = http
    with serving(create_app("LiveRoom-v0", token="s3cret")) as url:
        assert get(f"{url}/health")[0] == 200
        status, body = get(f"{url}/metrics")
        assert status == 401 and "bearer token" in body["detail"]
        assert get(f"{url}/metrics", token="wrong")[0] == 401
        assert get(f"{url}/metrics", token="s3cret")[0] == 200
        with pytest.raises(ConnectionError, match="401"), GenericEnvClient(base_url=url).sync() as room:
            room.reset(seed=0)
        # OpenEnv's client with the token in the URL (sent as HTTP Basic credentials)
        with GenericEnvClient(base_url=url.replace("://", "://liveroom:s3cret@")).sync() as room:
            assert room.reset(seed=0).observation["info"]["session"]["id"]

        async def bearer() -> dict:  # any WebSocket client with the standard header
            ws_url = url.replace("http://", "ws://") + "/ws"
            async with websockets.connect(ws_url, additional_headers={"Authorization": "Bearer s3cret"}) as ws:
                await ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
                return json.loads(await ws.recv())

        assert asyncio.run(bearer())["type"] == "observation"
        assert get(f"{url}/metrics", token="s3cret")[1]["errors"] >= 3
