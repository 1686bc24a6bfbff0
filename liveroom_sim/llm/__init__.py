"""The LLM layer: OpenAI-compatible endpoints and what talks to them.

Clients (the openai client and a lean HTTP/1.1 one), the LLM avatar and LLM-phrased
viewers. Imports only :mod:`liveroom_sim.errors`; knows nothing of rooms or rewards.
"""

from liveroom_sim.llm.client import DirectChatClient, Endpoint, EndpointError, redact

__all__ = ["DirectChatClient", "Endpoint", "EndpointError", "redact"]
