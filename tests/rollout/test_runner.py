"""The rollout runner: groups, records, advantages, resume, faults, every backend."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import pytest

from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.records import with_advantages
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.testing import FaultPlan, OpenAICompatServer, policy_responder

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def _rows(path):
    return [json.loads(line) for line in open(path, encoding="utf-8")]


def _run(tmp_path, name="r.jsonl", **kw):
    config = RolloutConfig(**{"env": TINY, "policy": PolicySpec(kind="scripted"), "episodes": 8, "group_size": 4,
                              "out": tmp_path / name, "progress": False, **kw})
    return run_rollouts(config), _rows(tmp_path / name)


def test_records_carry_the_documented_fields_and_group_relative_advantages(tmp_path):
    report, rows = _run(tmp_path, policy=PolicySpec(kind="naive"))
    assert report["episodes"] == len(rows) == 8 and report["errors"] == 0
    for r in rows:
        assert {"group_id", "sample_index", "seed", "messages", "turn_rewards", "return", "advantage", "metrics",
                "accounting", "error"} <= set(r)
        assert r["messages"][0]["role"] == "system" and r["turn_rewards"] and r["error"] is None
    assert {r["seed"] for r in rows if r["group_id"] == 1} == {1}


def test_advantages_are_normalised_within_each_group():
    group = [{"sample_index": i, "return": ret, "error": None} for i, ret in enumerate([1.0, 2.0, 3.0, 6.0])]
    adv = [r["advantage"] for r in with_advantages(group)]
    assert sum(adv) == pytest.approx(0.0, abs=1e-9) and adv[3] > adv[2] > adv[1] > adv[0]
    raw = [r["advantage"] for r in with_advantages([dict(r) for r in group], normalize="mean")]
    assert raw == pytest.approx([-2.0, -1.0, 0.0, 3.0])


def test_a_learned_policy_samples_independently_within_a_group(tmp_path):
    from liveroom_sim.policies.learned import initial_parameters

    report, rows = _run(tmp_path, policy=PolicySpec(kind="learned", parameters=initial_parameters(0.0)))
    returns = [r["return"] for r in rows if r["group_id"] == 0]
    assert len(set(returns)) > 1  # same seed, different samples
    assert all(r["decisions"] for r in rows)


def test_serial_and_async_backends_give_the_same_returns(tmp_path):
    _, serial = _run(tmp_path, "s.jsonl", backend="serial")
    _, many = _run(tmp_path, "a.jsonl", backend="async", in_flight=8)
    key = lambda r: (r["group_id"], r["sample_index"])  # noqa: E731
    assert [r["return"] for r in sorted(serial, key=key)] == [r["return"] for r in sorted(many, key=key)]


def test_resume_skips_what_the_file_holds_and_keeps_unfinished_groups(tmp_path):
    out = tmp_path / "r.jsonl"
    _run(tmp_path, episodes=4)
    pending = out.with_name(out.name + ".pending")
    pending.write_text(json.dumps({**_rows(out)[0], "group_id": 1, "sample_index": 0, "advantage": None}) + "\n")
    report, rows = _run(tmp_path, resume=True)
    assert report["skipped_by_resume"] == 5 and report["episodes"] == 3
    assert len(rows) == 8 and not pending.exists()


def test_a_short_endpoint_outage_is_waited_out_and_no_key_is_written(tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=FaultPlan(schedule={0: "500", 1: "500", 2: "500"})) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0)
        os.environ["OPENAI_API_KEY"] = "sk-never-logged-000"
        try:
            report, rows = _run(tmp_path, policy=policy, backend="serial", episodes=4, group_size=2)
        finally:
            del os.environ["OPENAI_API_KEY"]
    # Three 5xx in a row are an outage, waited out: the first episode pauses, then plays on.
    assert report["episodes"] == 4 and len(rows) == 4 and report["infra_failures"] == 0
    assert report["truncated_by_policy"] == 0 and rows[0]["waited_s"] > 0 and rows[0]["error"] is None
    assert all(r["return"] is not None and r["steps"] > 0 for r in rows)
    assert "sk-never-logged-000" not in (tmp_path / "r.jsonl").read_text()


def test_rollout_command_prints_a_closing_report(tmp_path):
    out = tmp_path / "cli.jsonl"
    done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "rollout", "--env", TINY, "--policy", "naive",
                           "--episodes", "4", "--group-size", "2", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["episodes"] == 4 and "[rollout] 4/4 episodes" in done.stderr


def test_rollout_command_with_a_model_and_the_direct_client_matches_the_openai_client(tmp_path):
    def rollout(name, *extra):
        done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "rollout", "--env", TINY, "--policy", "openai",
                               "--model", "m", "--base-url", srv.base_url, "--backend", "async", "--in-flight", "4",
                               "--episodes", "4", "--group-size", "2", "--out", str(tmp_path / name), *extra],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return _rows(tmp_path / name)

    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        through_openai, direct = rollout("openai.jsonl"), rollout("direct.jsonl", "--direct")
    assert [r["policy"].get("direct") for r in direct] == [True] * 4
    assert all(r["accounting"]["calls"] == r["steps"] > 0 and r["error"] is None for r in direct)
    key = lambda r: (r["group_id"], r["sample_index"])  # noqa: E731
    assert [r["return"] for r in sorted(direct, key=key)] == [r["return"] for r in sorted(through_openai, key=key)]


@pytest.mark.ray
def test_ray_backend_matches_serial_with_one_and_two_workers(tmp_path, ray_session):
    _, serial = _run(tmp_path, "s.jsonl")
    one_report, one = _run(tmp_path, "r1.jsonl", backend="ray", workers=1)
    _, two = _run(tmp_path, "r2.jsonl", backend="ray", workers=2)
    key = lambda r: (r["group_id"], r["sample_index"])  # noqa: E731
    expected = [r["return"] for r in sorted(serial, key=key)]
    assert [r["return"] for r in sorted(one, key=key)] == expected == [r["return"] for r in sorted(two, key=key)]
    assert one_report["errors"] == 0


@pytest.mark.ray
def test_a_ray_worker_that_dies_is_replaced_and_its_episode_replayed(tmp_path, ray_session):
    killed = []

    def kill_first_worker(record):
        if not killed and record.get("worker_pid"):
            killed.append(record["worker_pid"])
            os.kill(record["worker_pid"], signal.SIGKILL)

    from liveroom_sim.rollout import records as records_module

    original = records_module.RecordFile.add

    def spy(self, record, *args):
        kill_first_worker(record)
        return original(self, record, *args)

    records_module.RecordFile.add = spy
    try:
        report, rows = _run(tmp_path, backend="ray", workers=2, episodes=16, in_flight=2)
    finally:
        records_module.RecordFile.add = original
    assert killed and report["worker_restarts"] >= 1
    assert len(rows) == 16 and report["errors"] == 0
