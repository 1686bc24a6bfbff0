"""``--ray-address``: the rooms on Ray actors (the session's local Ray instance), same numbers, spread over hosts."""

from __future__ import annotations

import pytest
from openenv.core.generic_client import GenericEnvClient

pytestmark = pytest.mark.ray


def test_sessions_spread_over_ray_room_hosts_and_play_the_same(ray_session, plan_of, http):
    from liveroom_sim.serve.app import create_app, serving
    from liveroom_sim.serve.ray_rooms import RayRooms

    get, _ = http
    rooms = RayRooms(address=None, hosts=2, cpus_per_host=0.25)
    app = create_app("LiveRoom-v0", max_sessions=4, make_room=rooms.make_room, backend=rooms.describe)
    plans = [plan_of("LiveRoom-v0", seed, steps=15) for seed in (0, 1)]
    with serving(app) as url, GenericEnvClient(base_url=url).sync() as a, GenericEnvClient(base_url=url).sync() as b:
        for client, plan, seed in ((a, plans[0], 0), (b, plans[1], 1)):
            first = client.reset(seed=seed).observation
            first["info"].pop("session")
            assert (first["prompt"], first["info"]) == (plan[0][1], plan[0][5])
        for step in range(1, len(plans[0])):
            for client, plan in ((a, plans[0]), (b, plans[1])):
                action, obs, reward, terminated, truncated, info = plan[step]
                result = client.step({"message": action})
                assert (result.observation["prompt"], result.reward, result.observation["info"]) == (obs, reward, info)
        health = get(f"{url}/health")[1]
    backend = health["backend"]
    assert backend["kind"] == "ray" and len(backend["hosts"]) == 2
    assert sorted(h["rooms"] for h in backend["hosts"]) == [1, 1]  # one session's room on each host
    assert len({h["pid"] for h in backend["hosts"]}) == 2


def test_a_dead_room_host_is_an_error_for_its_sessions_only(ray_session):
    import ray

    from liveroom_sim.serve.app import create_app, serving
    from liveroom_sim.serve.ray_rooms import RayRooms

    rooms = RayRooms(address=None, hosts=2, cpus_per_host=0.25)
    app = create_app("LiveRoom-v0", max_sessions=4, make_room=rooms.make_room, backend=rooms.describe)
    with serving(app) as url, GenericEnvClient(base_url=url).sync() as a, GenericEnvClient(base_url=url).sync() as b:
        a.reset(seed=0)
        b.reset(seed=1)
        ray.kill(rooms.hosts[0])  # the host of the first session's room
        with pytest.raises(RuntimeError, match="the room crashed at step 1"):
            a.step({"message": "Hello!"})
        assert b.step({"message": "Hello!"}).done is False
