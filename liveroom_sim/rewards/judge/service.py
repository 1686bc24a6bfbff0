"""The judge's calls: asynchronous, batched, cached, and counted when they fail.

A :class:`JudgeService` asks one to three judge models (OpenAI-compatible endpoints)
about :class:`~liveroom_sim.rewards.judge.request.JudgeRequest` s and tallies their
votes. Every call is a coroutine on the caller's event loop; many requests are in flight
at once (up to ``max_in_flight``), so a judge server batches them as it batches any
concurrent load (vLLM's continuous batching), and a file of cases or a rollout's replies
costs about one call's latency per batch, not per reply. Answers are cached by model and
prompt (the context and the reply), and a request already in flight is joined, not sent
again: a repeated turn costs no call.

A judge that times out, answers HTTP 5xx, or answers something that is not a verdict is
left out of that vote; its failure is recorded in the vote (with the reason) and counted
in :attr:`JudgeService.stats`; with no judge left, the rules' verdict stands. Nothing is
raised: the run goes on.
"""

from __future__ import annotations

import asyncio
import json
import urllib.parse
import urllib.request
from collections import Counter
from collections.abc import Iterable, Sequence

from liveroom_sim.llm.client import Endpoint, endpoint_failure, safe_url
from liveroom_sim.rewards.judge.request import JudgeRequest
from liveroom_sim.rewards.judge.vote import POLICIES, JudgeAnswer, Vote, parse_verdict, tally


class JudgeService:
    """Up to three judge models that vote, asked asynchronously (see the module docstring).

    Args:
        endpoints: One to three judge endpoints, one per model.
        policy: How a vote that disagrees with the rules is applied (``stricter``,
            ``judge`` or ``rules``; see :mod:`liveroom_sim.rewards.judge.vote`).
        max_in_flight: Judge calls in flight at once, over all models.
        seed: Sent with every request (with temperature 0), for servers that honour it.

    Attributes:
        stats: ``calls``, ``cache_hits``, ``joined`` (requests that joined one in flight),
            ``votes``, ``failures`` (all) and ``failure:<kind>`` per kind (``timeout``,
            ``server error``, ``garbage``, ``refused``, ``unavailable``).

    Raises:
        ValueError: for no endpoint, more than three, or an unknown policy.
    """

    def __init__(self, endpoints: Sequence[Endpoint], policy: str = "stricter", max_in_flight: int = 256,
                 seed: int = 0):
        self.endpoints = tuple(endpoints)
        if not 1 <= len(self.endpoints) <= 3:
            raise ValueError(f"a judge votes with 1 to 3 models, got {len(self.endpoints)}")
        if policy not in POLICIES:
            raise ValueError(f"unknown judge policy {policy!r}; expected one of {', '.join(POLICIES)}")
        self.policy, self.max_in_flight, self.seed = policy, max(1, max_in_flight), seed
        self.stats: Counter = Counter()
        self._cache: dict[tuple[int, str], JudgeAnswer] = {}
        self._flying: dict[tuple[int, str], asyncio.Future] = {}
        self._gates: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}

    def describe(self) -> dict:
        """What a record says of the judge (no keys, no credentials in URLs)."""
        return {"models": [e.model for e in self.endpoints],
                "base_urls": [safe_url(e.resolved_base_url() or "") for e in self.endpoints], "policy": self.policy}

    async def vote(self, request: JudgeRequest) -> Vote:
        """Every judge's verdict on ``request`` (asked at once), tallied."""
        answers = await asyncio.gather(*(self._verdict(i, request) for i in range(len(self.endpoints))))
        verdicts = tuple(a for a in answers if isinstance(a, JudgeAnswer))
        failures = tuple(a for a in answers if isinstance(a, str))
        self.stats["votes"] += 1
        return tally(verdicts, failures)

    def vote_all(self, requests: Iterable[JudgeRequest | None]) -> list[Vote | None]:
        """Votes on many requests at once, from synchronous code (no event loop running):
        a whole file of cases is one batch."""
        async def run():
            return await asyncio.gather(*(self.vote(r) if r is not None else _none() for r in requests))

        return list(asyncio.run(run()))

    async def _verdict(self, i: int, request: JudgeRequest) -> JudgeAnswer | str:
        key = (i, request.key)
        if key in self._cache:
            self.stats["cache_hits"] += 1
            return self._cache[key]
        loop = asyncio.get_running_loop()
        flying = self._flying.get(key)
        if flying is not None and flying.get_loop() is loop:
            self.stats["joined"] += 1
            return await asyncio.shield(flying)
        future = self._flying[key] = loop.create_future()
        try:
            answer = await self._ask(i, request.prompt)
        finally:
            self._flying.pop(key, None)
        if isinstance(answer, JudgeAnswer):
            self._cache[key] = answer
        future.set_result(answer)
        return answer

    async def _ask(self, i: int, prompt: str) -> JudgeAnswer | str:
        endpoint = self.endpoints[i]
        loop = asyncio.get_running_loop()
        gate = self._gates.get(loop)
        if gate is None:
            gate = self._gates[loop] = asyncio.Semaphore(self.max_in_flight)
        body = {"model": endpoint.model, "messages": [{"role": "user", "content": prompt}], "temperature": 0,
                "seed": self.seed, "max_tokens": 300}
        async with gate:
            self.stats["calls"] += 1
            try:
                data = await endpoint.acomplete(body)
                choices = data.get("choices") if isinstance(data, dict) else None
                if not choices:
                    raise ValueError("the judge returned no choices")
                return parse_verdict((choices[0].get("message") or {}).get("content") or "", endpoint.model)
            except ValueError as exc:  # an answer, but no verdict in it
                return self._failed(endpoint, "garbage", str(exc))
            except Exception as exc:  # noqa: BLE001 - any failure leaves this judge out of the vote
                why = str(endpoint_failure(exc, endpoint))
                kind = ("timeout" if "timed out" in why else "server error" if why.startswith("HTTP 5")
                        else "garbage" if "not valid JSON" in why else
                        "refused" if why.startswith("HTTP 4") else "unavailable")
                return self._failed(endpoint, kind, why)

    def _failed(self, endpoint: Endpoint, kind: str, why: str) -> str:
        self.stats["failures"] += 1
        self.stats[f"failure:{kind}"] += 1
        return f"{endpoint.model}: {kind}: {why[:200]}"


