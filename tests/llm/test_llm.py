"""LLM avatars and LLM-phrased viewers against the real local OpenAI-compatible server."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import gymnasium as gym
import pytest

import liveroom_sim
from liveroom_sim.episode import aplay, play
from liveroom_sim.llm import Endpoint
from liveroom_sim.llm_policy import EndpointError, OpenAIAvatar
from liveroom_sim.policies import ScriptedAvatar
from liveroom_sim.testing import (
    FaultPlan,
    OpenAICompatServer,
    policy_responder,
    scripted_responder,
)

TINY = "tests/fixtures/tiny/tiny-v0.yaml"


def _tiny(**kwargs):
    return gym.make(liveroom_sim.register_spec(TINY), **kwargs)


def test_openai_avatar_plays_a_whole_episode_with_tool_calls_and_accounting():
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url), temperature=0.0, seed=1, extra_body={"top_k": 5})
        result = play(_tiny(), avatar, seed=3)
        first = srv.requests[0]
    assert (result.terminated or result.truncated) and result.reason is None and result.steps == 60
    assert result.metrics["tool_errors"] == 0 and result.metrics["questions_answered"] > 0
    assert first["tools"] and first["messages"][0]["role"] == "system"
    assert first["temperature"] == 0.0 and first["seed"] == 1 and first["top_k"] == 5
    acc = result.accounting
    assert acc["calls"] == result.steps and acc["prompt_tokens"] > acc["completion_tokens"] > 0 and acc["errors"] == 0


def test_n_samples_per_request_and_async_calls():
    with OpenAICompatServer(scripted_responder(["a", "b", "c"])) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url))
        info = {"messages": [{"role": "user", "content": "hi"}], "tools": []}
        assert avatar.sample("", info, n=3) == ["a", "b", "c"]
        assert asyncio.run(avatar.acall("", info)) in {"a", "b", "c"}
        assert srv.requests[0]["n"] == 3
    assert avatar.accounting.calls == 2


def test_tool_calls_become_the_envs_tool_action():
    reply = {"content": None, "tool_calls": [{"name": "get_product", "arguments": {"product_id": "sk-a"}}]}
    with OpenAICompatServer(scripted_responder([reply])) as srv:
        action = OpenAIAvatar(Endpoint("m", srv.base_url))("", {"messages": [{"role": "user", "content": "x"}], "tools": []})
    call = json.loads(action)["tool_calls"][0]
    assert call["function"]["name"] == "get_product" and json.loads(call["function"]["arguments"]) == {"product_id": "sk-a"}


@pytest.mark.parametrize("fault", ["429", "500", "503"])
def test_transient_faults_are_retried_by_the_client(fault):
    plan = FaultPlan(schedule={0: fault}, retry_after=0.01)
    with OpenAICompatServer(scripted_responder(["ok"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=2))
        assert avatar("", {"messages": [{"role": "user", "content": "x"}], "tools": []}) == "ok"


DIRECT = pytest.mark.parametrize("direct", [False, True], ids=["openai-client", "direct"])


@DIRECT
def test_async_and_direct_calls_play_the_same_episode_as_sync_calls(direct):
    def episode(mode):
        with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
            avatar = OpenAIAvatar(Endpoint("m", srv.base_url, direct=direct))
            result = play(_tiny(), avatar, seed=5) if mode == "sync" else asyncio.run(aplay(_tiny(), avatar, seed=5))
        return result.returns, result.metrics, avatar.accounting.calls

    assert episode("sync") == episode("async")


@DIRECT
@pytest.mark.parametrize("fault", ["429", "500", "503"])
def test_async_calls_are_retried_by_the_client_too(fault, direct):
    plan = FaultPlan(schedule={0: fault}, retry_after=0.01)
    with OpenAICompatServer(scripted_responder(["ok"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=2, direct=direct))
        assert asyncio.run(avatar.acall("", {"messages": [{"role": "user", "content": "x"}], "tools": []})) == "ok"
        assert len(srv.requests) == 2


@DIRECT
@pytest.mark.parametrize("fault", ["timeout", "disconnect", "malformed_json", "500"])
def test_an_endpoint_outage_past_the_patience_is_an_infrastructure_failure_naming_its_cause(fault, direct,
                                                                                           monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key-123456")
    plan = FaultPlan(rates={fault: 1.0}, timeout_seconds=2.0)
    with OpenAICompatServer(scripted_responder(["hello"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=1, timeout_s=0.5, direct=direct))
        result = asyncio.run(aplay(_tiny(), avatar, seed=0, patience_s=1.5))
        # Asked at once, then after about 1 s (then 2 s would pass the patience); each retried
        # once by the client, except a broken body, which neither client retries.
        assert len(srv.requests) == (2 if fault == "malformed_json" else 4)
    assert result.infra and result.error and result.steps == 0 and "endpoint unavailable" in result.reason
    assert avatar.accounting.errors == 2 and "sk-secret-key-123456" not in json.dumps(result.as_dict())
    expected = {"timeout": "timed out after 0.5 s", "disconnect": "connection",
                "malformed_json": "not valid JSON", "500": "HTTP 500: The server had an error"}[fault]
    assert expected in result.reason


def test_direct_calls_wait_as_long_as_a_429_asks_and_do_not_retry_bad_requests():
    plan = FaultPlan(schedule={0: "429"}, retry_after=0.3)
    info = {"messages": [{"role": "user", "content": "x"}], "tools": []}
    with OpenAICompatServer(scripted_responder(["ok"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, direct=True))
        started = time.monotonic()
        assert asyncio.run(avatar.acall("", info)) == "ok"
        assert time.monotonic() - started >= 0.3
    with OpenAICompatServer(lambda request, i: "unused", faults=FaultPlan(schedule={0: "500"})) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, direct=True))
        with pytest.raises(EndpointError, match="HTTP 400"):  # a bad request is not retried
            asyncio.run(avatar.acall("", {"messages": [], "tools": []}))
        assert srv.requests == []


def test_direct_calls_refuse_a_proxy_with_a_clear_reason_unless_it_is_bypassed(monkeypatch):
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    info = {"messages": [{"role": "user", "content": "x"}], "tools": []}
    with OpenAICompatServer(scripted_responder(["ok"])) as srv:
        assert asyncio.run(OpenAIAvatar(Endpoint("m", srv.base_url, direct=True)).acall("", info)) == "ok"
        monkeypatch.delenv("NO_PROXY")
        with pytest.raises(EndpointError, match="do not go through proxies.*NO_PROXY"):
            asyncio.run(OpenAIAvatar(Endpoint("m", srv.base_url, direct=True)).acall("", info))


@DIRECT
def test_async_clients_are_closed_when_their_event_loop_ends(direct):
    with OpenAICompatServer(scripted_responder(["hi"])) as srv:
        endpoint = Endpoint("m", srv.base_url, direct=direct)
        info = {"messages": [{"role": "user", "content": "x"}], "tools": []}

        async def two_calls():
            avatar = OpenAIAvatar(endpoint)
            replies = [await avatar.acall("", info), await avatar.acall("", info)]
            return replies, endpoint.async_client()

        replies, client = asyncio.run(two_calls())
        assert replies == ["hi", "hi"] and client.is_closed()
        _, second = asyncio.run(two_calls())  # a new loop gets a new, working client
        assert second is not client and second.is_closed()


@pytest.mark.parametrize("fault", ["500", "timeout", "disconnect", "malformed_json"])
def test_an_endpoint_that_stays_down_is_an_infrastructure_failure_with_its_cause(fault, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-key-123456")
    plan = FaultPlan(rates={fault: 1.0}, timeout_seconds=2.0)
    with OpenAICompatServer(scripted_responder(["hello"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=0, timeout_s=0.5))
        result = play(_tiny(), avatar, seed=0, patience_s=0)
    assert result.infra and result.truncated and not result.terminated and result.steps == 0
    assert "endpoint unavailable" in result.reason and "sk-secret-key-123456" not in json.dumps(result.as_dict())


def test_an_endpoint_that_answers_nothing_is_the_policy_saying_nothing_not_a_truncation():
    with OpenAICompatServer(scripted_responder(["hello"]), faults=FaultPlan(rates={"empty_choices": 1.0})) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url, max_retries=0))
        result = play(_tiny(), avatar, seed=0, patience_s=0)
    assert result.error is None and not result.infra and result.reason is None
    assert result.steps > 3 and result.policy_faults == result.steps


def test_overlong_output_is_cut_and_malformed_tool_calls_are_penalised_not_raised():
    plan = FaultPlan(schedule={0: "overlong", 1: "bad_tool_call"}, overlong_chars=50_000)
    with OpenAICompatServer(scripted_responder(["fine"]), faults=plan) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url), max_output_chars=2000)
        env = _tiny().unwrapped
        obs, info = env.reset(seed=0)
        long_action = avatar(obs, info)
        assert len(long_action) <= 2000
        env.step(long_action)
        bad = avatar(obs, info)
        _, reward, *_, info = env.step(bad)
    assert info["reward_breakdown"]["harness"] < 0 and info["turn"]["tool_errors"]


def test_llm_viewers_phrase_messages_and_fall_back_to_templates_on_failure(tmp_path):
    def rephrase(request, index):
        draft = request["messages"][-1]["content"].splitlines()[-1]
        return "[llm] " + draft  # (a mark no template writes: viewers' own openers include "yo")
    spec = tmp_path / "llmview-v0.yaml"
    base = (liveroom_sim.world.paths.ENVS_DIR / "LiveRoom-v0.yaml").resolve()
    with OpenAICompatServer(rephrase) as srv:
        spec.write_text(f"extends: {base}\nid: LLMView-v0\nviewers:\n  llm: {{model: m, base_url: '{srv.base_url}'}}\n")
        env = gym.make(liveroom_sim.register_spec(spec)).unwrapped
        obs, info = env.reset(seed=0)
        for _ in range(20):
            obs, *_, info = env.step("@nobody hi")
        seeds = [r["seed"] for r in srv.requests]
    chat = [m.text for m in env.room.crowd.chat if m.intent not in ("complaint", "follow_up")]
    assert chat and all(t.startswith("[llm] ") for t in chat)
    assert info["metrics"]["llm_viewer_calls"] >= len(chat) and info["metrics"]["llm_viewer_failures"] == 0
    assert len(set(seeds)) == len(seeds)  # each request seeded
    with OpenAICompatServer(rephrase, faults=FaultPlan(rates={"500": 1.0})) as srv:
        spec.write_text(f"extends: {base}\nid: LLMView-v0\nviewers:\n  llm: {{model: m, base_url: '{srv.base_url}', max_retries: 0}}\n")
        env = gym.make(liveroom_sim.register_spec(spec)).unwrapped
        env.reset(seed=0)
        for _ in range(10):
            *_, info = env.step("@nobody hi")
    assert info["metrics"]["llm_viewer_failures"] == info["metrics"]["llm_viewer_calls"] > 0
    assert not any(m.text.startswith("[llm] ") for m in env.room.crowd.chat)


def _cli(*args, env=None, timeout=120):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_latency_command_reports_percentiles_per_turn_and_per_call():
    with OpenAICompatServer(policy_responder(ScriptedAvatar()), latency=0.05) as srv:
        done = _cli("latency", "--base-url", srv.base_url, "--model", "m", "--sessions", "3",
                    "--concurrency", "3", "--turns", "3", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["turn"]["count"] == 9 and report["call"]["count"] >= 9
    assert 0.05 <= report["call"]["p50"] <= report["call"]["p95"] <= report["call"]["p99"]
    assert report["turn"]["p50"] >= 0.1  # a complete turn here is a tool call and a reply
    assert report["over_budget_share"] == 0.0 and report["tokens_per_second"] > 0


def test_demo_with_an_openai_policy_honours_the_standard_variables():
    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        done = _cli("demo", "--env", TINY, "--policy", "openai", "--model", "m", "--json",
                    env={"OPENAI_BASE_URL": srv.base_url, "OPENAI_API_KEY": "sk-test-abcdef"})
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["accounting"]["calls"] == summary["steps"] and summary["returns"]["factuality"] > 0
    assert "sk-test-abcdef" not in done.stdout + done.stderr


def test_demo_against_a_dead_endpoint_exits_non_zero_naming_the_url():
    done = _cli("demo", "--env", TINY, "--policy", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--json")
    assert done.returncode == 1 and done.stdout == ""
    assert "http://127.0.0.1:9/v1" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "refused" in done.stderr.lower() and "timed out" not in done.stderr


@contextlib.contextmanager
def _raw_server(do_post):
    """A bare HTTP/1.1 server on 127.0.0.1 whose POST handler is ``do_post(handler)``;
    yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            do_post(self)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/v1"
    finally:
        server.shutdown()


