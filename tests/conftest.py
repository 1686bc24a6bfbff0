"""Shared fixtures. Tests never touch the network beyond 127.0.0.1."""

from __future__ import annotations

import os

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import shutil
from pathlib import Path

import pytest

TINY_DIR = Path(__file__).resolve().parent / "fixtures" / "tiny"


@pytest.fixture
def tiny_dir(tmp_path) -> Path:
    """A private copy of the tiny spec's folder (built-in files named by absolute path),
    for tests that edit its files."""
    from liveroom_sim.world.paths import ENVS_DIR

    here = tmp_path / "tiny"
    shutil.copytree(TINY_DIR, here)
    spec = here / "tiny-v0.yaml"
    spec.write_text(spec.read_text().replace("../../../envs", str(ENVS_DIR)))
    return here


@pytest.fixture(scope="session")
def ray_session():
    """One real local Ray instance for the whole test session (2 CPUs, no dashboard)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