async def _none() -> None:
    return None


def judge_endpoints(spec: str | Sequence[str], timeout_s: float = 30.0, api_key: str | None = None,
                    direct: bool = False) -> tuple[Endpoint, ...]:
    """Endpoints from ``--judge URL[,URL,URL]``: each an OpenAI-compatible base URL, with
    the model after a ``#`` (``http://127.0.0.1:8001/v1#qwen-judge``); without one, the
    first model the server lists at ``/models`` (a vLLM server lists the one it serves).

    Raises:
        ValueError: for no URL, more than three, a URL that is not http(s), or a server
            that cannot be asked for its model.
    """
    urls = [u.strip() for u in (spec.split(",") if isinstance(spec, str) else spec) if u and u.strip()]
    if not 1 <= len(urls) <= 3:
        raise ValueError(f"--judge takes one to three URLs (a vote of up to three models), got {len(urls)}")
    out = []
    for url in urls:
        base, _, model = url.partition("#")
        if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
            raise ValueError(f"--judge {safe_url(url)!r}: expected an http(s) URL such as http://127.0.0.1:8001/v1"
                             "#MODEL")
        out.append(Endpoint(model or _served_model(base, timeout_s, api_key), base, api_key=api_key,
                            timeout_s=timeout_s, max_retries=1, direct=direct))
    return tuple(out)


def _served_model(base: str, timeout_s: float, api_key: str | None) -> str:
    """The first model ``base``/models lists."""
    request = urllib.request.Request(base.rstrip("/") + "/models",
                                     headers={"Authorization": f"Bearer {api_key or 'not-needed'}"})
    try:
        with urllib.request.urlopen(request, timeout=min(timeout_s, 10.0)) as resp:  # noqa: S310 - a user's URL
            models = json.loads(resp.read()).get("data") or []
        return str(models[0]["id"])
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"--judge {safe_url(base)}: no model named after '#', and the server's /models did not "
                         f"name one ({type(exc).__name__}: {str(exc)[:120]})") from None
