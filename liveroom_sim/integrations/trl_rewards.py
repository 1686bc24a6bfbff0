"""TRL reward functions: the LiveRoom reward of each completion, total or by component.

A reward function is called as ``f(prompts=..., completions=..., **columns)`` plus
``environments=[...]`` under ``environment_factory`` and returns one ``float`` (or
``None``: not applicable) per completion. Re-exported by :mod:`liveroom_sim.integrations.trl`.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from liveroom_sim.rewards.registry import COMPONENTS

DEFAULT_ENV_ID = "LiveRoom-v0"


def _make_env(env_id: str | None, spec: str | None):
    """``gym.make`` the env (registering ``spec`` first, for fresh worker processes)."""
    import gymnasium as gym

    import liveroom_sim

    if spec is not None:
        env_id = liveroom_sim.register_spec(spec, env_id)
    env_id = env_id or DEFAULT_ENV_ID
    return gym.make(env_id), env_id


def liveroom_reward_total(prompts=None, completions=None, environments=None, **kwargs) -> list[float | None]:
    """The LiveRoom reward total of each completion (a TRL reward function).

    With ``environments`` (``environment_factory`` training): the episode's return, the
    sum of its steps' totals. Without: the completion's text scored as the reply to the
    row's stream: a ``reward_case`` column (a :class:`~liveroom_sim.rewards.cases.RewardCase`
    as a dict or JSON) is scored with the reward model, else the row's ``seed`` (and
    ``env_id``) stream is opened and the text is its first action. ``None`` when the row
    carries neither.
    """
    return _rewards("total", completions, environments, kwargs)


def _component_reward(name: str):
    """The TRL reward function of one reward component, named ``liveroom_<name>``."""
    def reward(prompts=None, completions=None, environments=None, **kwargs) -> list[float | None]:
        return _rewards(name, completions, environments, kwargs)

    reward.__name__ = reward.__qualname__ = f"liveroom_{name}"
    reward.__doc__ = (f"The ``{name}`` component of each completion's LiveRoom reward "
                      "(see :func:`liveroom_reward_total`).")
    return reward


#: One reward function per reward component (unweighted component values), made from the
#: components' declaration: ``liveroom_factuality``, ``liveroom_compliance``, ...
COMPONENT_REWARD_FUNCS = tuple(_component_reward(c.name) for c in COMPONENTS if not c.optional)
globals().update({f.__name__: f for f in COMPONENT_REWARD_FUNCS})

#: The total first, then the components: pass with ``reward_weights=[1, 0, 0, 0, 0, 0, 0, 0]``
#: to train on the total and log every component.
REWARD_FUNCS = (liveroom_reward_total, *COMPONENT_REWARD_FUNCS)


def _rewards(key: str, completions, environments, columns: dict) -> list[float | None]:
    if environments is not None:
        return [_episode_value(env, key) for env in environments]
    cases, seeds, env_ids = columns.get("reward_case"), columns.get("seed"), columns.get("env_id")
    out: list[float | None] = []
    for i, completion in enumerate(completions or ()):
        text = _completion_text(completion)
        case = cases[i] if cases is not None else None
        if case is not None:
            breakdown = _score_case(_case_json(case), text)
        elif seeds is not None and seeds[i] is not None:
            env_id = (env_ids[i] if env_ids is not None else None) or DEFAULT_ENV_ID
            breakdown = _replay(env_id, int(seeds[i]), text)
        else:
            out.append(None)
            continue
        out.append(float(breakdown[key]))
    return out


def _case_json(case: Any) -> str:
    if isinstance(case, str):
        return case
    if hasattr(case, "model_dump_json"):
        return case.model_dump_json()
    return json.dumps(case, sort_keys=True)


def _episode_value(env: Any, key: str) -> float | None:
    settle = getattr(env, "_settle_early_end", None)  # a rollout stopped early is scored for the room it left
    if callable(settle):
        settle()
    returns = getattr(env, "returns", None)
    return float(returns.get(key, 0.0)) if isinstance(returns, dict) else None


def _completion_text(completion: Any) -> str:
    """What a completion says: the string, or its last assistant message's text."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    for message in reversed(completion or ()):
        if isinstance(message, dict) and message.get("role", "assistant") == "assistant":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
            if isinstance(content, str) and content:
                return content
    return ""


@functools.lru_cache(maxsize=4096)
def _score_case(case_json: str, text: str) -> dict[str, float]:
    """A serialized reward case with ``text`` as its reply, scored by its spec's reward model.

    Cached because every reward function scores the same completions; scoring is pure.
    """
    from liveroom_sim.rewards.cases import RewardCase, build_context, world_for
    from liveroom_sim.rewards.model import RewardModel

    case = RewardCase.model_validate_json(case_json).model_copy(update={"reply": text, "kind": "reply"})
    world = world_for(case.env)
    return RewardModel(world.spec.reward).score(build_context(case, where=case.id)).as_dict()


@functools.lru_cache(maxsize=4096)
def _replay(env_id: str, seed: int, text: str) -> dict[str, float]:
    """The reward of ``text`` as the first action of stream ``seed`` (pure: cached)."""
    env = _replay_env(env_id)
    env.reset(seed=seed)
    return dict(env.step(text)[4]["reward_breakdown"])


@functools.lru_cache(maxsize=8)
def _replay_env(env_id: str):
    # ``reset(seed)`` rebuilds the whole room, so reusing one env per id changes no result.
    return _make_env(env_id, None)[0]
