"""The naive avatar: generic hype, no lookups (the floor every policy should beat)."""

from __future__ import annotations

import zlib

from liveroom_sim.policies.host_lines import host_lines
from liveroom_sim.policies.reading import language_of


class NaiveAvatar:
    """A host who never looks anything up: generic, agreeable hype for whoever asked.

    Example:
        >>> NaiveAvatar()("", {"messages": [{"role": "user", "content": "hi"}], "room": {"language": "en"}})
        'Link is up, go go go!'
    """

    def __call__(self, observation: str, info: dict) -> str:
        lines = host_lines(language_of(info)).lines["naive"]
        last = info["messages"][-1].get("content") or ""
        return lines[zlib.crc32(last.encode("utf-8")) % len(lines)]
