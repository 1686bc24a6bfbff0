"""A small deterministic tokenizer and chat template, so the test server can speak tokens.

Real engines (vLLM, SGLang) render the chat with the model's template, tokenise it and
return the ids they sampled. :class:`ToyTokenizer` does the same without a model: the
template is ChatML (``<|im_start|>role\\n...<|im_end|>\\n``, tool calls as
``<tool_call>{json}</tool_call>`` blocks, as Qwen's and Hermes' templates do); each word,
each CJK character and each run of whitespace is one token, whose id is a stable hash of
its text (the same text gets the same id in every process). Logprobs are a deterministic
function of the token and its position, in ``(-4, 0]``.

Like a real template, rendering an assistant message from the history gives the text
the model generated plus ``\\n`` after ``<|im_end|>``, so a chat that only grows gives
prompts that extend each other token for token; a changed system prompt does not.

Example:
    >>> tok = ToyTokenizer()
    >>> ids = tok.encode("hello  world")
    >>> len(ids), tok.decode(ids)
    (3, 'hello  world')
    >>> tok.chat_prompt([{"role": "user", "content": "hi"}])
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from liveroom_sim.testing.responders import text_of

__all__ = ["ToyTokenizer", "with_tokens", "wants_tokens"]

SPECIAL = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>")
_CJK = "\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_PIECE = re.compile("|".join(re.escape(s) for s in SPECIAL) + f"|[{_CJK}]|\\s+|[^\\s{_CJK}<]+|<")
_FIRST_ID = 16


class ToyTokenizer:
    """Word-level ids by stable hash; decodes what it has encoded."""

    def __init__(self) -> None:
        self._pieces: dict[int, str] = {i: s for i, s in enumerate(SPECIAL)}

    def encode(self, text: str) -> list[int]:
        ids = []
        for piece in _PIECE.findall(text):
            if piece in SPECIAL:
                ids.append(SPECIAL.index(piece))
                continue
            token = _FIRST_ID + zlib.crc32(piece.encode("utf-8")) % (1 << 24)
            self._pieces.setdefault(token, piece)
            ids.append(token)
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(self._pieces.get(i, "\ufffd") for i in ids)

    @staticmethod
    def logprob(token: int, position: int) -> float:
        """A deterministic stand-in for the engine's logprob of ``token`` at ``position``."""
        return -(zlib.crc32(f"{token}:{position}".encode()) % 4000) / 1000.0

    # ---------------------------------------------------------------- template
    @staticmethod
    def assistant_text(message: Mapping) -> str:
        """What the model generates for an assistant message (ending in ``<|im_end|>``)."""
        parts = [text_of(message.get("content"))]
        for call in message.get("tool_calls") or ():
            fn = call.get("function", call) if isinstance(call, Mapping) else {}
            arguments = fn.get("arguments", {})
            if isinstance(arguments, str):
                try:
                    arguments = json.loads(arguments)
                except ValueError:
                    pass  # kept as the string the model wrote
            block = json.dumps({"name": fn.get("name"), "arguments": arguments}, ensure_ascii=False)
            parts.append(f"<tool_call>\n{block}\n</tool_call>")
        return "\n".join(p for p in parts if p) + "<|im_end|>"

    def chat_prompt(self, messages: Sequence[Mapping], tools: Sequence[Mapping] | None = None) -> str:
        """The prompt an engine would feed the model: the chat, then the assistant's turn."""
        out = []
        for i, m in enumerate(messages):
            role = m.get("role", "user")
            if role == "assistant":
                out.append(f"<|im_start|>assistant\n{self.assistant_text(m)}\n")
                continue
            body = text_of(m.get("content"))
            if role == "system" and i == 0 and tools:
                body += "\n\n# Tools\n" + "\n".join(json.dumps(t, ensure_ascii=False, sort_keys=True) for t in tools)
            out.append(f"<|im_start|>{role}\n{body}<|im_end|>\n")
        return "".join(out) + "<|im_start|>assistant\n"


def wants_tokens(request: Mapping) -> bool:
    """Whether a request asks for token ids or logprobs (vLLM's fields)."""
    return bool(request.get("return_token_ids") or request.get("logprobs"))


def with_tokens(request: Mapping, completion: dict, tokenizer: ToyTokenizer | None = None) -> dict:
    """Add what vLLM returns for ``return_token_ids`` / ``logprobs`` to a finished completion.

    ``prompt_token_ids`` and each choice's ``token_ids`` (under ``return_token_ids``);
    each choice's ``logprobs.content`` (under ``logprobs``), whose tokens read
    ``token_id:N`` under ``return_tokens_as_token_ids``. A request asking for neither is
    returned unchanged.
    """
    if not wants_tokens(request):
        return completion
    tok = tokenizer or ToyTokenizer()
    prompt = tok.encode(tok.chat_prompt(request.get("messages") or [], request.get("tools")))
    as_ids = bool(request.get("return_tokens_as_token_ids"))
    if request.get("return_token_ids"):
        completion["prompt_token_ids"] = prompt
    for choice in completion["choices"]:
        ids = tok.encode(tok.assistant_text(choice["message"]))
        if request.get("return_token_ids"):
            choice["token_ids"] = ids
        if request.get("logprobs"):
            choice["logprobs"] = {"content": [_entry(tok, t, len(prompt) + k, as_ids) for k, t in enumerate(ids)]}
    return completion


def _entry(tok: ToyTokenizer, token: int, position: int, as_ids: bool) -> dict[str, Any]:
    text = f"token_id:{token}" if as_ids else tok.decode([token])
    return {"token": text, "logprob": tok.logprob(token, position), "bytes": list(text.encode("utf-8")),
            "top_logprobs": []}
