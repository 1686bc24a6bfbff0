"""What every command shares: the parser's behaviour, option types, policies and endpoints.

Every error a user can cause ends in one line on stderr, ``liveroom CMD: error: ...``, and
a non-zero exit: 2 for bad options or files, 1 when an endpoint is unreachable, wrong or
keeps failing (with the URL, credentials removed, and the cause), 3 when a run went through
but every episode of it failed (with the first error).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import gymnasium as gym

from liveroom_sim import resolve_env_id

EXIT_ENDPOINT = 1
EXIT_USAGE = 2
EXIT_RUN_FAILED = 3


class Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default in ``--help``, except where there is none to show."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False, argparse.SUPPRESS) or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


class Parser(argparse.ArgumentParser):
    """An argparse parser whose errors are one line (argparse prints the whole usage first,
    which for ``rollout`` is a screenful and hides the message)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        print(f"{self.prog}: error: {message} (see {self.prog} --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


class DeprecatedAlias(argparse.Action):
    """An old option name kept working: stores like the new one and says which to use."""

    def __call__(self, parser, namespace, values, option_string=None):
        new = "--" + self.dest.replace("_", "-")
        print(f"{parser.prog}: warning: {option_string} is deprecated; use {new}", file=sys.stderr)
        setattr(namespace, self.dest, values)


def fail(command: str, message: str, code: int = EXIT_USAGE) -> int:
    """Print ``liveroom COMMAND: error: MESSAGE`` on stderr, on one line (a data file's
    problems, one a line in :class:`~liveroom_sim.errors.SpecError`, are joined with
    ``;``); returns ``code``."""
    first, *rest = str(message).splitlines() or [""]
    problems = [line.strip().removeprefix("- ") for line in rest if line.strip()]
    print(f"liveroom {command}: error: {' '.join([first, '; '.join(problems)]).strip()}", file=sys.stderr)
    return code


def int_at_least(low: int):
    """An argparse type: an integer ``>= low``, else a one-line error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return value

    parse.__name__ = f"integer >= {low}"
    return parse


def float_in(low: float | None = None, high: float | None = None, *, open_low: bool = False):
    """An argparse type: a finite number within ``[low, high]`` (``(low, high]`` with
    ``open_low``), else a one-line error."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        below = low is not None and (value <= low if open_low else value < low)
        if value != value or value in (float("inf"), float("-inf")) or below or (high is not None and value > high):
            bounds = [f"> {low:g}" if open_low else f">= {low:g}"] if low is not None else []
            bounds += [f"<= {high:g}"] if high is not None else []
            raise argparse.ArgumentTypeError(f"expected a number {' and '.join(bounds) or 'that is finite'}, got {text!r}")
        return value

    parse.__name__ = "number"
    return parse


def llm_options(p: argparse.ArgumentParser) -> None:
    """The openai-client options every LLM-capable command takes."""
    p.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)")
    p.add_argument("--model", default=None, help="model name at the endpoint (default: none; openai policies need one)")
    p.add_argument("--temperature", type=float_in(0.0, 2.0), default=None, help="sampling temperature (default: the server's)")
    p.add_argument("--max-tokens", type=int_at_least(1), default=None, help="completion token limit per call (default: the server's)")


