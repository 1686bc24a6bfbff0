"""JSON lines that UTF-8 can always hold, and the error of a rollout file.

A model may answer text with lone surrogates, which UTF-8 cannot encode; they are
written as ``\\udXXX`` escapes, which JSON reads back as the same code points.
"""

from __future__ import annotations

import json
import re

from liveroom_sim.errors import LiveRoomError

_SURROGATE = re.compile("[\ud800-\udfff]")


class RecordFileError(LiveRoomError, ValueError):
    """A rollout file that cannot be written or resumed as asked."""


def json_line(obj) -> str:
    """``obj`` as one JSON line that UTF-8 can always hold (lone surrogates escaped)."""
    text = json.dumps(obj, ensure_ascii=False, default=str)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) + "\n"


def encode(record: dict) -> str:
    """One JSON line for ``record``, always encodable as UTF-8: lone surrogates (which
    UTF-8 cannot hold) become ``\\udXXX`` escapes, which JSON reads back as the same
    code points, and their count is set as ``invalid_code_points``."""
    record.setdefault("invalid_code_points", 0)
    text = json.dumps(record, ensure_ascii=False, default=str)
    bad = len(_SURROGATE.findall(text))
    if bad:
        record["invalid_code_points"] = max(bad, record["invalid_code_points"])
        text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(record, ensure_ascii=False, default=str))
    return text + "\n"
