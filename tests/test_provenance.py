"""Provenance: results name the version, the spec's content and the reward configuration."""

from __future__ import annotations

import shutil

from liveroom_sim.provenance import provenance
from liveroom_sim.spec import load_spec


def test_same_content_in_another_folder_has_the_same_digests(tiny_dir, tmp_path):
    first = provenance(load_spec(tiny_dir / "tiny-v0.yaml"))
    copy = shutil.copytree(tiny_dir, tmp_path / "elsewhere")
    assert provenance(load_spec(copy / "tiny-v0.yaml")) == first


def test_an_edited_catalog_changes_the_spec_digest_not_the_reward_digest(tiny_dir):
    before = provenance(load_spec(tiny_dir / "tiny-v0.yaml"))
    catalog = tiny_dir / "catalog.yaml"
    catalog.write_text(catalog.read_text() + "\n# restocked\n")
    after = provenance(load_spec(tiny_dir / "tiny-v0.yaml"))
    assert after["spec_digest"] != before["spec_digest"]
    assert after["reward_digest"] == before["reward_digest"]
    assert after["spec_id"] == before["spec_id"] == "Tiny-v0"


def test_a_reward_weight_changes_both_digests(tiny_dir):
    spec = tiny_dir / "tiny-v0.yaml"
    before = provenance(load_spec(spec))
    spec.write_text(spec.read_text().replace("factuality: 1.0,", "factuality: 2.0,"))
    after = provenance(load_spec(spec))
    assert after["reward_digest"] != before["reward_digest"]
    assert after["spec_digest"] != before["spec_digest"]


def test_suite_version_is_named_when_given(tiny_dir):
    out = provenance(load_spec(tiny_dir / "tiny-v0.yaml"), suite_version="2")
    assert out["suite_version"] == "2" and out["liveroom_version"]
