"""Shared fixtures. Tests never touch the network beyond 127.0.0.1."""

from __future__ import annotations

import os

os.environ.setdefault("RAY_AUTH_MODE", "disabled")
