"""LiveRoom as a NeMo-Gym resources server, run by NeMo-Gym's own runner against the test server.

The test marked ``nemo_gym`` needs ``.[nemo-gym]`` on Python >= 3.12 (``.ci/run`` makes
``.venv-nemo-gym`` with the machine's Python 3.12) and runs with ``pytest -m nemo_gym``:
``gym env start`` brings up LiveRoom's resources server, NeMo-Gym's ``gymnasium_agent`` and
its ``vllm_model`` server (pointed at the test server, with the scripted host as the model)
on a real local Ray; ``gym eval run --no-serve`` collects the rollouts. The rest run in the
main suite, without NeMo-Gym.
"""

from __future__ import annotations

import doctest
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import gymnasium as gym
import pytest
import yaml

import liveroom_sim.integrations.nemo_gym as lr_ng
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import OpenAICompatServer, policy_responder
from liveroom_sim.trajectory.segments import SegmentEnv

CANONICAL_TOOLS = {"get_product", "get_price_stock", "get_promotions", "get_policy", "get_order_status"}


# ------------------------------------------------------------ without NeMo-Gym
def test_docstring_examples_run():
    assert doctest.testmod(lr_ng).failed == 0


def test_rows_open_each_stream_and_offer_its_tools_as_named_at_that_seed():
    kwargs = {"harness_augmentation": {"probability": 1.0}}
    rows = lr_ng.make_rows("LiveRoom-v0", n=2, seed=5, segment_turns=3, env_kwargs=kwargs)
    for row, seed in zip(rows, (5, 6)):
        env = SegmentEnv(gym.make("LiveRoom-v0", **kwargs), turns=3)
        _, info = env.reset(seed=seed)
        params = row["responses_create_params"]
        assert [t["name"] for t in params["tools"]] == [t["function"]["name"] for t in info["tools"]]
        assert set(t["name"] for t in params["tools"]) != CANONICAL_TOOLS  # HSA renamed them
        assert [m["role"] for m in params["input"]] == ["system", "user"]
        assert params["input"][-1]["content"].endswith(info["messages"][-1]["content"])
        assert row["liveroom"] == {"env_id": "LiveRoom-v0", "spec": None, "seed": seed, "segment_turns": 3,
                                   "max_steps": 3, "env_kwargs": kwargs}
        json.dumps(row)


def test_bad_rows_requests_are_clear_errors():
    with pytest.raises(ValueError, match="LiveRoom-v0"):
        lr_ng.make_rows("LiveRom-v0", n=1)
    with pytest.raises(ValueError, match="max_steps"):
        lr_ng.make_rows(n=1, segment_turns=None)


def test_the_server_folder_is_what_nemo_gyms_runner_reads(tmp_path):
    rows = lr_ng.make_rows(n=1, segment_turns=2)
    folder = lr_ng.write_server(tmp_path, rows=rows, max_steps=5)
    config = yaml.safe_load((folder / "configs" / "liveroom.yaml").read_text(encoding="utf-8"))
    assert config["liveroom"]["resources_servers"]["liveroom"]["entrypoint"] == "app.py"
    agent = config["liveroom_agent"]["responses_api_agents"]["gymnasium_agent"]
    assert agent["resources_server"] == {"type": "resources_servers", "name": "liveroom"}
    assert agent["max_steps"] == 5  # never fewer than the rows' own cap
    data = tmp_path / agent["datasets"][0]["jsonl_fpath"]
    assert [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()] == rows
    assert "LiveRoomResourcesServer.run_webserver()" in (folder / "app.py").read_text(encoding="utf-8")
    keys = lr_ng.link_server_venvs(tmp_path / "venvs")
    assert keys["skip_venv_if_present"] is True
    for kind, name in lr_ng.SERVERS:
        assert (Path(keys["uv_venv_dir"]) / kind / name / ".venv" / "bin" / "python").exists()


# ------------------------------------------------------------ with NeMo-Gym
def _gym_cli() -> Path:
    cli = Path(sys.executable).with_name("gym")
    if not cli.exists():
        pytest.skip("NeMo-Gym's CLI is not in this venv (pip install -e '.[nemo-gym]' on Python >= 3.12)")
    return cli


