"""Chaos: hostile endpoint answers, outages, exceptions, torn writes and killed writers.
Each asserts that nothing is lost and nothing hangs (bounded in count and time)."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time

import pytest

from liveroom_sim import resolve_env_id
from liveroom_sim.llm.avatar import OpenAIAvatar
from liveroom_sim.llm.client import Endpoint, EndpointError
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.rollout.policy_spec import PolicySpec
from liveroom_sim.rollout.records import RecordFileError
from liveroom_sim.rollout.runner import RolloutConfig, run_rollouts
from liveroom_sim.testing import FaultPlan, OpenAICompatServer, policy_responder, scripted_responder
from liveroom_sim.train.sft import export_sft

TINY = "tests/fixtures/tiny/tiny-v0.yaml"
KEY = lambda r: (r["group_id"], r["sample_index"])  # noqa: E731


def _rows(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def _config(out, **kw):
    return RolloutConfig(**{"env": TINY, "policy": PolicySpec(kind="scripted"), "episodes": 8, "group_size": 4,
                            "out": out, "progress": False, **kw})


def _same(rows, reference):
    """The same episodes, each once, with the same returns and transcripts."""
    assert sorted(map(KEY, rows)) == sorted(map(KEY, reference)), "an episode is missing or written twice"
    mine, theirs = {KEY(r): r for r in rows}, {KEY(r): r for r in reference}
    for key, r in mine.items():
        assert (r["return"], r["messages"], r["advantage"]) == (theirs[key]["return"], theirs[key]["messages"],
                                                                theirs[key]["advantage"])


# ---------------------------------------------------------------- what models say
@pytest.mark.parametrize("backend", ["serial", "async"])
def test_a_lone_surrogate_in_a_reply_is_stored_as_the_room_heard_it_and_flagged(tmp_path, backend):
    reply = "@mia hi \ud83d, the serum is $25 \udfff today"
    with OpenAICompatServer(scripted_responder([reply])) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url)
        report = run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, backend=backend, episodes=4, group_size=2))
        again = run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, backend=backend, episodes=4, group_size=2,
                                     resume=True))
    rows = _rows(tmp_path / "r.jsonl")
    assert report["episodes"] == len(rows) == 4 and report["errors"] == 0 and again["episodes"] == 0
    said = [m["content"] for r in rows for m in r["messages"] if m["role"] == "assistant" and m.get("content")]
    assert reply.replace("\ud83d", "\ufffd").replace("\udfff", "\ufffd") in said  # as the room heard it
    assert all(r["invalid_code_points"] >= 2 for r in rows)
    (tmp_path / "r.jsonl").read_bytes().decode("utf-8")  # the file itself is valid UTF-8


def test_hostile_answers_are_the_policys_actions_and_truncate_nothing(tmp_path):
    plan = FaultPlan(rates={"500": 0.3, "bad_tool_call": 0.3, "empty_choices": 0.1}, seed=3, retry_after=0.01)
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=plan) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=2, direct=True)
        report = run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, backend="async", episodes=8,
                                      group_size=4, in_flight=8, patience_s=30))
    rows = _rows(tmp_path / "r.jsonl")
    assert len(rows) == 8 and report["infra_failures"] == 0 and report["errors"] == 0
    assert report["truncated_by_policy"] == 0 and all(r["reason"] is None for r in rows)
    assert report["policy_faults"] > 0 and all(r["advantage"] is not None for r in rows)
    tool_errors = [m for r in rows for m in r["messages"] if m["role"] == "tool" and "error" in m["content"].lower()]
    assert tool_errors  # the broken tool calls reached the room and were answered with errors


def test_an_exception_inside_an_episode_becomes_its_error_record_with_the_transcript(tmp_path, monkeypatch):
    class Breaks(ScriptedAvatar):
        calls = 0

        def __call__(self, observation, info):
            Breaks.calls += 1
            if Breaks.calls == 3:
                raise RuntimeError("the policy tripped")
            return super().__call__(observation, info)

    monkeypatch.setattr(PolicySpec, "build", lambda self, sample_seed=0: Breaks())
    report = run_rollouts(_config(tmp_path / "r.jsonl", episodes=4, group_size=2))
    rows = sorted(_rows(tmp_path / "r.jsonl"), key=KEY)
    assert report["episodes"] == len(rows) == 4 and report["errors"] == 1
    broken = rows[0]
    assert broken["error"].startswith("RuntimeError: the policy tripped at test_chaos.py:")
    assert broken["steps"] == 2 and len(broken["messages"]) > 2 and broken["advantage"] is None
    assert all(r["error"] is None and r["advantage"] is not None for r in rows[1:])


# ---------------------------------------------------------------- outages
def test_an_outage_in_the_middle_of_a_rollout_is_waited_out(tmp_path):
    srv = OpenAICompatServer(policy_responder(ScriptedAvatar())).start()
    port = int(srv.base_url.rsplit(":", 1)[1].split("/")[0])
    policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0, direct=True)
    config = _config(tmp_path / "r.jsonl", policy=policy, backend="async", episodes=8, group_size=4, in_flight=8,
                     patience_s=30)
    import threading

    def outage():
        while srv.request_count < 40:
            time.sleep(0.01)
        srv.stop()  # down for 3 s, then back on the same port
        time.sleep(3)
        back.append(OpenAICompatServer(policy_responder(ScriptedAvatar()), port=port).start())

    back = []
    threading.Thread(target=outage, daemon=True).start()
    started = time.monotonic()
    report = run_rollouts(config)
    rows = _rows(tmp_path / "r.jsonl")
    assert len(rows) == 8 and report["infra_failures"] == 0 and report["errors"] == 0
    assert time.monotonic() - started > 3 and sum(r["waited_s"] for r in rows) > 0
    assert all(r["steps"] > 5 and r["reason"] is None for r in rows)
    back[0].stop()


def test_an_outage_past_the_patience_leaves_the_groups_for_resume_and_names_the_cause(tmp_path):
    dead = PolicySpec(kind="openai", model="m", base_url="http://127.0.0.1:9/v1", max_retries=0)
    out = tmp_path / "r.jsonl"
    report = run_rollouts(_config(out, policy=dead, patience_s=0, on_infra_failure="drop", episodes=4, group_size=2))
    assert report["infra_failures"] == 4 and report["incomplete_groups"] == 2 and _rows(out) == []
    failures = _rows(out.with_name("r.jsonl.failures"))
    assert len(failures) == 4 and all(r["infra"] for r in failures)
    assert all("connection refused" in r["error"] and "timed out" not in r["error"] for r in failures)
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        live = PolicySpec(kind="openai", model="m", base_url=srv.base_url)
        again = run_rollouts(_config(out, policy=live, resume=True, episodes=4, group_size=2))
    rows = _rows(out)
    assert again["episodes"] == 4 and len(rows) == 4 and all(r["error"] is None and not r["infra"] for r in rows)


def test_infrastructure_failures_are_rerun_and_never_join_a_group(tmp_path):
    plan = FaultPlan(schedule={i: "503" for i in range(3)})
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=plan) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0)
        report = run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, patience_s=0, episodes=4, group_size=2,
                                      infra_retries=3))
    rows = _rows(tmp_path / "r.jsonl")
    assert report["infra_failures"] == 3 and report["incomplete_groups"] == 0
    assert len(rows) == 4 and all(r["error"] is None and r["advantage"] is not None for r in rows)


# ---------------------------------------------------------------- secrets
def test_keys_in_the_base_url_and_in_server_messages_are_never_written(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-key-0123456789")

    def echo_the_key(request, index):
        raise ValueError("bad key sk-env-key-0123456789 for user sk-url-user-secret")

    with OpenAICompatServer(echo_the_key) as srv:
        with_user = srv.base_url.replace("http://", "http://sk-url-user-secret@")
        url = with_user + "?api-key=sk-query-secret-42"  # the openai client puts its path after the query: a 404
        avatar = OpenAIAvatar(Endpoint("m", with_user, max_retries=0))
        with pytest.raises(EndpointError) as err:
            avatar("", {"messages": [{"role": "user", "content": "x"}], "tools": []})
        assert err.value.__context__ is None and err.value.__cause__ is None
        chain = f"{err.value} {err.value.__context__} {err.value.__cause__}"
        policy = PolicySpec(kind="openai", model="m", base_url=url, max_retries=0)
        run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, patience_s=0, episodes=2, group_size=1,
                             on_infra_failure="drop"))
    written = chain + "".join(p.read_text() for p in tmp_path.iterdir())
    assert "HTTP 500" in chain and "HTTP 404" in written
    for secret in ("sk-env-key-0123456789", "sk-url-user-secret", "sk-query-secret-42"):
        assert secret not in written


# ---------------------------------------------------------------- files
def test_rollout_refuses_to_overwrite_and_resume_checks_the_settings(tmp_path):
    out = tmp_path / "r.jsonl"
    with pytest.raises(RecordFileError, match="nothing to resume"):
        run_rollouts(_config(out, resume=True))
    run_rollouts(_config(out, episodes=4))
    with pytest.raises(RecordFileError, match="--resume .* or --force"):
        run_rollouts(_config(out))
    with pytest.raises(RecordFileError, match="group_size 4 \\(this run: 2\\)"):
        run_rollouts(_config(out, resume=True, group_size=2))
    with pytest.raises(RecordFileError, match="policy kind 'scripted' \\(this run: 'naive'\\)"):
        run_rollouts(_config(out, resume=True, policy=PolicySpec(kind="naive")))
    with pytest.raises(RecordFileError, match="first seed 0 \\(this run: 5\\)"):
        run_rollouts(_config(out, resume=True, seed=5))
    assert run_rollouts(_config(out, force=True, episodes=8))["episodes"] == 8 and len(_rows(out)) == 8


def test_the_rollout_command_refuses_to_overwrite_unless_forced(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("precious\n")
    args = [sys.executable, "-m", "liveroom_sim.cli.main", "rollout", "--env", TINY, "--episodes", "2", "--out", str(out)]
    refused = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "--force" in refused.stderr and out.read_text() == "precious\n"
    forced = subprocess.run([*args, "--force"], capture_output=True, text=True, timeout=120)
    assert forced.returncode == 0 and len(_rows(out)) == 2


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "clean.jsonl"
    run_rollouts(_config(out, episodes=24, group_size=4, policy=PolicySpec(kind="naive")))
    return out, _rows(out)


def test_a_file_torn_at_random_points_is_repaired_and_completed_by_resume(tmp_path, clean_run):
    clean, reference = clean_run
    data = clean.read_bytes()
    rng = random.Random(18)
    for trial, cut in enumerate(sorted(rng.sample(range(1, len(data)), 6))):
        out = tmp_path / f"torn-{trial}.jsonl"
        out.write_bytes(data[:cut])
        report = run_rollouts(_config(out, resume=True, episodes=24, group_size=4, policy=PolicySpec(kind="naive")))
        _same(_rows(out), reference)
        whole_groups = data[:cut].count(b"\n") // 4
        assert report["skipped_by_resume"] == whole_groups * 4  # a partly written group is played again whole
        torn = out.with_name(out.name + ".torn")
        assert torn.exists() == (cut != len(data[:cut].rsplit(b"\n", 1)[0]) + 1 or data[:cut].count(b"\n") % 4 != 0)
        # A second resume finds everything done and changes nothing.
        assert run_rollouts(_config(out, resume=True, episodes=24, group_size=4,
                                    policy=PolicySpec(kind="naive")))["episodes"] == 0
        _same(_rows(out), reference)


def test_a_torn_line_with_groups_glued_after_it_is_cut_out(tmp_path, clean_run):
    clean, reference = clean_run
    lines = clean.read_bytes().splitlines(keepends=True)
    out = tmp_path / "glued.jsonl"
    # As the old writer left it: half a line, then later groups appended straight after it.
    out.write_bytes(b"".join(lines[:8]) + lines[8][:100] + b"".join(lines[12:]))
    run_rollouts(_config(out, resume=True, episodes=24, group_size=4, policy=PolicySpec(kind="naive")))
    _same(_rows(out), reference)
    assert out.with_name("glued.jsonl.torn").read_bytes().startswith(lines[8][:100])


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_a_writer_killed_at_random_points_loses_nothing(tmp_path, clean_run):
    _, reference = clean_run
    out = tmp_path / "killed.jsonl"
    base = [sys.executable, "-m", "liveroom_sim.cli.main", "rollout", "--env", TINY, "--policy", "naive",
            "--episodes", "24", "--group-size", "4", "--out", str(out)]
    rng = random.Random(7)
    for attempt in range(4):  # bounded: kill up to three times, then let it finish
        args = base + (["--resume"] if out.exists() else [])
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt < 3:
            time.sleep(rng.uniform(1.5, 4.0))  # imports take about 1.5 s; the run about 3 s
            proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=120) in (0, -signal.SIGKILL)
    _same(_rows(out), reference)


def test_export_sft_goes_on_after_an_endpoint_failure(tmp_path):
    plan = FaultPlan(schedule={3: "500"})  # the fourth call, in the first variant
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=plan) as srv:
        teacher = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=0))
        counts = export_sft(resolve_env_id(TINY), episodes=1, augment=3, out=tmp_path / "sft.jsonl", teacher=teacher,
                            progress=False, patience_s=0)
    assert counts["variants"] == 3 and counts["failed_variants"] == 1 and "HTTP 500" in counts["failures"][0]
    rows = _rows(tmp_path / "sft.jsonl")
    assert len(rows) == counts["written"] and {r["meta"]["variant"] for r in rows} == {0, 1, 2}


# ---------------------------------------------------------------- runs that must not look fine
def _cli(*args: str) -> subprocess.CompletedProcess:
    import os

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}, "LIVEROOM_PATIENCE_S": "0"}
    return subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", *args], capture_output=True, text=True,
                          timeout=180, env=env)


def _one_line_reason(done: subprocess.CompletedProcess, command: str = "rollout") -> str:
    """The run failed: a non-zero exit and exactly one error line on stderr, no traceback."""
    errors = [line for line in done.stderr.splitlines() if ": error:" in line]
    assert done.returncode != 0, done.stderr
    assert len(errors) == 1 and errors[0].startswith(f"liveroom {command}: error: "), done.stderr
    assert "Traceback" not in done.stderr
    return errors[0]


def test_chaos_an_endpoint_that_answers_only_empty_choices_fails_the_run(tmp_path):
    out = tmp_path / "r.jsonl"
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=FaultPlan(rates={"empty_choices": 1.0})) as srv:
        url = srv.base_url
        done = _cli("rollout", "--env", TINY, "--policy", "openai", "--base-url", url, "--model", "m",
                    "--episodes", "2", "--out", str(out))
    reason = _one_line_reason(done)
    assert done.returncode == 1 and "no choices" in reason and url in reason
    rows = _rows(out)  # the records are kept, and say what happened
    assert rows and all(r["policy_faults"] == r["steps"] > 0 for r in rows)


def test_chaos_a_run_whose_every_episode_crashes_fails_whatever_the_policy(tmp_path):
    broken = tmp_path / "policy.json"
    broken.write_text(json.dumps({"kind": "liveroom-learned-avatar", "parameters": {"respond": {}}}))
    done = _cli("rollout", "--env", TINY, "--policy", str(broken), "--episodes", "3", "--out", str(tmp_path / "r.jsonl"))
    reason = _one_line_reason(done)
    assert "3 of 3 episodes failed" in reason and "KeyError" in reason


def test_chaos_a_spec_file_that_reuses_a_built_in_id_is_refused(tmp_path):
    from liveroom_sim.world.paths import ENVS_DIR

    spec = tmp_path / "LiveRoom-v0.yaml"
    spec.write_text(f"extends: {(ENVS_DIR / 'LiveRoom-v0.yaml').resolve()}\nid: LiveRoom-v0\nstream:\n  duration_s: 120\n")
    done = _cli("rollout", "--env", str(spec), "--episodes", "1", "--out", str(tmp_path / "r.jsonl"))
    reason = _one_line_reason(done)
    assert done.returncode == 2 and "LiveRoom-v0" in reason and "built-in" in reason
    assert not (tmp_path / "r.jsonl").exists()


def test_a_spec_file_may_not_replace_a_built_in_env_in_the_same_process(tmp_path):
    import gymnasium as gym

    import liveroom_sim
    from liveroom_sim.errors import SpecError
    from liveroom_sim.world.paths import ENVS_DIR

    spec = tmp_path / "LiveRoom-v0.yaml"
    spec.write_text(f"extends: {(ENVS_DIR / 'LiveRoom-v0.yaml').resolve()}\nid: LiveRoom-v0\nstream:\n  duration_s: 120\n")
    with pytest.raises(SpecError, match="registered already for the built-in env"):
        resolve_env_id(str(spec))
    assert gym.make("LiveRoom-v0").unwrapped.world.spec.stream.duration_s == 900
    assert liveroom_sim.register_spec(spec, env_id="My120-v0") == "My120-v0"  # under its own id it is fine


def test_resume_compares_the_specs_content_not_its_id(tmp_path, tiny_dir):
    spec = tiny_dir / "tiny-v0.yaml"
    out = tmp_path / "r.jsonl"
    first = run_rollouts(_config(out, env=str(spec), episodes=4, group_size=2))
    rows = _rows(out)
    assert first["provenance"]["spec_id"] == "Tiny-v0" and len(first["provenance"]["spec_digest"]) == 16
    assert all(r["provenance"] == first["provenance"] for r in rows)  # every record says where it comes from
    spec.write_text(spec.read_text().replace("duration_s: 120", "duration_s: 60"))
    with pytest.raises(RecordFileError, match="another version of the spec of 'Tiny-v0'"):
        run_rollouts(_config(out, env=str(spec), episodes=8, group_size=2, resume=True))
    assert _rows(out) == rows  # nothing was mixed in


def test_progress_counts_each_episode_once_when_failed_ones_are_played_again(tmp_path, capsys):
    plan = FaultPlan(schedule={i: "503" for i in range(3)})
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=plan) as srv:
        policy = PolicySpec(kind="openai", model="m", base_url=srv.base_url, max_retries=0)
        report = run_rollouts(_config(tmp_path / "r.jsonl", policy=policy, patience_s=0, episodes=2, group_size=1,
                                      infra_retries=3, progress=True))
    err = capsys.readouterr().err
    counts = [tuple(map(int, m)) for m in __import__("re").findall(r"\] (\d+)/(\d+) episodes", err)]
    assert "\r" not in err and counts and all(done <= total == 2 for done, total in counts)  # a log, never "4/2"
    assert counts[-1] == (2, 2) and "played again 3" in err
    assert report["episodes"] == 2 and report["played_again"] == 3 and report["workers"] == 1


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE")
def test_a_full_disk_names_the_file_it_could_not_write(tmp_path):
    import resource

    def small_files():  # as a full disk does: a write fails (EFBIG, like ENOSPC, names no file)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "r.jsonl"
    done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "rollout", "--env", TINY, "--episodes", "1",
                           "--out", str(out)], capture_output=True, text=True, timeout=180, preexec_fn=small_files)
    reason = _one_line_reason(done)
    assert done.returncode == 2 and f"cannot write {out}" in reason and "File too large" in reason
