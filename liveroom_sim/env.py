"""The Gymnasium environment: a thin adapter over :class:`liveroom_sim.sim.room.Room`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym

from liveroom_sim.harness.augment import AugmentConfig
from liveroom_sim.sim.lazy import Lazy, LazyDict
from liveroom_sim.sim.render import render_room
from liveroom_sim.sim.room import Room
from liveroom_sim.spaces import UnicodeText
from liveroom_sim.spec import World, load_spec


class LiveRoomEnv(gym.Env[str, str]):
    """A live-commerce stream hosted by a digital-avatar streamer (the policy).

    ## Description
    Simulated viewers, each driven by a persona, arrive, chat, ask about products, bait
    the host, buy and leave, while a campaign timeline changes prices, stock, coupons,
    the featured product, compliance rules, style directives and the harness. The
    policy answers the room, using the harness's tools to look facts up.

    ## Action Space
    ``UnicodeText``: any string. Plain text is a reply spoken to the room (address a
    viewer as ``@name``). A JSON OpenAI assistant message with ``tool_calls`` is a tool
    turn: the tools run on the catalog as of now and their results come back as
    ``tool`` messages; nothing is said to the room. Malformed JSON, unknown tools and bad
    arguments give an error tool message and a ``harness`` penalty, never an exception.

    ## Observation Space
    ``UnicodeText``: the next-turn prompt as text (``info["messages"]`` flattened, one
    ``role: content`` block per message). ``info["messages"]`` and ``info["tools"]``
    hold the same in OpenAI chat format, for LLM policies.

    ## Rewards
    Each step's reward is the reward model's weighted total of the reward components
    :data:`liveroom_sim.rewards.registry.COMPONENTS` declares (each with its function,
    default weight and whether only a reply that serves a need of the room earns it),
    reported by name in ``info["reward_breakdown"]``. Each lies in [-1, 1] but the one
    that charges what the room lost during the step (questions that expired, viewers
    who left unanswered; a truncated episode is charged for the stream it leaves).
    Weights and the compliance gate come from the env spec. See ``docs/rewards.md``.

    ``reset(options={"harness_variant": k})`` picks the seed's k-th harness variant when
    augmentation is on (the task stays the seed's). ``reset(options={"tool_faults":
    [{"kind": "timeout", "tool": "get_price_stock"}, ...]})`` pins tool faults on given
    calls (see :class:`~liveroom_sim.harness.faults.PinnedFault` and ``docs/tool-faults.md``);
    ``info["turn"]["tool_faults"]`` lists the faults that hit a tool turn.

    ## Starting State
    The campaign's opening product is featured, ``viewers.initial`` viewers of the
    spec's persona mix are present, and events at time 0 have fired. All of it is drawn
    from the seed.

    ## Episode End
    Terminated when the stream's scheduled time (``stream.duration_s``) is over;
    truncated at ``stream.max_steps`` steps.

    ## Arguments
    - ``spec``: a spec file path or a loaded :class:`World` (registered ids pass theirs).
    - ``render_mode``: ``"ansi"`` (``render()`` returns the room as text) or ``"human"``
      (prints it).
    - ``reward_model``: optional replacement :class:`~liveroom_sim.rewards.model.RewardModel`.
    - ``harness_augmentation``: Harness-State Augmentation settings (a dict or
      :class:`~liveroom_sim.harness.augment.AugmentConfig`) overriding the spec's; see
      :mod:`liveroom_sim.harness.augment`.
    - ``info``: ``"full"`` (the default: every entry above; the chat ``messages``, the
      ``metrics`` and the ``reward_reasons`` are built on first read, from what they were
      at the step) or ``"lean"``: only ``reward_breakdown`` and ``events`` (and
      ``episode`` at the end), for trainers that read the observation text alone and for
      vector envs, which copy every entry of every env's info each step. The room is
      the same either way (``env.unwrapped.room.messages()`` still gives the chat).

    ## Version History
    - v0: initial release. ``LiveRoom-HarnessVariant-v0`` is LiveRoom-v0 with
      augmentation on for every episode.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    def __init__(self, spec: str | Path | World, render_mode: str | None = None, reward_model=None,
                 harness_augmentation: AugmentConfig | dict | None = None, info: str = "full"):
        if info not in ("full", "lean"):
            raise ValueError(f"info must be 'full' or 'lean', got {info!r}")
        self.info_mode = info
        self.world = spec if isinstance(spec, World) else load_spec(spec)
        if isinstance(harness_augmentation, dict):
            harness_augmentation = AugmentConfig(**harness_augmentation)
        self.harness_augmentation = harness_augmentation
        self.record_transcript = False
        self.measured_latency_s: float | None = None
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.reward_model = reward_model
        self.observation_space = UnicodeText()
        self.action_space = UnicodeText()
        self.room: Room | None = None
        self._last_turn = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict]:
        super().reset(seed=seed)
        variant = int((options or {}).get("harness_variant", 0))
        self.room = Room(self.world, self.np_random, self.reward_model, self.harness_augmentation, variant,
                         record=self.record_transcript)
        if (options or {}).get("tool_faults"):  # faults forced on given calls (eval cases)
            self.room.faults.pin_many(options["tool_faults"])
        self._last_turn = None
        info = self._info(None)
        if self.render_mode == "human":
            self.render()
        return self.room.observation(), info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict]:
        if self.room is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        turn = self.room.step(action, latency_s=self.measured_latency_s)
        self.measured_latency_s = None
        self._last_turn = turn
        info = self._info(turn)
        if self.render_mode == "human":
            self.render()
        return self.room.observation(), float(turn.reward.total), self.room.terminated, self.room.truncated, info

    def _info(self, turn) -> dict:
        room = self.room
        over = room.terminated or room.truncated
        events = room.events if turn is None else turn.events
        breakdown = dict.fromkeys(room.returns, 0.0) if turn is None else turn.reward.as_dict()
        if self.info_mode == "lean":
            info = {"events": events, "reward_breakdown": breakdown}
            if over:
                info["episode"] = room.summary()
            return info
        # A LazyDict: the chat messages, the metrics and the reward's reasons, which
        # trainers rarely read, are built on first read, from what they were at this step.
        info = {
            "messages": Lazy(room.messages_now()),
            "tools": room.tools(),
            "metrics": Lazy(room.metrics_now()),
            "room": {"env_id": self.world.spec.id, "language": self.world.spec.language,
                     "harness_augmented": room.augmented},
            "events": events,
            "reward_breakdown": breakdown,
        }
        if turn is not None:
            info["reward_reasons"] = Lazy(turn.reward.explain)
            info["turn"] = {"kind": turn.kind, "delivered": turn.delivered, "hooks": list(turn.hooks),
                            "tool_errors": list(turn.tool_errors),
                            "tool_faults": list(turn.tool_faults), "answered": turn.answered, "reply": turn.reply,
                            "latency_s": turn.latency_s, "gated": turn.reward.gated,
                            "reasoning_chars": turn.reasoning_chars}
        if over:
            info["metrics"] = info["metrics"].build()
            info["episode"] = room.summary(info["metrics"])
        return LazyDict(info)

    def render(self):
        if self.room is None:
            return None
        text = render_room(self.room, self._last_turn)
        if self.render_mode == "human":
            print(text)
            return None
        return text

