"""What went wrong in a case, told apart by cause (recorded on the case, never raised)."""

from __future__ import annotations

from liveroom_sim.llm.client import EndpointError, EndpointRefused, EndpointUnavailable, scrub


def classify(exc: BaseException) -> tuple[str, str]:
    """``(kind, reason)`` for an exception a policy raised during a case's turn.

    Kinds: ``timeout`` (the endpoint did not answer in time), ``endpoint`` (unreachable,
    5xx after retries, or refused the request), ``malformed_response`` (it answered, but
    not a usable chat completion) and ``crash`` (a bug in the policy).
    """
    text = scrub(f"{type(exc).__name__}: {exc}")[:500]
    if isinstance(exc, EndpointError):
        low = text.lower()
        if "timed out" in low or "timeout" in low:
            return "timeout", text
        if isinstance(exc, EndpointUnavailable | EndpointRefused):
            return "endpoint", text
        return "malformed_response", text
    if isinstance(exc, TimeoutError):
        return "timeout", text
    return "crash", text