def _answer(handler, status: int, body: dict, chunked: bool = False) -> None:
    payload = json.dumps(body).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(len(payload)))))
    handler.end_headers()
    if chunked:
        for part in (payload[:10], payload[10:]):
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
        payload = b"0\r\n\r\n"
    handler.wfile.write(payload)


HI = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
      "choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}]}


@pytest.mark.parametrize("mode", ["sync", "async", "direct"])
def test_requests_carry_the_api_key_as_a_bearer_token_and_extra_body_fields(mode):
    seen = {}

    def do_post(handler):
        seen["auth"] = handler.headers.get("Authorization")
        seen["body"] = json.loads(handler.rfile.read(int(handler.headers["Content-Length"])))
        _answer(handler, 200, HI)

    with _raw_server(do_post) as url:
        avatar = OpenAIAvatar(Endpoint("m", url, api_key="sk-abc123", direct=mode == "direct"),
                              temperature=0.5, extra_body={"top_k": 3})
        info = {"messages": [{"role": "user", "content": "x"}], "tools": []}
        assert (avatar("", info) if mode == "sync" else asyncio.run(avatar.acall("", info))) == "hi"
    assert seen["auth"] == "Bearer sk-abc123"
    assert seen["body"] == {"model": "m", "messages": [{"role": "user", "content": "x"}], "top_k": 3, "temperature": 0.5}


