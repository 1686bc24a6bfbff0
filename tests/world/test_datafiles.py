"""Hostile data files: bombs, deep nesting, bad bytes, infinite or absurd rates, missing
folders. Each fails fast with a SpecError naming the file, never a traceback or a hang."""

from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import pytest

from liveroom_sim.errors import SpecError
from liveroom_sim.spec import load_spec, spec_files
from liveroom_sim.world import datafile
from liveroom_sim.world.paths import ENVS_DIR

TINY_DIR = Path(__file__).parents[1] / "fixtures" / "tiny"


@pytest.fixture
def tiny(tiny_dir) -> Path:
    return tiny_dir


def _error(path) -> str:
    started = time.perf_counter()
    with pytest.raises(SpecError) as err:
        load_spec(path)
    assert time.perf_counter() - started < 20  # refused, not built
    return str(err.value)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_the_c_loader_is_used_where_pyyaml_has_it():
    import yaml

    if yaml.__with_libyaml__:
        assert datafile._Loader is yaml.CSafeLoader


def test_an_alias_bomb_in_an_extending_spec_is_refused_naming_the_file(tiny):
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    bomb = tiny / "bomb-v0.yaml"
    bomb.write_text("extends: tiny-v0.yaml\nid: Bomb-v0\nlol:\n" + "\n".join("  " + line for line in lines) + "\n")
    assert bomb.stat().st_size < 2000
    message = _error(bomb)
    assert str(bomb) in message and "aliases" in message


def test_deep_nesting_is_refused_without_a_recursion_error(tiny):
    deep = tiny / "deep-v0.yaml"
    deep.write_text("extends: tiny-v0.yaml\ndescription: " + "[" * 20_000 + "]" * 20_000 + "\n")
    message = _error(deep)
    assert str(deep) in message and "nest" in message
    shallow = tiny / "shallow-v0.yaml"  # past MAX_DEPTH but within libyaml's own limit
    shallow.write_text("extends: tiny-v0.yaml\ndescription: " + "[" * 100 + "]" * 100 + "\n")
    assert "nested more than 64" in _error(shallow)


def test_a_key_said_twice_is_refused_naming_the_key_and_its_line(tiny):
    # YAML keeps the last of two equal keys without a word: a concept list written twice in
    # one file silently lost its first half (zh.yaml's backend, until this check).
    catalog = tiny / "catalog.yaml"
    catalog.write_text(catalog.read_text().replace("currency:", "currency: XXX\ncurrency:", 1))
    message = _error(tiny / "tiny-v0.yaml")
    assert str(catalog) in message and "'currency' said twice" in message and "line" in message
    # equal values in a list, and a merge key beside the keys it brings, are no repeat
    assert datafile.parse_yaml("a: [1, 1]\nb: &x {p: 1}\nc:\n  <<: *x\n  q: 2\n", "f.yaml")["c"] == {"p": 1, "q": 2}


def test_invalid_utf8_is_named_by_file_and_byte(tiny):
    catalog = tiny / "catalog.yaml"
    catalog.write_bytes(catalog.read_bytes().replace(b"currency", b"curr\xffency", 1))
    message = _error(tiny / "tiny-v0.yaml")
    assert str(catalog) in message and "not valid UTF-8" in message and "line" in message


