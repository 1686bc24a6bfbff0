"""``liveroom serve``: the command a new user runs second (after ``pip install``), and its errors."""

from __future__ import annotations

import subprocess
import sys

from liveroom_sim.cli.main import main


def test_the_check_steps_a_served_room_with_openenvs_client():
    """docs/serving.md's second command, as a user runs it (a free port instead of 8000)."""
    done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli", "serve", "--check", "3", "--port", "0"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "OpenEnv client connected" in lines[0] and "'spec_id': 'LiveRoom-v0'" in lines[0]
    assert [line.split(":")[0] for line in lines[1:4]] == ["step 1", "step 2", "step 3"]
    assert lines[-1].startswith("ok: 3 steps over the wire") and "/mcp" in lines[-1]


def test_the_check_with_a_token(capsys):
    assert main(["serve", "--check", "2", "--port", "0", "--token", "t0ken"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("ok: 2 steps over the wire")


def test_bad_options_are_one_line_errors(capsys):
    assert main(["serve", "--env", "LiveRoom-v9", "--check", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("liveroom serve: error: unknown env 'LiveRoom-v9'") and "LiveRoom-v0" in err
    assert main(["serve", "--env", "nowhere/spec.yaml"]) == 2
    assert "does not exist" in capsys.readouterr().err
    try:
        main(["serve", "--max-sessions", "0"])
    except SystemExit as e:
        assert e.code == 2
    assert "--max-sessions" in capsys.readouterr().err
