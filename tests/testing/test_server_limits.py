"""The test server under a beating: bounded request log, slow and idle clients, too many
connections, descriptor exhaustion, and every malformed body shape answered with a 400."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import time

import pytest

from liveroom_sim.testing import OpenAICompatServer

MESSAGES = [{"role": "user", "content": "hi"}]


def _post(srv, body: bytes | dict, path="/v1/chat/completions"):
    host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn.request("POST", path, body=data, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    return conn, response.status, json.loads(response.read())


def _address(srv) -> tuple[str, int]:
    host, port = srv.base_url.split("//")[1].split("/")[0].split(":")
    return host, int(port)


def test_the_request_log_keeps_only_the_latest_bodies_and_counts_them_all():
    with OpenAICompatServer(max_logged_requests=5) as srv:
        for i in range(12):
            _post(srv, {"model": "m", "messages": [{"role": "user", "content": str(i)}]})[0].close()
        assert srv.request_count == 12
        assert [r["messages"][0]["content"] for r in srv.requests] == [str(i) for i in range(7, 12)]


@pytest.mark.parametrize("body", [
    b"[" * 100_000 + b"]" * 100_000,
    b'{"messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    {"messages": MESSAGES, "stream": True, "stream_options": "yes"},
    {"messages": MESSAGES, "stream": True, "stream_options": {"include_usage": "please"}},
    {"messages": MESSAGES, "stream": "true"},
    {"messages": [{"role": 3, "content": "hi"}]},
    {"messages": [{"role": "user", "content": 5}]},
    {"messages": MESSAGES, "tools": "lookup"},
    {"messages": MESSAGES, "tools": ["lookup"]},
    {"messages": MESSAGES, "temperature": "hot"},
    {"messages": MESSAGES, "model": ["m"]},
    b"\xff\xfe not json",
])
def test_every_malformed_body_shape_gets_a_400_and_the_connection_stays_usable(body):
    with OpenAICompatServer() as srv:
        conn, status, answer = _post(srv, body)
        assert status == 400 and answer["error"]["message"]
        conn.request("POST", "/v1/chat/completions", body=json.dumps({"messages": MESSAGES}))
        assert conn.getresponse().status == 200  # the same keep-alive connection
        conn.close()


def test_a_client_that_sends_its_request_too_slowly_gets_a_408():
    with OpenAICompatServer(header_timeout=0.3) as srv:
        with socket.create_connection(_address(srv), timeout=5) as sock:
            sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # and never the rest
            started = time.monotonic()
            answer = sock.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 4


def test_an_idle_keep_alive_connection_is_closed_after_the_idle_timeout():
    with OpenAICompatServer(idle_timeout=0.3) as srv:
        with socket.create_connection(_address(srv), timeout=5) as sock:
            started = time.monotonic()
            assert sock.recv(4096) == b""
        assert time.monotonic() - started < 4


def test_connections_past_the_limit_get_a_503_not_a_hang():
    with OpenAICompatServer(max_connections=2, idle_timeout=10) as srv:
        held = [socket.create_connection(_address(srv), timeout=5) for _ in range(2)]
        time.sleep(0.2)
        with socket.create_connection(_address(srv), timeout=5) as extra:
            assert extra.recv(4096).startswith(b"HTTP/1.1 503")
        for sock in held:
            sock.close()
        time.sleep(0.2)
        assert _post(srv, {"messages": MESSAGES})[1] == 200


SERVER_AT_A_LOW_DESCRIPTOR_LIMIT = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
from liveroom_sim.testing import OpenAICompatServer
srv = OpenAICompatServer(header_timeout=2).start()
print(srv.base_url, flush=True)
sys.stdin.readline()
srv.stop()
"""


@pytest.mark.skipif(sys.platform == "win32", reason="descriptor limits are POSIX")
def test_descriptor_exhaustion_neither_floods_the_log_nor_kills_the_server(tmp_path):
    err = tmp_path / "stderr.txt"
    with err.open("w") as stderr:
        server = subprocess.Popen([sys.executable, "-c", SERVER_AT_A_LOW_DESCRIPTOR_LIMIT], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=stderr, text=True)
        try:
            url = server.stdout.readline().strip()
            host, port = url.split("//")[1].split("/")[0].split(":")
            slow = [socket.create_connection((host, int(port)), timeout=5) for _ in range(300)]
            for sock in slow:
                sock.send(b"GET /v1/models HTTP/1.1\r\n")
            time.sleep(4)  # past header_timeout: the slow ones are answered 408 and closed
            for sock in slow:
                sock.close()
            time.sleep(1.5)  # asyncio retries accepting after a second
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            conn.request("GET", "/v1/models")
            assert conn.getresponse().status == 200
            conn.close()
        finally:
            server.communicate("\n", timeout=20)
    assert err.stat().st_size < 20_000  # was 23 MB in 8 s
