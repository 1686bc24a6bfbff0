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


def resolved(path: Path | str) -> Path:
    """``path`` made absolute with its symbolic links followed.

    Raises:
        SpecError: A symbolic link loop (``a -> b -> a``) on the way, named by ``path``
            (``Path.resolve`` raises a bare ``RuntimeError`` or ``OSError`` there).
    """
    try:
        return Path(path).resolve()
    except (RuntimeError, OSError) as exc:
        from liveroom_sim.errors import SpecError

        raise SpecError(path, [f"cannot follow its path: a symbolic link loop ({type(exc).__name__}: {exc})"]) from None
