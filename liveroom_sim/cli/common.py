"""What every command shares: building the policy and the env it names."""

from __future__ import annotations

import gymnasium as gym

from liveroom_sim import resolve_env_id
from liveroom_sim.policies import make_policy


def _policy(name: str, args):
    if name == "openai" or (name is None and (args.base_url or args.model)):
        if not args.model:
            raise ValueError("--model is required for an OpenAI-compatible policy")
        return make_policy("openai", model=args.model, base_url=args.base_url,
                           temperature=args.temperature, max_tokens=args.max_tokens)
    return make_policy(name or "scripted")


def _make_env(env: str):
    return gym.make(resolve_env_id(env)).unwrapped
