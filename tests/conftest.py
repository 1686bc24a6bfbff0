"""Shared fixtures. Tests never touch the network beyond 127.0.0.1."""

from __future__ import annotations

import os

os.environ.setdefault("RAY_AUTH_MODE", "disabled")

import pytest


@pytest.fixture(scope="session")
def ray_session():
    """One real local Ray instance for the whole test session (2 CPUs, no dashboard)."""
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
