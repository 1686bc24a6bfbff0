"""Helpers for the tests of skills on demand, the paper's hooks and the reasoning budget,
played on LiveRoom-TaoLive-v0 (HSA off unless a test turns it on)."""

from __future__ import annotations

import atexit
import json
import re
import shutil
import tempfile
from pathlib import Path

import gymnasium as gym
import yaml

import liveroom_sim  # noqa: F401
from liveroom_sim.world.paths import ENVS_DIR

PLAIN = {"harness_augmentation": {"probability": 0.0}}
#: Tool faults off (they have their own tests): the features here are tested alone.
NO_FAULTS = "tools: {faults: {timeout: 0.0, malformed: 0.0, truncated: 0.0, denied: 0.0}}\n"
_SPECS: dict[str, str] = {}
WAITING = re.compile(r"^- @(\S+) \((\d+)s\): (.*)$", re.M)


def make(env_id: str = "LiveRoom-TaoLive-v0", faults: bool = False, **kwargs):
    """An env of a registered id, or of a spec file, with HSA off unless asked for; for
    LiveRoom-TaoLive-v0, tool faults off unless asked for."""
    from liveroom_sim.env import LiveRoomEnv

    if env_id == "LiveRoom-TaoLive-v0" and not faults:
        env_id = _SPECS.get(env_id) or _SPECS.setdefault(env_id, _without_faults())
    if env_id.endswith(".yaml"):
        return LiveRoomEnv(env_id, **{**PLAIN, **kwargs})
    return gym.make(env_id, **{**PLAIN, **kwargs})


def _without_faults() -> str:
    folder = Path(tempfile.mkdtemp(prefix="taolive-"))
    atexit.register(shutil.rmtree, folder, True)
    spec = folder / "TaoLiveNoFaults-v0.yaml"
    spec.write_text(f"extends: {ENVS_DIR / 'LiveRoom-TaoLive-v0.yaml'}\nid: TaoLiveNoFaults-v0\n{NO_FAULTS}",
                    encoding="utf-8")
    return str(spec)


def variant_spec(tmp_path: Path, edit) -> str:
    """A spec like LiveRoom-TaoLive-v0 whose harness.yaml ``edit(dict)`` changed."""
    folder = tmp_path / "harness"
    shutil.copytree(ENVS_DIR / "harness" / "taolive-zh", folder)
    data = yaml.safe_load((folder / "harness.yaml").read_text(encoding="utf-8"))
    edit(data)
    (folder / "harness.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    spec = tmp_path / "Variant-v0.yaml"
    spec.write_text(f"extends: {ENVS_DIR / 'LiveRoom-TaoLive-v0.yaml'}\nid: Variant-v0\nharness: harness\n"
                    f"harness_augmentation: {{probability: 0.0}}\n{NO_FAULTS}", encoding="utf-8")
    return str(spec)


def hook(data: dict, kind: str) -> dict:
    return next(h for h in data["hooks"] if h["type"] == kind)


def call(name: str, **arguments) -> str:
    return json.dumps({"tool_calls": [{"id": "c1", "type": "function",
                                       "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}}]},
                      ensure_ascii=False)


def calls(*pairs) -> str:
    return json.dumps({"tool_calls": [{"id": f"c{i}", "type": "function",
                                       "function": {"name": n, "arguments": json.dumps(a, ensure_ascii=False)}}
                                      for i, (n, a) in enumerate(pairs)]}, ensure_ascii=False)


def update(info: dict) -> str:
    """The latest room update the policy was shown."""
    return next(m["content"] for m in reversed(info["messages"])
                if m["role"] == "user" and re.match(r"^\[\d+:\d+\]", m["content"] or ""))


def first_waiting(info: dict) -> str | None:
    found = WAITING.findall(update(info))
    return found[0][0] if found else None
