"""Where the built-in data folders (``envs/``, ``personas/``) are.

In a wheel they are shipped inside the package as ``liveroom_sim/_data``; in a source
checkout or an editable install they are the top-level folders of the repository.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]  # liveroom_sim/


def data_root() -> Path:
    """Return the folder that holds ``envs/`` and ``personas/``."""
    shipped = _PACKAGE / "_data"
    if (shipped / "envs").is_dir():
        return shipped
    return _PACKAGE.parent


ENVS_DIR = data_root() / "envs"
PERSONAS_DIR = data_root() / "personas"
