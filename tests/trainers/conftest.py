"""Fixtures for the tests that run the real trainers (``pytest -m trainers``; ``.[trainers]``)."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

DOCS = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory) -> Path:
    """A folder holding the tiny tokenizer and 2-layer model (built once per session)."""
    pytest.importorskip("transformers")
    pytest.importorskip("trl")
    import tiny_models

    return tiny_models.build(tmp_path_factory.mktemp("tiny-model"))


def docs_block(marker: str) -> str:
    """The fenced code block that follows ``<!-- marker -->`` in docs/integrations.md."""
    text = DOCS.read_text(encoding="utf-8")
    match = re.search(rf"<!-- {re.escape(marker)} -->\s*```\w*\n(.*?)```", text, re.S)
    assert match, f"docs/integrations.md has no block marked <!-- {marker} -->"
    return match.group(1)


def launch_overrides(block: str) -> list[str]:
    """The ``key=value`` overrides of the ``verl.trainer.main_ppo`` command in a bash block."""
    words = shlex.split(block.replace("\\\n", " "), comments=True)
    start = words.index("verl.trainer.main_ppo") + 1
    return [w for w in words[start:] if "=" in w]
