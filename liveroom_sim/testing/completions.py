"""Chat completions as the test server builds them: request checks, choices, usage, stream chunks.

Every malformed body shape gets a reason (the server answers it with a 400), never an
exception that would drop the connection.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from liveroom_sim.testing.responders import _TOKEN_RE, count_tokens, text_of

def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def _wire_tool_call(call: Any, salt: str) -> dict:
    """Convert `{"name", "arguments"}` or an OpenAI tool call to wire format with a stable id."""
    if not isinstance(call, Mapping):
        raise TypeError(f"a tool call must be a dict, got {type(call).__name__}")
    function = call["function"] if isinstance(call.get("function"), Mapping) else call
    name, arguments = str(function.get("name")), function.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = call.get("id") or f"call_{_digest(salt, name, arguments)}"
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _choice(index: int, reply: Any, salt: str, max_tokens: int | None) -> dict:
    """Build one OpenAI choice from a responder reply."""
    if isinstance(reply, str):
        reply = {"content": reply}
    if not isinstance(reply, Mapping):
        raise TypeError(f"responder returned {type(reply).__name__}; expected str or message dict")
    content = reply.get("content")
    calls = [_wire_tool_call(c, f"{salt}:{index}:{k}") for k, c in enumerate(reply.get("tool_calls") or [])]
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    if isinstance(content, str) and max_tokens is not None and count_tokens(content) > max_tokens:
        ends = [m.end() for m, _ in zip(_TOKEN_RE.finditer(content), range(max_tokens))]
        content, finish = content[: ends[-1] if ends else 0], "length"
    message = {"role": "assistant", "content": content, "refusal": None}
    if calls:
        message["tool_calls"] = calls
    return {"index": index, "message": message, "logprobs": None, "finish_reason": finish}


def _usage(messages: list, choices: list[dict]) -> dict:
    prompt = 3 + sum(4 + count_tokens(text_of(m.get("content"))) for m in messages if isinstance(m, Mapping))
    completion = 0
    for choice in choices:
        message = choice["message"]
        completion += count_tokens(message.get("content"))
        for call in message.get("tool_calls", []):
            completion += count_tokens(call["function"]["name"]) + count_tokens(call["function"]["arguments"])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def parse_body(raw: bytes) -> tuple[Any, str | None]:
    """The JSON of a request body, or why it cannot be read (a body nested past the
    interpreter's recursion limit, such as 100,000 brackets, is one of those)."""
    try:
        return json.loads(raw), None
    except RecursionError:
        return None, "The JSON body of your request is nested too deeply."
    except ValueError as exc:
        return None, f"We could not parse the JSON body of your request: {exc}."


def _validate(request: Any) -> str | None:
    """Return why a chat-completion request body is invalid, or None."""
    if not isinstance(request, dict):
        return "The request body must be a JSON object."
    messages = request.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return "'messages' must be a non-empty list of message objects."
    for i, m in enumerate(messages):
        if not isinstance(m.get("role"), str):
            return f"'messages[{i}].role' must be a string."
        if not isinstance(m.get("content"), (str, list, type(None))):
            return f"'messages[{i}].content' must be a string, a list of parts or null."
        if not isinstance(m.get("tool_calls"), (list, type(None))):
            return f"'messages[{i}].tool_calls' must be a list."
    n = request.get("n", 1)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 128):
        return "'n' must be an integer between 1 and 128."
    limit = request.get("max_completion_tokens", request.get("max_tokens"))
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        return "'max_tokens' must be a positive integer."
    kinds = {"model": (str,), "stream": (bool,), "stream_options": (dict,), "tools": (list,),
             "tool_choice": (str, dict), "temperature": (int, float), "top_p": (int, float), "seed": (int,),
             "stop": (str, list), "user": (str,)}
    for name, types in kinds.items():
        value = request.get(name)
        if value is not None and (not isinstance(value, types) or (isinstance(value, bool) and bool not in types)):
            return f"'{name}' has the wrong type ({type(value).__name__})."
    options = request.get("stream_options") or {}
    if not isinstance(options.get("include_usage", False), (bool, type(None))):
        return "'stream_options.include_usage' must be a boolean."
    if not all(isinstance(t, dict) for t in request.get("tools") or []):
        return "'tools' must be a list of tool objects."
    return None


def _stream_chunks(completion: dict, include_usage: bool) -> Iterator[dict]:
    """Split a finished completion into `chat.completion.chunk` objects, as OpenAI streams them."""
    head = {key: completion[key] for key in ("id", "created", "model", "system_fingerprint")}
    head["object"] = "chat.completion.chunk"

    def chunk(index: int, delta: dict, finish: str | None = None) -> dict:
        return {**head, "choices": [{"index": index, "delta": delta, "logprobs": None, "finish_reason": finish}]}

    for choice in completion["choices"]:
        index, message = choice["index"], choice["message"]
        yield chunk(index, {"role": "assistant", "content": "" if message["content"] is not None else None})
        content, start = message["content"] or "", 0
        ends = [match.end() for match in _TOKEN_RE.finditer(content)]
        step = max(1, -(-len(ends) // 64))  # a token per chunk, but at most ~64 chunks per choice
        for end in [*ends[step - 1 :: step], len(content)]:
            if end > start:
                yield chunk(index, {"content": content[start:end]})
                start = end
        for k, call in enumerate(message.get("tool_calls", [])):
            yield chunk(index, {"tool_calls": [{"index": k, **call}]})
        yield chunk(index, {}, choice["finish_reason"])
    if include_usage:
        yield {**head, "choices": [], "usage": completion["usage"]}