def test_an_oversized_file_is_refused_before_it_is_parsed(tiny):
    big = tiny / "big-v0.yaml"
    big.write_text("extends: tiny-v0.yaml\nlist:\n" + "- 1\n" * (datafile.MAX_FILE_BYTES // 4 + 1))
    message = _error(big)
    assert str(big) in message and "larger than" in message


@pytest.mark.parametrize("old,new,field", [
    ("arrivals_per_min: 3", "arrivals_per_min: .inf", "viewers.arrivals_per_min"),
    ("arrivals_per_min: 3", "arrivals_per_min: 1e9", "viewers.arrivals_per_min"),
    ("reply_per_char_s: 0.01", "reply_per_char_s: .inf", "latency.reply_per_char_s"),
    ("compliance_gate: -1.0", "compliance_gate: .nan", "reward.compliance_gate"),
    ("factuality: 1.0", "factuality: .inf", "reward.weights.factuality"),
    ("duration_s: 120", "duration_s: .inf", "stream.duration_s"),
])
def test_infinite_nan_and_absurd_spec_numbers_are_rejected_at_load(tiny, old, new, field):
    spec = tiny / "tiny-v0.yaml"
    _edit(spec, old, new)
    message = _error(spec)
    assert str(spec) in message and f"field '{field}'" in message


@pytest.mark.parametrize("value", [".inf", "1e9", ".nan", "-1"])
def test_a_persona_chat_rate_must_be_finite_and_in_range(tiny, value):
    persona = tiny / "personas" / "eager_shopper.yaml"
    text = persona.read_text()
    start = text.index("chat_rate_per_min:")
    end = text.index("\n", start)
    persona.write_text(text[:start] + f"chat_rate_per_min: {value}" + text[end:])
    message = _error(tiny / "tiny-v0.yaml")
    assert str(persona) in message and "field 'chat_rate_per_min'" in message


def test_an_infinite_price_in_a_campaign_is_rejected(tiny):
    campaign = tiny / "campaign.yaml"
    text = campaign.read_text()
    start = text.index("price:")
    end = text.index("\n", start)
    campaign.write_text(text[:start] + "price: .inf" + text[end:])
    assert str(campaign) in _error(tiny / "tiny-v0.yaml")


def test_a_missing_persona_folder_is_an_error(tiny):
    spec = tiny / "tiny-v0.yaml"
    _edit(spec, "persona_dirs: [personas]", "persona_dirs: [personas, no_such_folder]")
    message = _error(spec)
    assert str(spec) in message and "persona_dirs" in message and "no_such_folder" in message


def test_a_spec_identity_comes_from_the_files_it_names_not_its_folder(tiny):
    junk = tiny / "venv" / "lib"
    junk.mkdir(parents=True)
    (junk / "unrelated.yaml").write_text("x: 1\n")
    names = [f.name for f in spec_files(tiny / "tiny-v0.yaml", folders=True)]
    assert "unrelated.yaml" not in names
    assert {"tiny-v0.yaml", "catalog.yaml", "campaign.yaml", "eager_shopper.yaml", "harness.yaml"} <= set(names)


def test_editing_a_named_file_gives_a_new_world(tiny):
    spec = tiny / "tiny-v0.yaml"
    first = load_spec(spec)
    time.sleep(0.01)
    _edit(tiny / "catalog.yaml", "currency: USD", "currency: CNY")
    assert load_spec(spec).catalog.currency != first.catalog.currency


def test_the_built_in_specs_still_load():
    for spec in sorted(ENVS_DIR.glob("*.yaml")):
        assert load_spec(spec).spec.id
    env = gym.make("LiveRoom-v0")
    env.reset(seed=0)


# ------------------------------------------------------------------ numbers with bounds
@pytest.mark.parametrize("old, new, field", [
    ("    stock: 6\n", "    stock: " + "9" * 4000 + "\n", "products.0.stock"),
    ("    price: 20.00\n", "    price: 1e300\n", "products.0.skincare.price"),
    ("    volume_ml: 30\n", "    volume_ml: 123456789012345678901234567890\n", "products.0.skincare.volume_ml"),
])
def test_absurd_catalog_numbers_are_refused_at_load_naming_file_and_field(tiny, old, new, field):
    _edit(tiny / "catalog.yaml", old, new)
    message = _error(tiny / "tiny-v0.yaml")
    assert "catalog.yaml" in message and f"field '{field}'" in message
    assert "9" * 100 not in message  # the number is not echoed in full


def test_a_5000_digit_integer_is_a_spec_error_naming_file_and_field(tiny):
    _edit(tiny / "catalog.yaml", "    stock: 6\n", "    stock: " + "7" * 5000 + "\n")
    message = _error(tiny / "tiny-v0.yaml")
    assert "catalog.yaml" in message and "field 'products.0.stock'" in message and "5000 digits" in message


def test_a_campaign_quantity_and_a_world_range_have_bounds(tiny):
    _edit(tiny / "tiny-v0.yaml", "stream:\n", "world:\n  stock: [1, 1e30]\nstream:\n")
    assert "field 'world.stock" in _error(tiny / "tiny-v0.yaml")


# ------------------------------------------------------------------ files stay in their lane
SECRET = "root:$6$s3cr3tHash0123456789:19000:0:99999:7:::\nadmin_password: hunter2-very-secret\n"


@pytest.mark.parametrize("field", ["catalog", "extends"])
def test_a_file_that_is_not_liveroom_data_is_never_echoed(tiny, field):
    secret = tiny / "shadow"
    secret.write_text(SECRET)
    spec = tiny / "tiny-v0.yaml"
    if field == "extends":
        spec.write_text(f"extends: {secret}\n" + spec.read_text())
    else:
        _edit(spec, "catalog: catalog.yaml", f"catalog: {secret}")
    message = _error(spec)
    assert str(secret) in message
    for piece in ("root", "s3cr3t", "19000", "admin_password", "hunter2"):
        assert piece not in message.replace(str(secret), ""), message


def test_a_fifo_named_as_a_catalog_is_refused_not_read(tiny):
    import os
    import threading

    fifo = tiny / "catalog.fifo"
    os.mkfifo(fifo)
    _edit(tiny / "tiny-v0.yaml", "catalog: catalog.yaml", "catalog: catalog.fifo")
    found = []
    reader = threading.Thread(target=lambda: found.append(_error(tiny / "tiny-v0.yaml")), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive(), "the loader hangs on a FIFO"
    assert "catalog.fifo" in found[0] and "not a regular file" in found[0]


def test_a_symlink_loop_is_a_spec_error(tiny):
    import liveroom_sim

    loop_a, loop_b = tiny / "a-v0.yaml", tiny / "b-v0.yaml"
    loop_a.symlink_to(loop_b)
    loop_b.symlink_to(loop_a)
    with pytest.raises(SpecError, match="a-v0.yaml"):
        liveroom_sim.register_spec(loop_a)
    _edit(tiny / "tiny-v0.yaml", "catalog: catalog.yaml", "catalog: a-v0.yaml")
    assert "a-v0.yaml" in _error(tiny / "tiny-v0.yaml")
    spec = tiny / "ext-v0.yaml"
    spec.write_text("extends: a-v0.yaml\nid: Ext-v0\n")
    assert "a-v0.yaml" in _error(spec)


def test_a_missing_phrasebook_is_named_as_missing(tiny):
    _edit(tiny / "tiny-v0.yaml", "phrasebook: ../../../envs/phrasebook/en.yaml".replace("../../../envs", str(ENVS_DIR)),
          "phrasebook: nowhere/fr.yaml")
    message = _error(tiny / "tiny-v0.yaml")
    assert f"invalid data file {tiny / 'tiny-v0.yaml'}" in message  # the spec that names it
    assert "field 'phrasebook': no file 'nowhere/fr.yaml'" in message and str(tiny / "nowhere" / "fr.yaml") in message
