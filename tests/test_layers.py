"""The package's layers hold: the import contracts in pyproject.toml, a top level of few
modules, and a docstring for each layer. Where a module ends is the concept's call, not a
line count (STYLE.md): a concept that outgrows a file becomes a folder, as ``sim/chat/``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "liveroom_sim"


def test_import_contracts_hold():
    # lint-imports reads [tool.importlinter] from pyproject.toml at the repository root.
    lint = Path(sys.executable).with_name("lint-imports")
    if not lint.exists():
        pytest.fail("import-linter is not installed: pip install -e '.[test]'")
    result = subprocess.run([str(lint), "--no-cache"], cwd=PACKAGE.parent, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def test_top_level_holds_few_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= 8, top


def test_each_layer_says_what_it_is():
    for init in PACKAGE.glob("*/__init__.py"):
        text = init.read_text(encoding="utf-8")
        assert text.startswith('"""') and len(text.split('"""')[1].strip()) > 40, init
