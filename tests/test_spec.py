"""Specs and data files: bad files fail with the file, the field and what was expected;
user specs register with Gymnasium; the built-in data is as large as the brief says."""

from __future__ import annotations

import typing
from pathlib import Path

import gymnasium as gym
import pytest

import liveroom_sim
from liveroom_sim.errors import SpecError
from liveroom_sim.spec import load_spec
from liveroom_sim.world.campaign import CampaignEvent
from liveroom_sim.world.paths import ENVS_DIR, PERSONAS_DIR

TINY_DIR = Path(__file__).parent / "fixtures" / "tiny"
ARCHETYPES = {"bargain_hunter", "researcher", "impulse_buyer", "skeptic", "returning_customer", "gift_buyer",
              "lurker", "troll", "compliance_baiter", "prompt_injector", "newcomer"}


@pytest.fixture
def tiny(tiny_dir) -> Path:
    return tiny_dir


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))
    return path


def load_error(spec: Path) -> SpecError:
    with pytest.raises(SpecError) as caught:
        load_spec(spec)
    return caught.value


# ------------------------------------------------------------------ bad files
def test_persona_field_of_the_wrong_type(tiny):
    persona = edit(tiny / "personas" / "eager_shopper.yaml", "chat_rate_per_min: 4", "chat_rate_per_min: fast")
    err = load_error(tiny / "tiny-v0.yaml")
    message = str(err)
    assert err.path == str(persona) and str(persona) in message
    assert "field 'chat_rate_per_min'" in message and "valid number" in message and "'fast'" in message


def test_persona_with_an_unknown_topic(tiny):
    persona = edit(tiny / "personas" / "eager_shopper.yaml", "greet: 0.5", "dancing: 0.5")
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert str(persona) in message
    assert "field 'topics'" in message and "unknown topics ['dancing']" in message and "expected some of" in message
    assert "'price'" in message  # the known topics are listed


def test_persona_file_name_must_match_its_name(tiny):
    persona = edit(tiny / "personas" / "eager_shopper.yaml", "name: eager_shopper", "name: eager_buyer")
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert str(persona) in message and "field 'name'" in message and "'eager_shopper'" in message


def test_catalog_product_without_a_price(tiny):
    catalog = edit(tiny / "catalog.yaml", "    price: 15.00\n", "")
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert str(catalog) in message
    assert "products.1" in message and "price'" in message and "Field required" in message


@pytest.mark.parametrize("rel, old, new, bad", [
    ("personas/eager_shopper.yaml", "description: Asks", "description: Asks: short", "Asks: short"),
    ("catalog.yaml", "    brand: Tinyloom\n", "    brand: [Tinyloom\n", "[Tinyloom"),
    ("tiny-v0.yaml", "  initial: 3\n", "  initial: 3\n   bad indent: 1\n", "bad indent"),
])
def test_broken_yaml_names_the_file_and_line(tiny, rel, old, new, bad):
    path = edit(tiny / rel, old, new)
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert str(path) in message and "broken YAML at line" in message
    line = int(message.split("broken YAML at line ")[1].split(",")[0])
    bad_line = next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if bad in text)
    assert bad_line <= line <= bad_line + 1  # YAML may only notice at the next line


def test_campaign_naming_an_unknown_product(tiny):
    campaign = edit(tiny / "campaign.yaml", "product: ap-tee-t", "product: ap-nope")
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert str(campaign) in message
    assert "field 'events.2.product'" in message and "'ap-nope'" in message and "product id of the catalog" in message


def test_campaign_renaming_an_unknown_tool(tiny):
    edit(tiny / "campaign.yaml", "rename_tool: {get_price_stock:", "rename_tool: {get_prices:")
    message = str(load_error(tiny / "tiny-v0.yaml"))
    assert "events.3.rename_tool" in message and "'get_prices'" in message and "'get_price_stock'" in message


def test_spec_with_an_unknown_reward_component(tiny):
    spec = edit(tiny / "tiny-v0.yaml", "outcome: 1.0}", "outcome: 1.0, style: 1.0}")
    message = str(load_error(spec))
    assert str(spec) in message
    assert "field 'reward.weights'" in message and "unknown reward components ['style']" in message
    assert "'factuality'" in message