def test_direct_calls_read_chunked_answers_and_reuse_keep_alive_connections():
    connections = set()

    def do_post(handler):
        connections.add(handler.client_address)
        handler.rfile.read(int(handler.headers["Content-Length"]))
        _answer(handler, 200, HI, chunked=True)

    with _raw_server(do_post) as url:
        avatar = OpenAIAvatar(Endpoint("m", url, direct=True))
        info = {"messages": [{"role": "user", "content": "x"}], "tools": []}

        async def three_calls():
            return [await avatar.acall("", info) for _ in range(3)]

        assert asyncio.run(three_calls()) == ["hi"] * 3
    assert len(connections) == 1  # one keep-alive connection served all three


def test_direct_call_errors_carry_the_servers_message_in_vllm_style_too():
    def do_post(handler):
        handler.rfile.read(int(handler.headers["Content-Length"]))
        _answer(handler, 400, {"object": "error", "message": "prompt is 40000 tokens, over 32768", "code": 400})

    with _raw_server(do_post) as url:
        avatar = OpenAIAvatar(Endpoint("m", url, direct=True))
        with pytest.raises(EndpointError, match="HTTP 400: prompt is 40000 tokens"):
            asyncio.run(avatar.acall("", {"messages": [{"role": "user", "content": "x"}], "tools": []}))


