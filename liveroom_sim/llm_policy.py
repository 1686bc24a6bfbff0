"""Kept for old imports: the LLM avatar now lives in :mod:`liveroom_sim.llm.avatar`."""

from liveroom_sim.llm.avatar import Accounting, OpenAIAvatar
from liveroom_sim.llm.client import Endpoint, EndpointError, redact

__all__ = ["Accounting", "Endpoint", "EndpointError", "OpenAIAvatar", "redact"]