def _wait_for_servers(process: subprocess.Popen, log: Path, timeout: float = 420.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        if "# Server Instances" in text:
            return
        if process.poll() is not None:
            pytest.fail(f"gym env start exited ({process.returncode}):\n{text[-4000:]}")
        time.sleep(2)
    pytest.fail(f"NeMo-Gym's servers were not up after {timeout:.0f} s:\n{text[-4000:]}")


def _responses(output: list[dict]) -> list[list[dict]]:
    """The model's responses in a rollout's output: runs of model items between the room's answers."""
    groups, current = [], []
    for item in output:
        from_model = item["type"] in ("function_call", "reasoning") or (
            item["type"] == "message" and item.get("role") == "assistant")
        if from_model:
            current.append(item)
        elif current:
            groups.append(current)
            current = []
    return groups + ([current] if current else [])


@pytest.mark.nemo_gym
def test_nemo_gyms_runner_collects_scored_liveroom_rollouts(tmp_path, ray_session):
    pytest.importorskip("nemo_gym", reason="NeMo-Gym is not installed: it needs Python >= 3.12 (.venv-nemo-gym)")
    gym_cli = _gym_cli()
    turns = 4
    # As docs/serving/nemo-gym.md does it; --link-venvs: every server runs in this venv (no install, no network).
    assert lr_ng.main([str(tmp_path), "--n", "2", "--seed", "1", "--segment-turns", str(turns), "--link-venvs"]) == 0
    rows = [json.loads(line) for line in (tmp_path / "resources_servers/liveroom/data/liveroom.jsonl").open()]
    venvs = {"skip_venv_if_present": True, "uv_venv_dir": str((tmp_path / "venvs").resolve())}
    gcs = ray_session.get_runtime_context().gcs_address
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    log = tmp_path / "servers.log"
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        start = [str(gym_cli), "env", "start", "--resources-server", "liveroom", "--model-type", "vllm_model",
                 "--model", "avatar", "--model-url", srv.base_url, "--model-api-key", "test",
                 f"+skip_venv_if_present={str(venvs['skip_venv_if_present']).lower()}",
                 f"+uv_venv_dir={venvs['uv_venv_dir']}", f"+ray_head_node_address={gcs}"]
        with log.open("w") as out:
            servers = subprocess.Popen(start, cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        try:
            _wait_for_servers(servers, log)
            collect = [str(gym_cli), "eval", "run", "--no-serve", "--agent", "liveroom_agent",
                       "--input", "resources_servers/liveroom/data/liveroom.jsonl", "--output", "rollouts.jsonl"]
            run = subprocess.run(collect, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
            assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        finally:
            os.killpg(servers.pid, signal.SIGTERM)
            try:
                servers.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(servers.pid, signal.SIGKILL)
        offered = [[t["function"]["name"] for t in r.get("tools") or ()] for r in srv.requests]
    # The model was offered the rows' tools: the room's, as named at each row's seed.
    assert offered and all(names in [[t["name"] for t in row["responses_create_params"]["tools"]] for row in rows]
                           for names in offered)
    rollouts = sorted((json.loads(line) for line in (tmp_path / "rollouts.jsonl").read_text().splitlines()),
                      key=lambda r: r["_ng_task_index"])
    assert len(rollouts) == 2
    for rollout, row in zip(rollouts, rows):
        played = rollout["info"]["liveroom"]
        assert played["seed"] == row["liveroom"]["seed"] and played["steps"] == turns
        assert rollout["truncated"] and not rollout["terminated"]
        assert played["provenance"]["spec_id"] == "LiveRoom-v0"
        assert rollout["reward"] == pytest.approx(played["returns"]["total"])
        # The agent's summed reward is the room's: replay the model's responses in this process.
        replay = SegmentEnv(gym.make("LiveRoom-v0"), turns=turns)
        replay.reset(seed=played["seed"])
        responses = _responses(rollout["response"]["output"])
        assert len(responses) == turns
        total = sum(replay.step(lr_ng.action_from_response({"output": r}))[1] for r in responses)
        assert rollout["reward"] == pytest.approx(total)
        kinds = {item["type"] for item in rollout["response"]["output"]}
        assert {"function_call", "function_call_output"} <= kinds  # the room answered the tool calls