def redact_url(url: str | None) -> str:
    """``url`` without user, password, key-like query values or a key in its path (safe to print).

    >>> redact_url("http://me:s3cret@host:8000/v1?api_key=abc&x=1")
    'http://host:8000/v1?api_key=***&x=1'
    """
    from liveroom_sim.llm.client import mask_path

    if not url:
        return "(no URL: set --base-url or $OPENAI_BASE_URL)"
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    query = [(k, "***" if any(s in k.lower() for s in ("key", "token", "secret", "sig")) else v)
             for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    return urlunsplit((parts.scheme, netloc, mask_path(parts.path), urlencode(query, safe="*"), ""))


def endpoint_url(args) -> str:
    """The endpoint a command's LLM options name, redacted (``--base-url``, else the
    variable, else the openai client's default)."""
    return redact_url(args.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")


def uses_endpoint(args) -> bool:
    return getattr(args, "policy", None) == "openai" or (getattr(args, "policy", None) is None
                                                          and bool(args.base_url or args.model))


def policy_spec(args, name: str | None = None):
    """A :class:`~liveroom_sim.rollout.policy_spec.PolicySpec` from ``--policy`` and the LLM
    options: ``scripted``, ``naive``, ``openai`` or a checkpoint path (file or run folder).
    ``--base-url``/``--model`` alone imply ``openai``."""
    from liveroom_sim.rollout.policy_spec import PolicySpec

    name = name if name is not None else getattr(args, "policy", None)
    if name is None:
        name = "openai" if (args.base_url or args.model) else "scripted"
    return PolicySpec.parse(name, model=args.model, base_url=args.base_url, temperature=args.temperature,
                            max_tokens=args.max_tokens)


def check_endpoint(args, timeout_s: float = 5.0) -> str | None:
    """Ask the endpoint for its models before a long run; returns one line naming the URL
    and the cause when it is unreachable, refuses the key or is not an OpenAI-compatible
    server (else None), and warns when it does not list ``--model``. A server without
    ``/models`` is given the benefit of the doubt."""
    import openai

    from liveroom_sim.errors import did_you_mean
    from liveroom_sim.llm.client import redact

    url = endpoint_url(args)
    client = openai.OpenAI(base_url=args.base_url or os.environ.get("OPENAI_BASE_URL"),
                           api_key=os.environ.get("OPENAI_API_KEY") or "not-needed",
                           timeout=timeout_s, max_retries=0)
    try:
        served = [m.id for m in client.models.list()]
    except openai.APIConnectionError as exc:
        cause = "timed out" if isinstance(exc, openai.APITimeoutError) else redact(str(exc.__cause__ or exc))
        return f"cannot reach the endpoint {url}: {cause}"
    except openai.AuthenticationError as exc:
        return f"the endpoint {url} refused the API key (HTTP {exc.status_code}): set OPENAI_API_KEY"
    except openai.APIStatusError as exc:
        if exc.status_code in (404, 405, 501):
            return None
        return f"the endpoint {url} answered HTTP {exc.status_code} to GET /models: {redact(exc.message)[:200]}"
    except Exception as exc:  # an answer that is not the models list: not an OpenAI-compatible server
        return f"the endpoint {url} is not an OpenAI-compatible server ({type(exc).__name__}: {redact(str(exc))[:200]})"
    finally:
        client.close()
    if served and args.model not in served:
        # Some servers answer for any model name (the test server, some proxies), so this
        # is a warning; where the calls then fail, the run ends with their cause.
        print(f"liveroom {args.command}: warning: the endpoint {url} does not list model {args.model!r}"
              f"{did_you_mean(args.model, served)}; it lists: {', '.join(served[:8])}", file=sys.stderr)
    return None


def missing(path: str | Path) -> str:
    """``path`` is missing: say so, naming the first folder on the way that is missing too.

    >>> missing("/no/such/dir/spec.yaml")
    "'/no/such/dir/spec.yaml' does not exist (the folder '/no' is missing)"
    """
    path = Path(path)
    gone = None
    for parent in path.parents:
        if parent.exists():
            break
        gone = parent
    return f"{str(path)!r} does not exist" + (f" (the folder {str(gone)!r} is missing)" if gone else "")


def env_id(env: str) -> str:
    """The registered id for ``--env`` (an id or a spec file), registering a file first.

    Raises:
        ValueError: A spec file path that does not exist (named as missing).
    """
    if env.endswith((".yaml", ".yml")) or os.sep in env:
        if not Path(env).exists():
            raise ValueError(f"the spec file {missing(env)}")
    return resolve_env_id(env)


def make_env(env: str):
    """The unwrapped env of a registered id or a spec file."""
    return gym.make(env_id(env)).unwrapped
