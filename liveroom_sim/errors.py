"""Typed errors of LiveRoom, in one place.

Every error a user can trigger names what went wrong in their words: the file and the
field for bad data, the known names (with a "did you mean" suggestion) for bad lookups.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class LiveRoomError(Exception):
    """Base class of every error LiveRoom raises on purpose."""


class SpecError(LiveRoomError, ValueError):
    """A data file (env spec, catalog, persona, campaign, harness) is invalid.

    Attributes:
        path: The file that failed.
        problems: One line per problem: the field and what was expected.
    """

    def __init__(self, path: object, problems: Iterable[str]):
        self.path = str(path)
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid data file {self.path}:\n{lines}")


class UnknownNameError(LiveRoomError, KeyError):
    """A lookup by name (env id, product, persona, tool, policy) found nothing."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        self.kind, self.name, self.known = kind, name, sorted(known)
        hint = did_you_mean(name, self.known)
        super().__init__(f"unknown {kind} {name!r}{hint}; known: {', '.join(self.known) or '(none)'}")

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return ``" (did you mean 'x'?)"`` for the closest known name, or ``""``."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
