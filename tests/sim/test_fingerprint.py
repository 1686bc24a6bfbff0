"""Behaviour fingerprints of the registered envs: refactors and speed work must not change
what a policy gets back, and when behaviour is meant to change, the diff must be readable.

Each case plays one whole episode of a registered env with a built-in avatar. After each
step it takes everything a user reads: the action, the observation, the reward, the end
flags and every ``info`` entry (messages, tools, reward breakdown and reasons, events,
metrics, turn, episode summary). ``tests/fixtures/fingerprints.json`` keeps, per case, the
steps, the return, a sha256 of the whole episode and, per step, a short digest of each of
those entries, so a failure names the first step that differs and which entries differ
there (with their new values).

To see the old values too, dump full traces on both commits and diff them::

    .venv/bin/python tests/sim/test_fingerprint.py --trace build/fp-old     # on the base
    .venv/bin/python tests/sim/test_fingerprint.py --trace build/fp-new     # on your change
    .venv/bin/python tests/sim/test_fingerprint.py --diff build/fp-old build/fp-new

When a change is *meant* to alter behaviour (and the issue says so), read that diff, then
regenerate the file and commit it with the change, saying why::

    .venv/bin/python tests/sim/test_fingerprint.py --write
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import gymnasium as gym
import pytest

import liveroom_sim  # noqa: F401  (registers the envs)
from liveroom_sim.env import LiveRoomEnv
from liveroom_sim.policies import NaiveAvatar, ScriptedAvatar
from liveroom_sim.spec import load_spec
from liveroom_sim.world.paths import ENVS_DIR

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fingerprints.json"
ENVS = ("LiveRoom-v0", "LiveRoom-zh-v0", "LiveRoom-HarnessVariant-v0", "LiveRoom-TaoLive-v0")
POLICIES = {"scripted": ScriptedAvatar, "naive": NaiveAvatar}
#: (env, avatar, seed, room): ``room`` is the env as registered (""), cut short by
#: ``stream.max_steps`` (``"cut"``: the room settles the stream it leaves, played out on
#: a copy of the crowd), or with a crowd of 200 from the start (``"crowd"``).
CASES = [(env_id, policy, seed, "") for env_id in ENVS for policy, seed in (("scripted", 0), ("scripted", 1), ("naive", 0))]
CASES += [(env_id, "scripted", 2, room) for env_id in ENVS for room in ("cut", "crowd")]
#: The entries of a step besides ``info``'s own keys (which are added, sorted, after them).
STEP_ENTRIES = ("action", "observation", "reward", "terminated", "truncated")
#: Hex digits of each entry's per-step digest: enough to tell which entries changed at the
#: first differing step (the whole episode's sha256 is what detects a change).
SHORT = 3
#: Characters of a value printed in a failure message.
SHOWN = 400


def _dump(value) -> bytes:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False).encode()


def make(env_id: str, room: str = ""):
    if not room:
        return gym.make(env_id)
    world = load_spec(ENVS_DIR / f"{env_id}.yaml")
    spec = world.spec
    if room == "cut":
        spec = spec.model_copy(update={"stream": spec.stream.model_copy(update={"max_steps": 120})})
    else:
        spec = spec.model_copy(update={"viewers": spec.viewers.model_copy(update={
            "initial": 200, "max_present": 200, "arrivals_per_min": 60.0})})
    return LiveRoomEnv(world.model_copy(update={"spec": spec}))


def play(env_id: str, policy: str, seed: int, room: str = ""):
    """Yield each step of one episode as a dict of its entries (step 0 is the reset)."""
    env = make(env_id, room)
    avatar = POLICIES[policy]()
    obs, info = env.reset(seed=seed)
    yield {"observation": obs, **info}
    steps, done = 0, False
    while not done and not (room == "crowd" and steps == 150):
        action = avatar(obs, info)
        obs, reward, terminated, truncated, info = env.step(action)
        yield {"action": action, "observation": obs, "reward": round(reward, 9),
               "terminated": terminated, "truncated": truncated, **info}
        steps, done = steps + 1, terminated or truncated
    env.close()


def _entries(step: dict) -> list[str]:
    return [*(k for k in STEP_ENTRIES if k in step), *sorted(k for k in step if k not in STEP_ENTRIES)]


def _digests(step: dict) -> dict[str, str]:
    return {k: hashlib.sha256(_dump(step[k])).hexdigest()[:SHORT] for k in step}


def _encode(steps: list[dict[str, str]]) -> tuple[str, list[str]]:
    """The entry names of an episode and one line a step: each entry's short digest in
    that order, ``.`` where it equals the step before's, ``-`` where the step lacks it
    (most entries change every step, a few hardly ever: this keeps the fixture small)."""
    names = _entries({k: None for step in steps for k in step})
    lines, before = [], {}
    for step in steps:
        lines.append(" ".join("-" if k not in step else "." if step[k] == before.get(k) else step[k] for k in names))
        before = step
    return " ".join(names), lines


def _decode(names: str, lines: list[str]) -> list[dict[str, str]]:
    steps, before = [], {}
    for line in lines:
        step = {}
        for k, d in zip(names.split(), line.split()):
            if d != "-":
                step[k] = before[k] if d == "." else d
        steps.append(step)
        before = step
    return steps


def fingerprint(env_id: str, policy: str, seed: int, room: str = "", trace: list | None = None) -> dict:
    """Steps, return, whole-episode digest and per-step entry digests of one episode;
    ``trace``, when given, receives every step's full entries."""
    digest, ret, digests = hashlib.sha256(), 0.0, []
    for step in play(env_id, policy, seed, room):
        # The whole-episode digest hashes what the earlier fixture format hashed, in the same order.
        info = {k: step[k] for k in step if k not in STEP_ENTRIES}
        digest.update(_dump([step["observation"], info] if "action" not in step else
                            [*(step[k] for k in STEP_ENTRIES), info]))
        ret += step.get("reward", 0.0)
        digests.append(_digests(step))
        if trace is not None:
            trace.append(step)
    names, lines = _encode(digests)
    return {"steps": len(digests) - 1, "return": round(ret, 6), "digest": digest.hexdigest(), "entries": names, "trace": lines}