def test_spec_with_a_misspelt_reward_component(tiny):
    spec = edit(tiny / "tiny-v0.yaml", "factuality: 1.0", "factualty: 1.0")
    message = str(load_error(spec))
    assert str(spec) in message and "field 'reward.weights'" in message
    assert "unknown reward components ['factualty'] (did you mean 'factuality'?)" in message


def test_spec_missing_its_catalog(tiny):
    spec = edit(tiny / "tiny-v0.yaml", "catalog: catalog.yaml\n", "")
    message = str(load_error(spec))
    assert str(spec) in message and "field 'catalog'" in message and "Field required" in message


def test_persona_mix_naming_an_unknown_persona(tiny):
    spec = edit(tiny / "tiny-v0.yaml", "bargain_hunter: 1.0", "bargin_hunter: 1.0")
    message = str(load_error(spec))
    assert str(spec) in message and "viewers.mix" in message and "bargain_hunter" in message


def test_reloading_a_spec_sees_edits_to_the_files_it_names(tiny):
    spec = tiny / "tiny-v0.yaml"
    assert load_spec(spec).catalog.by_id["ap-tee-t"].price == 15.0
    edit(tiny / "catalog.yaml", "    price: 15.00\n", "    price: 12.00\n")
    assert load_spec(spec).catalog.by_id["ap-tee-t"].price == 12.0


# ------------------------------------------------------------------ registration
def test_register_spec_then_make(tiny):
    env_id = liveroom_sim.register_spec(TINY_DIR / "tiny-v0.yaml")
    assert env_id == "Tiny-v0"
    env = gym.make(env_id)
    _, info = env.reset(seed=0)
    assert info["room"]["env_id"] == "Tiny-v0" and info["metrics"]["viewers_present"] == 3
    assert "Tinyglow Vitamin Serum" in info["messages"][0]["content"]
    env.close()


def test_register_spec_under_another_id(tiny):
    env_id = liveroom_sim.register_spec(tiny / "tiny-v0.yaml", env_id="MyTiny-v3")
    assert env_id == "MyTiny-v3"
    _, info = gym.make("MyTiny-v3").reset(seed=0)
    assert "Tiny Test Live" in info["messages"][0]["content"]


def test_register_spec_validates_now(tiny):
    edit(tiny / "catalog.yaml", "    price: 15.00\n", "")
    with pytest.raises(SpecError, match="catalog.yaml"):
        liveroom_sim.register_spec(tiny / "tiny-v0.yaml", env_id="BrokenTiny-v0")
    assert "BrokenTiny-v0" not in gym.registry


def test_unknown_env_id_is_gymnasiums_error():
    with pytest.raises(gym.error.Error):
        gym.make("LiveRoom-v9")


# ------------------------------------------------------------------ built-in data
@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0"])
def test_builtin_catalogs_are_large_and_varied(env_id):
    world = load_spec(ENVS_DIR / f"{env_id}.yaml")
    assert len(world.catalog.products) >= 30
    assert len({p.category for p in world.catalog.products}) >= 4
    assert world.catalog.orders and world.catalog.competitors


@pytest.mark.parametrize("env_id", ["LiveRoom-v0", "LiveRoom-zh-v0"])
def test_builtin_campaigns_use_every_event_type(env_id):
    world = load_spec(ENVS_DIR / f"{env_id}.yaml")
    every = {typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(typing.get_args(CampaignEvent)[0])}
    assert len(every) == 12
    assert {e.type for e in world.campaign.events} == every


def test_builtin_personas_cover_the_archetypes_in_both_languages():
    from liveroom_sim.world.personas import load_personas

    files = {p.stem for p in PERSONAS_DIR.glob("*.yaml")}
    personas = load_personas([PERSONAS_DIR])
    assert len(personas) >= 11 and ARCHETYPES <= files == set(personas)
    assert all(p.name == name for name, p in personas.items())
    assert all({"en", "zh"} <= set(p.phrasing) for p in personas.values())
    for env_id in ("LiveRoom-v0", "LiveRoom-zh-v0"):
        assert set(load_spec(ENVS_DIR / f"{env_id}.yaml").personas) == ARCHETYPES
