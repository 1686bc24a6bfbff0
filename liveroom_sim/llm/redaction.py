"""Keeping credentials out of what LiveRoom prints and writes: API keys, user info and
query values of base URLs, and keys some gateways put in a URL's path.

    >>> safe_url("http://me:pw@host:8000/sk-abcdef0123456789/v1?api_key=abc")
    'http://***@host:8000/***/v1?api_key=***'
"""

from __future__ import annotations

import contextlib
import os
import re
import urllib.parse


def redact(text: str, endpoint=None) -> str:  # endpoint: an llm.client.Endpoint
    """``text`` with any API key in use, and any credential given inside a base URL
    (user info, query values), replaced by ``***``."""
    keys = {os.environ.get("OPENAI_API_KEY")}
    urls = [os.environ.get("OPENAI_BASE_URL")]
    if endpoint is not None:
        keys.add(endpoint.api_key)
        urls.append(endpoint.base_url)
    for url in urls:
        keys.update(url_secrets(url))
    for key in sorted((k for k in keys if k and len(k) >= 6), key=len, reverse=True):
        text = text.replace(key, "***")
    return text


def url_secrets(url: str | None) -> set[str]:
    """The credentials a URL carries: its user info and its query values."""
    if not url:
        return set()
    with contextlib.suppress(ValueError):
        parts = urllib.parse.urlsplit(url)
        found = {parts.username, parts.password, *(v for _, v in urllib.parse.parse_qsl(parts.query))}
        if parts.netloc.count("@"):
            found.add(parts.netloc.rsplit("@", 1)[0])
        return {s for s in found if s}
    return set()


_SECRET_NAME = re.compile(r"key|token|secret|sig|password|auth", re.IGNORECASE)
_SECRET_LOOKING = re.compile(r"(?:sk|pk|rk|key|tok)[-_][\w-]{8,}|(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{20,}")


def mask_path(path: str) -> str:
    """A URL path with the keys some gateways put in it replaced by ``***``: a segment
    that looks like a key (``sk-...``, or 20+ characters mixing letters and digits), the
    segment after one named like a key (``/key/VALUE``), and ``name=VALUE`` values.

    >>> mask_path("/sk-abcdef0123456789/v1")
    '/***/v1'
    >>> mask_path("/openai/deployments/gpt-4o-mini/v1")
    '/openai/deployments/gpt-4o-mini/v1'
    """
    out, after_name = [], False
    for segment in path.split("/"):
        name, eq, _ = segment.partition("=")
        if eq and _SECRET_NAME.search(name):
            segment = f"{name}=***"
        elif segment and (after_name or _SECRET_LOOKING.fullmatch(segment)):
            segment = "***"
        after_name = bool(segment) and not eq and _SECRET_NAME.fullmatch(segment.replace("-", "").replace("_", "")
                                                                          .lower().removeprefix("api")) is not None
        out.append(segment)
    return "/".join(out)


def safe_url(url: str | None) -> str | None:
    """``url`` without user info, with every query value and any key in its path
    (:func:`mask_path`) replaced by ``***`` (for records and logs)."""
    if not url:
        return url
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "***"
    netloc = parts.netloc.rsplit("@", 1)[-1]
    if parts.netloc.count("@"):
        netloc = "***@" + netloc
    query = "&".join(f"{k}=***" for k, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))
    return urllib.parse.urlunsplit((parts.scheme, netloc, mask_path(parts.path), query, parts.fragment))


_URL = re.compile(r"\w+://[^\s'\"<>]+")


def scrub(text: str, endpoint=None) -> str:
    """:func:`redact`, and every URL in ``text`` made :func:`safe_url` (user info, query
    values and keys in its path masked; for error messages, not for model text)."""
    return _URL.sub(lambda m: safe_url(m.group()) or "", redact(text, endpoint))
