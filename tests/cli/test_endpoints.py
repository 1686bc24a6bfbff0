"""An endpoint that is unreachable, wrong or keeps failing: exit 1 and one line naming the
URL (credentials removed) and the cause, for every command that calls one."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from liveroom_sim.cli.common import redact_url
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import FaultPlan, OpenAICompatServer, policy_responder

TINY = "tests/fixtures/tiny/tiny-v0.yaml"
DEAD = "http://user:hunter2secret@127.0.0.1:9/v1"


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    # No outage patience: an endpoint that keeps failing is given up on at once.
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}, "LIVEROOM_PATIENCE_S": "0"}
    return subprocess.run([sys.executable, "-m", "liveroom_sim.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def commands(url: str, tmp_path) -> dict[str, list[str]]:
    llm = ["--base-url", url, "--model", "m"]
    return {
        "demo": ["demo", "--env", TINY, "--policy", "openai", *llm],
        "latency": ["latency", "--env", TINY, "--sessions", "1", "--turns", "2", *llm],
        "rollout": ["rollout", "--env", TINY, "--policy", "openai", "--episodes", "1", "--out",
                    str(tmp_path / "r.jsonl"), *llm],
        "export-sft": ["export-sft", "--env", TINY, "--episodes", "1", "--augment", "1", "--out",
                       str(tmp_path / "s.jsonl"), *llm],
    }


def assert_one_line_naming(done: subprocess.CompletedProcess, command: str, url: str, cause: str) -> None:
    lines = [line for line in done.stderr.splitlines() if ": error:" in line]
    assert done.returncode == 1, done.stderr
    assert len(lines) == 1 and lines[0].startswith(f"liveroom {command}: error:"), done.stderr
    assert redact_url(url) in lines[0] and cause in lines[0]
    assert "hunter2secret" not in done.stdout + done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("command", ["demo", "latency", "rollout", "export-sft"])
def test_an_unreachable_endpoint(command, tmp_path):
    done = cli(*commands(DEAD, tmp_path)[command])
    assert_one_line_naming(done, command, DEAD, "cannot reach")


@contextlib.contextmanager
def not_an_llm_server():
    """A web server that answers every request with an HTML page (a wrong --base-url)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = b"<html><body>It works!</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_GET

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("command", ["demo", "rollout"])
def test_a_wrong_endpoint(command, tmp_path):
    with not_an_llm_server() as url:
        done = cli(*commands(url, tmp_path)[command])
    assert_one_line_naming(done, command, url, "not an OpenAI-compatible server")


@pytest.mark.parametrize("command", ["demo", "rollout", "export-sft", "latency"])
def test_an_endpoint_that_keeps_failing(command, tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), faults=FaultPlan(rates={"500": 1.0})) as srv:
        url = srv.base_url
        done = cli(*commands(url, tmp_path)[command], "--model", "test-model")
    assert_one_line_naming(done, command, url, "500")


def test_a_model_the_endpoint_does_not_list_is_a_warning_with_did_you_mean(tmp_path):
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), model="qwen3-8b") as srv:
        done = cli("demo", "--env", TINY, "--base-url", srv.base_url, "--model", "qwen3-8", "--brief")
    assert done.returncode == 0, done.stderr
    assert "does not list model 'qwen3-8' (did you mean 'qwen3-8b'?)" in done.stderr


def test_redact_url_drops_credentials_and_keys():
    assert redact_url("https://bob:pw@api.example.com/v1?key=abc123") == "https://api.example.com/v1?key=***"
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"
