"""Servers for the serve tests: real uvicorn on 127.0.0.1, driven by OpenEnv's and MCP's own clients."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("openenv.core", reason="needs the serve extra: pip install -e '.[serve]'")
pytest.importorskip("mcp", reason="needs the serve extra: pip install -e '.[serve]'")


@pytest.fixture(scope="module")
def server():
    """``LiveRoom-v0`` served with room for a few sessions; yields ``(base_url, app)``."""
    from liveroom_sim.serve.app import create_app, serving

    app = create_app("LiveRoom-v0", max_sessions=8)
    with serving(app) as url:
        yield url, app


def scripted_plan(env_id: str, seed: int, steps: int | None = None, options: dict | None = None) -> list[tuple]:
    """An in-process episode of the scripted host: ``(action, obs, reward, terminated, truncated, info)``
    per step (info as JSON reads it), after ``("reset", obs, None, False, False, info)``."""
    import gymnasium as gym

    from liveroom_sim.policies import ScriptedAvatar

    env, policy = gym.make(env_id), ScriptedAvatar()
    obs, info = env.reset(seed=seed, options=options)
    plan = [("reset", obs, None, False, False, json.loads(json.dumps(info)))]
    while steps is None or len(plan) <= steps:
        action = policy(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        plan.append((action, obs, reward, terminated, truncated, json.loads(json.dumps(info))))
        if terminated or truncated:
            break
    env.close()
    return plan


def get_json(url: str, token: str | None = None) -> tuple[int, dict]:
    """GET a JSON endpoint with the standard library: ``(status, body)``."""
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def post_json(url: str, body: dict) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


@pytest.fixture
def plan_of():
    """:func:`scripted_plan`, for tests."""
    return scripted_plan


@pytest.fixture
def http():
    """``(get_json, post_json)``, for tests."""
    return get_json, post_json
