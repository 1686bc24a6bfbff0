"""A policy of the user's own, named by import path: ``package.module:factory`` or
``path/to/file.py:factory`` (``--policy`` of ``eval``, ``rollout``, ``demo`` and
``export-sft``).

The factory is called once per episode (per case, in ``liveroom eval``), with
``seed=`` when its signature takes a ``seed`` (a group's samples then differ), and
returns the policy: a callable ``(observation, info) -> action`` (an ``acall`` coroutine
method of the same signature is awaited where episodes run on asyncio). A module named by
its file is loaded once per process under a name derived from its path, so Ray workers on
the same machine load the same file.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path

_EXAMPLE = "expected package.module:factory or path/to/file.py:factory"


def is_import_path(text: str) -> bool:
    """Whether ``text`` names a factory (``MODULE:NAME`` or ``FILE.py:NAME``) rather than a
    built-in policy or a checkpoint path."""
    module, sep, name = text.rpartition(":")
    return bool(sep and module and name) and not Path(text).exists()


def load_factory(text: str):
    """The factory ``text`` names.

    Raises:
        ValueError: naming what is wrong: the form, a module or file that does not import
            (with its error), a missing attribute, or one that is not callable.
    """
    module_name, sep, name = text.rpartition(":")
    if not sep or not module_name or not name.isidentifier():
        raise ValueError(f"--policy {text!r}: {_EXAMPLE}")
    if module_name.endswith(".py") or "/" in module_name or "\\" in module_name:
        module = _from_file(Path(module_name).expanduser(), text)
    else:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            raise ValueError(f"--policy {text!r}: no module {exc.name!r} to import ({_EXAMPLE}; is the "
                             "package installed, or on PYTHONPATH?)") from None
        except Exception as exc:  # noqa: BLE001 - the user's module failed while importing
            raise ValueError(f"--policy {text!r}: importing {module_name} failed: {type(exc).__name__}: {exc}") from None
    factory = getattr(module, name, None)
    if factory is None:
        found = [n for n in dir(module) if not n.startswith("_") and callable(getattr(module, n))]
        from liveroom_sim.errors import did_you_mean

        raise ValueError(f"--policy {text!r}: {module_name} has no {name!r}{did_you_mean(name, found)}")
    if not callable(factory):
        raise ValueError(f"--policy {text!r}: {module_name}.{name} is a {type(factory).__name__}, not a callable "
                         "that makes a policy")
    return factory


def _from_file(path: Path, text: str):
    if not path.is_file():
        raise ValueError(f"--policy {text!r}: the file {str(path)!r} does not exist")
    resolved = path.resolve()
    key = "liveroom_user_policy_" + hashlib.sha1(str(resolved).encode()).hexdigest()[:12]
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, resolved)
    if spec is None or spec.loader is None:
        raise ValueError(f"--policy {text!r}: {str(path)!r} is not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the user's file failed while running
        del sys.modules[key]
        raise ValueError(f"--policy {text!r}: running {str(path)!r} failed: {type(exc).__name__}: {exc}") from None
    return module


def build_policy(text: str, seed: int):
    """A policy from the factory ``text`` names, for one episode.

    Raises:
        ValueError: the factory does not load, fails, or returns no callable policy.
    """
    factory = load_factory(text)
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    takes_seed = "seed" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    try:
        policy = factory(seed=seed) if takes_seed else factory()
    except Exception as exc:  # noqa: BLE001 - the user's factory failed
        raise ValueError(f"--policy {text!r}: the factory failed: {type(exc).__name__}: {exc}") from None
    if not callable(policy):
        raise ValueError(f"--policy {text!r}: the factory returned a {type(policy).__name__}, not a policy "
                         "(a callable (observation, info) -> action)")
    return policy