# ---------------------------------------------------------------- issue 30: credentials and what the room shows
@pytest.mark.parametrize("direct", [False, True])
def test_a_base_url_with_user_info_works_on_the_async_backend_too(direct):
    with OpenAICompatServer(scripted_responder(["@mia hi!"])) as srv:
        url = srv.base_url.replace("http://", "http://someone:pa55word@")
        avatar = OpenAIAvatar(Endpoint("m", url, max_retries=0, direct=direct))
        info = {"messages": [{"role": "user", "content": "hi"}], "tools": []}
        assert avatar("", info) == "@mia hi!"
        assert asyncio.run(avatar.acall("", info)) == "@mia hi!"


def test_a_client_side_value_error_is_not_called_a_cut_off_answer():
    from liveroom_sim.llm.client import EndpointRefused, endpoint_failure

    error = endpoint_failure(ValueError("Cannot combine AUTHORIZATION header with AUTH argument"))
    assert "not valid JSON" not in str(error) and "Cannot combine" in str(error)
    assert not isinstance(error, liveroom_sim.llm.client.EndpointUnavailable)  # not an outage to wait out
    assert isinstance(error, EndpointRefused)
    cut = endpoint_failure(json.JSONDecodeError("Expecting value", '{"id": "x", "cho', 16))
    assert "not valid JSON (cut off?)" in str(cut)


