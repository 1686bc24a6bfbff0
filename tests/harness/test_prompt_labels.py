"""The system prompt's wording is data (``envs/prompt/<lang>.yaml``): a broken file is an
error that names the file and the label, and a language without a file is named too."""

import shutil

import pytest

from liveroom_sim.errors import SpecError
from liveroom_sim.harness import prompt
from liveroom_sim.world import datafile
from liveroom_sim.world.paths import ENVS_DIR


def test_every_shipped_language_renders_every_label():
    assert set(prompt.LABELS) >= {"en", "zh"}
    for labels in prompt.LABELS.values():
        assert labels["claims"].format(name="medical") and labels["max"].format(n=80)


def test_a_label_that_lost_its_slot_is_named(tmp_path):
    path = tmp_path / "en.yaml"
    shutil.copy(ENVS_DIR / "prompt" / "en.yaml", path)
    path.write_text(path.read_text().replace('claims: "No {name} claims about"', 'claims: "No {nmae} claims"'))
    with pytest.raises(SpecError) as err:
        datafile.load(prompt.PromptLabels, path)
    assert "en.yaml" in str(err.value) and "claims" in str(err.value) and "nmae" in str(err.value)


def test_a_language_without_wording_is_an_error_that_says_what_to_add():
    import gymnasium as gym

    env = gym.make("LiveRoom-v0")
    env.reset(seed=0)
    room = env.unwrapped.room
    with pytest.raises(SpecError, match="prompt/fr.yaml"):
        prompt.system_prompt(room.harness, room.market, "fr", {"name": "Glow", "host_name": "Ava"}, frozenset())
