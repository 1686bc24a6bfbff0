"""Token-in-token-out: the token ids and logprobs an endpoint sampled, turn by turn.

Re-tokenising a multi-turn chat after the fact drifts from what the inference engine
produced (chat templates are not prefix-stable, tool-call text is re-serialised, BPE
merges differ at message borders), so trainers want the engine's own ids. vLLM returns
them when asked (:data:`TOKEN_REQUEST`): ``return_token_ids`` puts ``prompt_token_ids`` on
the completion and ``token_ids`` on each choice; ``logprobs`` gives each sampled token's
logprob in ``choice.logprobs.content``, whose ``token`` reads ``token_id:N`` under
``return_tokens_as_token_ids`` (so ids survive even without ``return_token_ids``).

:class:`TokenLog` keeps one policy's turns compactly: a turn whose prompt extends the
previous turn's prompt and completion (``extends: true``) stores only the new
(environment) tokens; a turn whose prompt does not (the room's system prompt changed, or
its history window slid) is flagged ``extends: false``, the point where a trainer starts
a new row instead of re-tokenising. Either way a turn stores ``keep``, how many leading
tokens its prompt shares with the previous context, and only the ids after them: the
whole prompt is ``context[:keep] + prompt_ids``.

Example:
    >>> log = TokenLog()
    >>> _ = log.add({"prompt_ids": [1, 2], "completion_ids": [3], "logprobs": [-0.5]})
    >>> _ = log.add({"prompt_ids": [1, 2, 3, 9], "completion_ids": [4], "logprobs": [-0.1]})
    >>> _ = log.add({"prompt_ids": [1, 7], "completion_ids": [5], "logprobs": [-0.3]})
    >>> [(t["extends"], t["keep"], t["prompt_ids"]) for t in log.turns]
    [(False, 0, [1, 2]), (True, 3, [9]), (False, 1, [7])]
"""

from __future__ import annotations

from typing import Any

__all__ = ["TOKEN_REQUEST", "TokenLog", "turn_tokens"]

#: Request fields that make vLLM (0.10.2 and later) return the ids and logprobs it sampled.
TOKEN_REQUEST: dict[str, Any] = {"logprobs": True, "return_token_ids": True, "return_tokens_as_token_ids": True}


def _shared(a: list[int], b: list[int]) -> int:
    """The length of the common prefix of ``a`` and ``b``."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]: halve (list slices compare in C)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def _ids(value: Any) -> list[int] | None:
    # Thousands of ids a turn: check their types in C (map/set), not in a Python loop.
    if not isinstance(value, list) or not set(map(type, value)) <= {int}:
        return None
    return value


def _id_of(token: Any) -> int | None:
    if isinstance(token, str) and token.startswith("token_id:"):
        tail = token[len("token_id:"):]
        return int(tail) if tail.isdigit() else None
    return None


def turn_tokens(completion: dict, choice: dict) -> dict | None:
    """The token record of one choice, or ``None`` when the endpoint sent no ids.

    Returns:
        ``{"prompt_ids", "completion_ids", "logprobs"}``; ``logprobs`` is ``None`` when
        the endpoint sent none (or a count that does not match the ids). Ids come from
        ``token_ids`` or, failing that, from ``token_id:N`` logprob entries.

    Example:
        >>> turn_tokens({"prompt_token_ids": [5, 6]}, {"token_ids": [7], "logprobs": {"content": [
        ...     {"token": "token_id:7", "logprob": -0.25}]}})
        {'prompt_ids': [5, 6], 'completion_ids': [7], 'logprobs': [-0.25]}
        >>> turn_tokens({}, {"message": {"content": "hi"}}) is None
        True
    """
    if not isinstance(completion, dict) or not isinstance(choice, dict):
        return None
    prompt = _ids(completion.get("prompt_token_ids") or choice.get("prompt_token_ids"))
    entries = choice.get("logprobs")
    entries = entries.get("content") if isinstance(entries, dict) else None
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    ids = _ids(choice.get("token_ids"))
    if ids is None and entries:
        from_entries = [_id_of(e.get("token")) for e in entries]
        ids = None if None in from_entries else from_entries
    if prompt is None or ids is None:
        return None
    logprobs = [e.get("logprob") for e in entries]
    if len(logprobs) != len(ids) or not all(isinstance(x, int | float) for x in logprobs):
        logprobs = None
    return {"prompt_ids": prompt, "completion_ids": ids, "logprobs": None if logprobs is None else
            [float(x) for x in logprobs]}


class TokenLog:
    """One episode's policy turns as tokens, each prompt stored as its delta when it can be.

    Attributes:
        turns: One entry per single-choice policy call (``None`` when it came back
            without ids): ``keep`` (leading prompt tokens shared with the previous
            turn's prompt and completion), ``prompt_ids`` (the prompt's ids after those),
            ``completion_ids``, ``logprobs`` (or ``None``) and ``extends`` (the prompt
            starts with the whole previous context).
    """

    def __init__(self) -> None:
        self.turns: list[dict] = []
        self._context: list[int] = []

    def add(self, tokens: dict | None) -> dict | None:
        """Append one turn (from :func:`turn_tokens`); returns the stored, compact turn.

        ``None`` (a response without ids) is kept as ``None``, so that turn ``i`` stays
        step ``i`` of the episode; the next turn then stores its whole prompt.
        """
        if tokens is None:
            self.turns.append(None)
            self._context = []
            return None
        prompt, completion = tokens["prompt_ids"], tokens["completion_ids"]
        keep = _shared(prompt, self._context)
        turn = {"keep": keep, "prompt_ids": prompt[keep:], "completion_ids": list(completion),
                "logprobs": tokens.get("logprobs"), "extends": bool(self._context) and keep == len(self._context)}
        self.turns.append(turn)
        self._context = [*prompt, *completion]
        return turn

    def clear(self) -> None:
        self.turns, self._context = [], []
