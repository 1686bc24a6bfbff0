"""HSA-SFT export: teacher trajectories under K harness variants, chat format, filtered."""

from __future__ import annotations

import json
import subprocess
import sys

import liveroom_sim  # noqa: F401
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import OpenAICompatServer, policy_responder
from liveroom_sim.train.sft import export_sft

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_export_writes_chat_examples_under_k_harness_variants(tmp_path):
    out = tmp_path / "sft.jsonl"
    counts = export_sft("LiveRoom-v0", episodes=1, augment=3, out=out, teacher=ScriptedAvatar(), progress=False)
    rows = _rows(out)
    assert counts["written"] == len(rows) > 50 and counts["variants"] == 3
    first = {}
    for r in rows:
        first.setdefault(r["meta"]["variant"], tuple(t["function"]["name"] for t in r["tools"]))
    assert len(set(first.values())) == 3  # three harness variants, each with its own tool names
    for r in rows[:50]:
        roles = [m["role"] for m in r["messages"]]
        assert roles[0] == "system" and roles[-1] == "assistant" and "user" in roles
        assert r["messages"][-1]["content"] and r["reward"] >= 0.0
    with_tools = [r for r in rows if any(m.get("tool_calls") for m in r["messages"])]
    assert with_tools and any(m["role"] == "tool" for m in with_tools[0]["messages"])


def test_export_filters_replies_below_the_threshold(tmp_path):
    lenient, strict = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a = export_sft("LiveRoom-v0", 1, 1, lenient, ScriptedAvatar(), min_reward=-100, progress=False)
    b = export_sft("LiveRoom-v0", 1, 1, strict, ScriptedAvatar(), min_reward=3.0, progress=False)
    assert b["written"] < a["written"] and all(r["reward"] >= 3.0 for r in _rows(strict))


def test_export_sft_command_with_an_openai_compatible_teacher(tmp_path):
    out = tmp_path / "sft.jsonl"
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        done = subprocess.run(
            [sys.executable, "-m", "liveroom_sim.cli.main", "export-sft", "--env", TINY, "--episodes", "1",
             "--augment", "2", "--out", str(out), "--base-url", srv.base_url, "--model", "teacher"],
            capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["written"] == len(_rows(out)) > 0
