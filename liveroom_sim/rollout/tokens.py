"""Token-level records as a trainer's tensors: rows, loss masks, logprobs and advantages.

A record's ``tokens`` (present when the policy's endpoint returned token ids, see
:mod:`liveroom_sim.llm.tokens`) holds one entry per step: ``keep`` and ``prompt_ids``
(the step's prompt is the previous step's prompt and completion cut to ``keep`` tokens,
then ``prompt_ids``; ``extends`` when nothing was cut, so ``prompt_ids`` are the new
environment tokens), ``completion_ids`` and ``logprobs`` (what the engine sampled), or
``None`` for a step that came back without ids.

:func:`token_rows` lays them out as training rows, the shape veRL's agent loop outputs
(``prompt_ids`` + ``response_ids`` with ``response_mask``): within a row, the response
interleaves model tokens (loss mask 1, the engine's logprobs) and environment tokens
(tool results, room updates, hook messages: loss mask 0, logprob 0). A step whose
prompt does not extend the previous one (the room's system prompt changed, or its
history window slid) starts a new row with its own prompt: the ids are never
re-tokenised. :func:`training_batch` pads rows into arrays with a per-token advantage
(each model token gets the advantage of the step that produced it).

Example:
    >>> tokens = [{"keep": 0, "prompt_ids": [1, 2], "completion_ids": [3], "logprobs": [-0.5], "extends": False},
    ...           {"keep": 3, "prompt_ids": [9], "completion_ids": [4, 5], "logprobs": [-0.1, -0.2], "extends": True}]
    >>> row = token_rows(tokens)[0]
    >>> row["prompt_ids"], row["response_ids"], row["loss_mask"]
    ([1, 2], [3, 9, 4, 5], [1, 0, 1, 1])
    >>> batch = training_batch([{"tokens": tokens, "step_advantages": [1.0, -1.0]}])
    >>> batch["input_ids"].tolist(), batch["advantages"].tolist()
    ([[1, 2, 3, 9, 4, 5]], [[0.0, 0.0, 1.0, 0.0, -1.0, -1.0]])
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["token_rows", "training_batch", "record_size"]


def token_rows(tokens: Sequence[dict | None]) -> list[dict]:
    """Split one episode's token turns into training rows.

    Returns:
        One dict per row: ``prompt_ids``; ``response_ids``, ``loss_mask`` (1 for model
        tokens, 0 for environment tokens) and ``logprobs`` (0.0 where the engine sent
        none, and on environment tokens), all the same length; ``spans`` (``[start,
        end, step]``: the model tokens of each step, as offsets into the response);
        ``has_logprobs`` (every model token has its engine logprob).
    """
    rows: list[dict] = []
    row: dict | None = None
    context: list[int] = []
    for step, turn in enumerate(tokens):
        if turn is None:
            row, context = None, []
            continue
        prompt = context[:turn.get("keep", 0)] + list(turn["prompt_ids"])
        context = prompt + list(turn["completion_ids"])
        if row is None or not turn.get("extends"):
            row = {"prompt_ids": prompt, "response_ids": [], "loss_mask": [], "logprobs": [],
                   "spans": [], "has_logprobs": True}
            rows.append(row)
        else:
            delta = turn["prompt_ids"]
            row["response_ids"] += delta
            row["loss_mask"] += [0] * len(delta)
            row["logprobs"] += [0.0] * len(delta)
        completion, logprobs = turn["completion_ids"], turn.get("logprobs")
        start = len(row["response_ids"])
        row["response_ids"] += completion
        row["loss_mask"] += [1] * len(completion)
        row["logprobs"] += list(logprobs) if logprobs is not None else [0.0] * len(completion)
        row["has_logprobs"] = row["has_logprobs"] and logprobs is not None
        row["spans"].append([start, start + len(completion), step])
    return rows


def _step_advantages(record: dict, steps: int) -> list[float]:
    given = record.get("step_advantages")
    if given is not None:
        return [float(a) for a in given]
    advantage = record.get("advantage")
    return [0.0 if advantage is None else float(advantage)] * steps


def training_batch(records: Sequence[dict], pad_id: int = 0, framework: str = "numpy") -> dict:
    """Pad every row of ``records`` into the tensors a policy-gradient step needs.

    Each record needs ``tokens``; advantages come from its ``step_advantages`` (one per
    step, e.g. from :func:`liveroom_sim.rollout.advantages.with_credit`) or else its
    scalar ``advantage`` (0 when unset). Rows are right-padded to the longest.

    Args:
        records: Rollout records (dicts, as read from a rollout file).
        pad_id: The id written into padding.
        framework: ``"numpy"`` (arrays) or ``"torch"`` (tensors; needs torch).

    Returns:
        ``input_ids`` (int64, rows x length: prompt then response), ``attention_mask``
        (1 on real tokens), ``loss_mask`` (1 on model tokens only), ``logprobs`` (the
        engine's, on model tokens), ``advantages`` (per token, 0 off the model's
        tokens), ``prompt_lengths`` and ``row_record`` (the index of each row's record).

    Raises:
        ValueError: when a record has no ``tokens`` (its endpoint returned none).
    """
    rows, owners, per_token = [], [], []
    for index, record in enumerate(records):
        tokens = record.get("tokens")
        if not tokens:
            raise ValueError(f"record {index} has no tokens: roll out with an endpoint that returns token ids "
                             "(OpenAIAvatar(tokens=True) against vLLM, or the test server)")
        step_adv = _step_advantages(record, len(tokens))
        for row in token_rows(tokens):
            adv = [0.0] * len(row["response_ids"])
            for start, end, step in row["spans"]:
                adv[start:end] = [step_adv[step] if step < len(step_adv) else 0.0] * (end - start)
            rows.append(row)
            owners.append(index)
            per_token.append(adv)
    width = max((len(r["prompt_ids"]) + len(r["response_ids"]) for r in rows), default=0)
    shape = (len(rows), width)
    out = {"input_ids": np.full(shape, pad_id, dtype=np.int64), "attention_mask": np.zeros(shape, dtype=np.int64),
           "loss_mask": np.zeros(shape, dtype=np.int64), "logprobs": np.zeros(shape, dtype=np.float32),
           "advantages": np.zeros(shape, dtype=np.float32),
           "prompt_lengths": np.array([len(r["prompt_ids"]) for r in rows], dtype=np.int64),
           "row_record": np.array(owners, dtype=np.int64)}
    for i, (row, adv) in enumerate(zip(rows, per_token)):
        p, n = len(row["prompt_ids"]), len(row["response_ids"])
        out["input_ids"][i, :p + n] = row["prompt_ids"] + row["response_ids"]
        out["attention_mask"][i, :p + n] = 1
        out["loss_mask"][i, p:p + n] = row["loss_mask"]
        out["logprobs"][i, p:p + n] = row["logprobs"]
        out["advantages"][i, p:p + n] = adv
    if framework == "torch":
        import torch

        return {k: torch.from_numpy(v) for k, v in out.items()}
    if framework != "numpy":
        raise ValueError(f"unknown framework {framework!r}; expected 'numpy' or 'torch'")
    return out


def record_size(record: dict) -> dict:
    """How big a record's token data is: ids stored, rows, and JSON bytes with and without it."""
    import json

    tokens = [t for t in record.get("tokens") or () if t is not None]
    stored = sum(len(t["prompt_ids"]) + len(t["completion_ids"]) for t in tokens)
    without = {k: v for k, v in record.items() if k != "tokens"}
    return {"steps_with_tokens": len(tokens), "ids_stored": stored, "rows": len(token_rows(record.get("tokens") or [])),
            "json_bytes": len(json.dumps(record, ensure_ascii=False).encode()),
            "json_bytes_without_tokens": len(json.dumps(without, ensure_ascii=False).encode())}