@pytest.mark.parametrize("url", ["http://proxy.example/sk-abcdef0123456789abcdef/v1",
                                 "http://proxy.example/key/Zm9vYmFyYmF6cXV4MTIzNDU2/v1",
                                 "http://proxy.example/api_key=s3cretS3cret99/v1"])
def test_a_key_in_the_url_path_is_redacted(url):
    from liveroom_sim.cli.common import redact_url
    from liveroom_sim.llm.client import safe_url, scrub

    for shown in (redact_url(url), safe_url(url), scrub(f"cannot reach {url}: refused")):
        assert "proxy.example" in shown and "/v1" in shown
        for secret in ("sk-abcdef0123456789abcdef", "Zm9vYmFyYmF6cXV4MTIzNDU2", "s3cretS3cret99"):
            assert secret not in shown, shown
    assert redact_url("http://127.0.0.1:8000/v1") == "http://127.0.0.1:8000/v1"  # a plain path is kept
    assert safe_url("https://api.example.com/openai/deployments/gpt-4o-mini/v1") == \
        "https://api.example.com/openai/deployments/gpt-4o-mini/v1"


@pytest.mark.parametrize("backend", ["serial", "async"])
def test_lone_surrogates_in_replies_never_reach_what_the_room_shows(backend):
    reply = "@mia hi \ud83d, the serum is $20 \udfff today"
    seen = []

    def check(info):
        seen.append(json.dumps(info["messages"], ensure_ascii=False).encode("utf-8"))  # raises on a lone surrogate

    with OpenAICompatServer(scripted_responder([reply])) as srv:
        avatar = OpenAIAvatar(Endpoint("m", srv.base_url))
        env = _tiny()
        if backend == "serial":
            result = play(env, avatar, seed=0, on_step=check, record=True)
        else:
            result = asyncio.run(aplay(env, avatar, seed=0, on_step=check, record=True))
        sent = [json.dumps(r["messages"], ensure_ascii=False) for r in srv.requests]
    assert len(seen) == result.steps > 3 and result.error is None
    said = [m["content"] for m in result.messages if m["role"] == "assistant" and m.get("content")]
    assert "@mia hi \ufffd, the serum is $20 \ufffd today" in said  # as the room heard it: U+FFFD
    assert all("\ud83d" not in s and "\udfff" not in s for s in sent[1:])
    assert result.accounting["invalid_code_points"] == 2 * avatar.accounting.calls


def test_progress_in_a_log_is_lines_never_carriage_returns(tmp_path):
    import subprocess
    import sys

    with OpenAICompatServer(policy_responder(ScriptedAvatar())) as srv:
        done = subprocess.run([sys.executable, "-m", "liveroom_sim.cli.main", "latency", "--env", TINY, "--base-url",
                               srv.base_url, "--model", "m", "--sessions", "2", "--turns", "5"], capture_output=True,
                              timeout=120)  # bytes: text mode would read a carriage return as a new line
    assert done.returncode == 0, done.stderr
    assert b"\r" not in done.stderr and b"[latency] 10/10 turns, 0 errors\n" in done.stderr
