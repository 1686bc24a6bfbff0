"""Build a built-in or LLM policy by name (the command line's ``--policy``)."""

from __future__ import annotations

from liveroom_sim.errors import UnknownNameError
from liveroom_sim.policies.naive import NaiveAvatar
from liveroom_sim.policies.scripted import ScriptedAvatar


def make_policy(name: str, **options):
    """Build a policy by name: ``scripted`` (optionally ``temperature`` and ``seed``, see
    :class:`ScriptedAvatar`), ``brief`` (the briefer honest host,
    :class:`~liveroom_sim.policies.brief.BriefAvatar`), ``naive`` or ``openai``.

    ``openai`` takes ``model`` and optionally ``base_url``, ``api_key``, ``timeout_s``,
    ``max_retries``, ``direct`` (see :class:`liveroom_sim.llm.client.Endpoint`) and sampling
    options (see :class:`liveroom_sim.llm.avatar.OpenAIAvatar`).
    """
    if name == "openai":
        from liveroom_sim.llm.avatar import OpenAIAvatar
        from liveroom_sim.llm.client import Endpoint

        endpoint_keys = ("model", "base_url", "api_key", "timeout_s", "max_retries", "direct")
        endpoint = Endpoint(**{k: options.pop(k) for k in endpoint_keys if k in options})
        return OpenAIAvatar(endpoint, **options)
    from liveroom_sim.policies.brief import BriefAvatar

    policies = {"scripted": ScriptedAvatar, "naive": NaiveAvatar, "brief": BriefAvatar}
    if name not in policies:
        raise UnknownNameError("policy", name, [*policies, "openai"])
    if name == "scripted":
        return ScriptedAvatar(**{k: options[k] for k in ("temperature", "seed") if k in options})
    return policies[name]()