def _key(env_id: str, policy: str, seed: int, room: str = "") -> str:
    return f"{env_id} {policy} seed {seed}" + (f" ({room})" if room else "")


def _clip(value) -> str:
    text = _dump(value).decode()
    return text if len(text) <= SHOWN else text[:SHOWN] + f"... ({len(text)} chars)"


def first_difference(expected: dict, found: dict, steps: list[dict] | None = None) -> str:
    """Where two fingerprints' per-step traces first part: the step, the entries that
    differ and, when the found steps are at hand, their new values."""
    old_steps = _decode(expected["entries"], expected["trace"])
    new_steps = _decode(found["entries"], found["trace"])
    for i, (old, new) in enumerate(zip(old_steps, new_steps)):
        if old == new:
            continue
        changed = [k for k in _entries({**old, **new}) if old.get(k) != new.get(k)]
        lines = [f"step {i} ({'reset' if i == 0 else 'after the action'}) differs in: {', '.join(changed)}"]
        if steps is not None:
            if "action" in steps[i]:
                lines.append(f"  action: {_clip(steps[i]['action'])}")
            lines += [f"  {k} now: {_clip(steps[i][k])}" if k in steps[i] else f"  {k}: gone" for k in changed]
        return "\n".join(lines)
    if len(old_steps) != len(new_steps):
        return f"the episode now has {len(new_steps) - 1} steps, it had {len(old_steps) - 1}; every common step is the same"
    return "every step's entries match by their short digests; the whole-episode digest differs (a digest collision)"


@pytest.mark.parametrize("env_id,policy,seed,room", CASES)
def test_behaviour_is_unchanged(env_id, policy, seed, room):
    expected = json.loads(FIXTURE.read_text())[_key(env_id, policy, seed, room)]
    steps: list[dict] = []
    found = fingerprint(env_id, policy, seed, room, trace=steps)
    if found == expected:
        return
    pytest.fail(f"{env_id} ({room or 'as registered'}) with the {policy} avatar (seed {seed}) no longer plays as recorded "
                f"(steps {expected['steps']} -> {found['steps']}, return {expected['return']} -> {found['return']}):\n"
                f"{first_difference(expected, found, steps)}\n"
                "If that is intended, read the full diff and regenerate the fixture (see the module docstring).",
                pytrace=False)


def test_a_changed_step_is_named_with_its_entries_and_new_values():
    steps: list[dict] = []
    old = fingerprint("LiveRoom-v0", "naive", 0, "cut", trace=steps)
    steps[7]["metrics"] = {**steps[7]["metrics"], "purchases": -1}
    names, lines = _encode([_digests(s) for s in steps])
    message = first_difference(old, {**old, "entries": names, "trace": lines}, steps)
    assert message.startswith("step 7 (after the action) differs in: metrics\n")
    assert '"purchases": -1' in message and "action:" in message
    assert first_difference(old, {**old, "trace": old["trace"][:-3]}).startswith("the episode now has")


def _write_traces(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for case in CASES:
        steps: list[dict] = []
        fingerprint(*case, trace=steps)
        with open(folder / (_key(*case).replace(" ", "_") + ".jsonl"), "w") as f:
            f.writelines(_dump(s).decode() + "\n" for s in steps)
    print(f"wrote {len(CASES)} traces to {folder}")


def _diff_traces(old: Path, new: Path) -> None:
    for path in sorted(old.glob("*.jsonl")):
        a = [json.loads(line) for line in open(path)]
        b = [json.loads(line) for line in open(new / path.name)]
        where = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
        if where is None and len(a) == len(b):
            continue
        print(f"== {path.stem.replace('_', ' ')}")
        if where is None:
            print(f"   {len(a) - 1} -> {len(b) - 1} steps; every common step is the same")
            continue
        print(f"   first difference at step {where}; action {_clip(b[where].get('action'))}")
        for k in _entries({**a[where], **b[where]}):
            if a[where].get(k) != b[where].get(k):
                print(f"   {k}:\n     old {_clip(a[where].get(k))}\n     new {_clip(b[where].get(k))}")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--write"]:
        FIXTURE.write_text(json.dumps({_key(*case): fingerprint(*case) for case in CASES}, indent=1) + "\n")
        print(f"wrote {FIXTURE}")
    elif len(args) == 2 and args[0] == "--trace":
        _write_traces(Path(args[1]))
    elif len(args) == 3 and args[0] == "--diff":
        _diff_traces(Path(args[1]), Path(args[2]))
    else:
        sys.exit(__doc__)
