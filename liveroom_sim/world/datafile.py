"""Load YAML data files into frozen pydantic models, with errors users can act on.

A bad file fails with its path, the field (as a dotted path) and what was expected,
never with a bare pydantic or YAML traceback. Data files come from users, so reading one
cannot hurt: a file past :data:`MAX_FILE_BYTES`, nested deeper than :data:`MAX_DEPTH`, or
whose aliases expand past :data:`MAX_NODES` values (a "billion laughs" bomb) is refused
before it is built; text that is not UTF-8 is named by file and byte. YAML goes through
libyaml's C parser when PyYAML has it (about 10x faster than the pure-Python one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import pydantic
import yaml

from liveroom_sim.errors import SpecError

M = TypeVar("M", bound=pydantic.BaseModel)

MAX_FILE_BYTES = 4 * 2**20
"""The largest data file read (the built-in catalogs are about 24 KB)."""
MAX_DEPTH = 64
"""The deepest nesting of mappings and lists a data file may have."""
MAX_NODES = 1_000_000
"""The most values (scalars, lists, mappings) a data file may hold once its aliases are expanded."""

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Frozen(pydantic.BaseModel):
    """Base of every data model: immutable, unknown fields are errors (typos show), and
    no float may be infinite or NaN (``.inf`` would hang the room's clock; NaN compares
    false with everything, so a NaN threshold silently never applies)."""

    model_config = pydantic.ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


def replaced(model: M, update: dict[str, Any]) -> M:
    """``model.model_copy(update=update)`` (a shallow copy with ``update`` set), made
    without pydantic's generic copy, which a reset makes about a hundred of (the drawn
    world, an augmented harness): a third of the time. For :class:`Frozen` models (no
    extra fields, no private attributes), whose ``update`` holds valid field values."""
    cls = model.__class__
    new = cls.__new__(cls)
    _set(new, "__dict__", {**model.__dict__, **update})
    _set(new, "__pydantic_fields_set__", model.__pydantic_fields_set__ | update.keys())
    _set(new, "__pydantic_extra__", model.__pydantic_extra__)
    _set(new, "__pydantic_private__", model.__pydantic_private__)
    return new


_set = object.__setattr__  # (a frozen model's own __setattr__ refuses)


def known_names(values, allowed, what: str):
    """``values`` (names, or a mapping keyed by names) unchanged when every name is one of
    ``allowed``; else a ``ValueError`` naming the unknown ones, for field validators.

    >>> known_names({"tools": 1.0}, ("tools", "outcome"), "reward components")
    {'tools': 1.0}
    """
    unknown = sorted(set(values) - set(allowed))
    if unknown:
        raise ValueError(f"unknown {what} {unknown}; expected some of {list(allowed)}")
    return values


def read_text(path: Path | str) -> str:
    """The UTF-8 text of a data file, raising :class:`SpecError` naming the file when it
    cannot be read, is larger than :data:`MAX_FILE_BYTES` or is not UTF-8."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    if len(data) > MAX_FILE_BYTES:
        raise SpecError(path, [f"file is larger than {MAX_FILE_BYTES} bytes, the limit for a data file"])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SpecError(path, [f"not valid UTF-8: byte {exc.start} (line {line}) is {data[exc.start:exc.start + 1]!r}"]
                        ) from None


def parse_yaml(text: str, path: Path | str) -> Any:
    """Parse YAML ``text`` (from ``path``, named in errors) within the limits above."""
    try:
        _check_shape(text, path)
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise SpecError(path, [f"broken YAML{at}: {getattr(exc, 'problem', None) or exc}"]) from None


def read_yaml(path: Path | str) -> Any:
    """Parse one YAML file, raising :class:`SpecError` naming the file and the line."""
    return parse_yaml(read_text(path), path)


def _check_shape(text: str, path: Path | str) -> None:
    """Walk the parser's events (a flat stream, so no recursion however deep the file)
    and refuse deep nesting or an alias expansion past :data:`MAX_NODES` values, counting
    what each anchored value would expand to without building anything."""
    depth, nodes = 0, 0
    open_: list[tuple[str | None, int]] = []  # (anchor, node count when it opened)
    sizes: dict[str, int] = {}
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, yaml.AliasEvent):
            nodes += sizes.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor:
                sizes[event.anchor] = 1
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise SpecError(path, [f"nested more than {MAX_DEPTH} levels deep (at line {mark.line + 1})"])
            nodes += 1
            open_.append((event.anchor, nodes))
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
            anchor, start = open_.pop()
            if anchor:
                sizes[anchor] = nodes - start + 1
        if nodes > MAX_NODES:
            raise SpecError(path, [f"more than {MAX_NODES} values once its aliases (*name) are expanded; "
                                   "an alias bomb, or data too large for a LiveRoom file"])


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
