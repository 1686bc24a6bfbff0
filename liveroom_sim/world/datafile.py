"""Load YAML data files into frozen pydantic models, with errors users can act on.

A bad file fails with its path, the field (as a dotted path) and what was expected,
never with a bare pydantic or YAML traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import pydantic
import yaml

from liveroom_sim.errors import SpecError

M = TypeVar("M", bound=pydantic.BaseModel)


class Frozen(pydantic.BaseModel):
    """Base of every data model: immutable, and unknown fields are errors (typos show)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid")


def read_yaml(path: Path) -> Any:
    """Parse one YAML file, raising :class:`SpecError` naming the file and the line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise SpecError(path, [f"broken YAML{at}: {getattr(exc, 'problem', exc)}"]) from None


def validate(model: type[M], data: Any, path: Path | str, prefix: str = "") -> M:
    """Validate ``data`` into ``model``; errors name ``path``, the field and the expectation."""
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise SpecError(path, [_describe(err, prefix) for err in exc.errors()]) from None


def load(model: type[M], path: Path | str) -> M:
    """Read and validate one YAML file into ``model``."""
    return validate(model, read_yaml(Path(path)), path)


def _describe(err: dict[str, Any], prefix: str) -> str:
    field = ".".join(str(p) for p in (prefix, *err["loc"]) if p != "")
    got = err.get("input")
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"field '{field or '(top level)'}': {err['msg']} (got {shown})"
