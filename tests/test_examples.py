"""Every example script runs as a user would run it and prints what it promises."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))
COMPONENTS = ("factuality", "compliance", "engagement", "strategy", "harness", "tools", "outcome", "total")


def run(script: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=180,
                          cwd=script.parent.parent)
    assert done.returncode == 0, f"{script.name} failed:\n{done.stderr[-3000:]}"
    return done.stdout


def test_there_are_examples():
    assert {"gym_loop.py", "custom_spec.py"} <= {s.name for s in SCRIPTS}


@pytest.mark.parametrize("script", SCRIPTS, ids=[s.name for s in SCRIPTS])
def test_every_example_runs(script):
    assert run(script).strip()


def _returns(out: str) -> dict[str, float]:
    return {k: float(v) for k, v in re.findall(r"^  (\w+)\s+([+-]\d+\.\d\d)$", out, re.M)}


@pytest.mark.parametrize("args, header", [
    ((), r"^LiveRoom-v0 seed 0: \d+ steps, terminated$"),
    (("--env", "LiveRoom-zh-v0", "--seed", "3"), r"^LiveRoom-zh-v0 seed 3: \d+ steps, terminated$"),
])
def test_gym_loop_prints_the_return_by_component(args, header):
    out = run(EXAMPLES / "gym_loop.py", *args)
    assert re.search(header, out, re.M)
    returns = _returns(out)
    assert tuple(returns) == COMPONENTS
    assert returns["total"] > 0  # the scripted avatar is a decent host
    assert re.search(r"^answered \d+, ignored \d+, purchases \d+, GMV \d+\.\d\d$", out, re.M)


def test_gym_loop_seed_changes_the_episode():
    assert _returns(run(EXAMPLES / "gym_loop.py", "--seed", "1")) != _returns(run(EXAMPLES / "gym_loop.py"))


def test_custom_spec_registers_and_its_persona_shows_up():
    out = run(EXAMPLES / "custom_spec.py")
    assert re.search(r"^registered NightOwl-v0; 40 steps, return [+-]\d+\.\d\d$", out, re.M)
    owls = re.search(r"^night owls in the chat: (.+)$", out, re.M).group(1)
    assert owls.startswith("nightowl_")
    assert re.search(r"^metrics: \d+ viewers, \d+ answered$", out, re.M)
