"""Load YAML data files into frozen pydantic models, with errors users can act on.

A bad file fails with its path, the field (as a dotted path) and what was expected,
never with a bare pydantic or YAML traceback. Data files come from users, so reading one
cannot hurt: a file past :data:`MAX_FILE_BYTES`, nested deeper than :data:`MAX_DEPTH`, or
whose aliases expand past :data:`MAX_NODES` values (a "billion laughs" bomb) is refused
before it is built; text that is not UTF-8 is named by file and byte; only regular files
are read (a FIFO would block the loader forever); an integer of more than
:data:`MAX_DIGITS` digits is refused naming its field. Numbers that count or price
something are bounded (:data:`Amount` and friends), so no arithmetic on them overflows.
A file that is not LiveRoom data at all (a path pointing at the wrong file) is named,
never echoed: errors quote field names and values only from files that are LiveRoom data.
YAML goes through libyaml's C parser when PyYAML has it (about 10x faster than the
pure-Python one).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Annotated, Any, TypeVar

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
MAX_DIGITS = 64
"""The most digits an integer in a data file may have (Python refuses to read past 4,300)."""
MAX_AMOUNT = 1_000_000_000
"""The largest price, stock, quantity or size a data file may give: far past any real room,
small enough that sums and float conversions stay exact and finite (a 4,000-digit stock
once loaded, and then every episode failed with an OverflowError)."""

Amount = Annotated[float, pydantic.Field(ge=0, le=MAX_AMOUNT)]
PositiveAmount = Annotated[float, pydantic.Field(gt=0, le=MAX_AMOUNT)]
Count = Annotated[int, pydantic.Field(ge=0, le=MAX_AMOUNT)]
PositiveCount = Annotated[int, pydantic.Field(gt=0, le=MAX_AMOUNT)]

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
        # Opened without blocking, then checked: opening a FIFO for reading would wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise SpecError(path, [f"cannot read file: {exc.strerror or exc}"]) from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            what = "a folder" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode) else "a device or socket"
            raise SpecError(path, [f"not a regular file ({what}); a data file must be a file"])
        try:
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
    except SpecError:
        raise
    except ValueError as exc:  # a number Python will not read (past 4,300 digits in another notation)
        raise SpecError(path, [f"a number too large to read ({str(exc).split(';')[0]})"]) from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where else ""
        raise SpecError(path, [f"broken YAML{at}: {getattr(exc, 'problem', None) or exc}"]) from None


def read_yaml(path: Path | str) -> Any:
    """Parse one YAML file, raising :class:`SpecError` naming the file and the line."""
    return parse_yaml(read_text(path), path)


def _check_shape(text: str, path: Path | str) -> None:
    """Walk the parser's events (a flat stream, so no recursion however deep the file)
    and refuse deep nesting, an alias expansion past :data:`MAX_NODES` values (counting
    what each anchored value would expand to without building anything) and a key said
    twice in one mapping (YAML keeps the last silently: a concept list written twice lost
    its first half)."""
    depth, nodes = 0, 0
    open_: list[tuple[str | None, int]] = []  # (anchor, node count when it opened)
    sizes: dict[str, int] = {}
    keys: list[list] = []  # per open collection: [the keys of a mapping (None: a sequence), whether a key is next]
    for event in yaml.parse(text, Loader=_Loader):
        if keys and keys[-1][0] is not None and isinstance(event, _NODES):
            seen, key_next = keys[-1]
            if key_next and isinstance(event, yaml.ScalarEvent) and event.value != "<<":
                if event.value in seen:
                    raise SpecError(path, [f"key {event.value!r} said twice in one mapping (again at line "
                                           f"{event.start_mark.line + 1}): YAML would keep only the last"])
                seen.add(event.value)
            keys[-1][1] = not key_next
        if isinstance(event, yaml.AliasEvent):
            nodes += sizes.get(event.anchor, 1)
        elif isinstance(event, yaml.ScalarEvent):
            nodes += 1
            if event.anchor:
                sizes[event.anchor] = 1
            if len(event.value) > MAX_DIGITS and not event.style and _INTEGER.fullmatch(event.value):
                raise SpecError(path, [f"field '{_field_at(text, event.start_mark)}': an integer of "
                                       f"{len(event.value.lstrip('+-'))} digits; the most a LiveRoom file takes is "
                                       f"{MAX_DIGITS} (and counts and prices at most {MAX_AMOUNT:,})"])
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                mark = event.start_mark
                raise SpecError(path, [f"nested more than {MAX_DEPTH} levels deep (at line {mark.line + 1})"])
            nodes += 1
            open_.append((event.anchor, nodes))
            keys.append([set() if isinstance(event, yaml.MappingStartEvent) else None, True])
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1
            keys.pop()
            anchor, start = open_.pop()
            if anchor:
                sizes[anchor] = nodes - start + 1
        if nodes > MAX_NODES:
            raise SpecError(path, [f"more than {MAX_NODES} values once its aliases (*name) are expanded; "
                                   "an alias bomb, or data too large for a LiveRoom file"])


_INTEGER = re.compile(r"[-+]?[0-9][0-9_]*")
#: The events that start a node (a value, or a key of a mapping).
_NODES = (yaml.ScalarEvent, yaml.AliasEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)


def _field_at(text: str, mark) -> str:
    """The dotted field path of the value that starts at ``mark`` (walked again only when
    a value is refused, so reading a good file costs nothing more)."""
    frames: list[list] = []  # [is a mapping, the current key or index, a key comes next]
    for event in yaml.parse(text, Loader=_Loader):
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            frames.pop()
            continue
        if not isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent, yaml.MappingStartEvent,
                                  yaml.SequenceStartEvent)):
            continue
        if frames and frames[-1][0] and frames[-1][2]:  # a mapping's key
            frames[-1][1], frames[-1][2] = getattr(event, "value", "?"), False
            if isinstance(event, yaml.ScalarEvent):
                continue
        elif frames and frames[-1][0]:  # a mapping's value: its next node is a key
            frames[-1][2] = True
        elif frames:
            frames[-1][1] += 1
        if event.start_mark.index == mark.index:
            return ".".join(str(f[1]) for f in frames) or "(top level)"
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            frames.append([isinstance(event, yaml.MappingStartEvent), -1, True])
    return "(unknown)"


def foreign(data: Any, fields, path: Path | str, what: str = "LiveRoom data") -> None:
    """Raise :class:`SpecError` when ``data`` (a file's top level) is not a mapping, or
    is one that holds none of ``fields``: the path then names the wrong file (a password
    file, a log), and its content, lines or keys, must not be echoed in the error."""
    if isinstance(data, dict) and (not data or set(map(str, data)) & set(fields)):
        return
    if isinstance(data, dict):
        got = f"a mapping of {len(data)} keys, none of them a field of {what}"
    else:
        got = {str: "text", list: "a list", type(None): "nothing (an empty file)"}.get(type(data), "a single value")
    raise SpecError(path, [f"not {what}: expected a mapping of its fields ({', '.join(sorted(fields)[:8])}"
                           f"{', ...' if len(fields) > 8 else ''}), got {got} (is the path right?)"])


def validate(model: type[M], data: Any, path: Path | str, prefix: str = "") -> M:
    """Validate ``data`` into ``model``; errors name ``path``, the field and the expectation
    (a file that is not this kind of data at all is named, its content never echoed)."""
    if not prefix:
        kind = re.sub(r"(?<!^)(?=[A-Z])", " ", model.__name__).lower()
        foreign(data, model.model_fields, path, f"a {kind}" if kind.endswith(" file") else f"a {kind} file")
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
    if err["type"] == "extra_forbidden":  # a stray key's value says nothing about what to fix
        return f"field '{field or '(top level)'}': {err['msg']}"
    shown = repr(got) if not isinstance(got, (dict, list)) else type(got).__name__
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return f"field '{field or '(top level)'}': {err['msg']} (got {shown})"
