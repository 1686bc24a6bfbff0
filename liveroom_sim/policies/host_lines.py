"""How the built-in hosts word things, per language: ``envs/host/<lang>.yaml``.

Every line has variants: the reference host says the first, a host with a sampling
temperature may say another (see :class:`Voice`). The file also says how a sentence
names a product ("the glow serum"), how a verb agrees with the product's number ("the
leggings come"), how counts ("1 day", "30 days") and money are written, how lists end
("a, b and c"), how an order's status is said, and where disclosures go.

Example:
    >>> lines = host_lines("en")
    >>> lines.count("day", 1), lines.count("day", 30), lines.money(18.5, "USD")
    ('1 day', '30 days', '$18.50')
    >>> lines.agreement_of("yoga leggings")["is"], lines.agreement_of("glow serum")["is"]
    ('are', 'is')
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

import numpy as np

from liveroom_sim.world import datafile
from liveroom_sim.world.datafile import Frozen
from liveroom_sim.world.paths import ENVS_DIR

_SLOTS = re.compile(r"\{(\w+)\}")


class HostLines(Frozen):
    """One language's host wording (fields as in ``envs/host/en.yaml``)."""

    language: str
    capitalize: bool
    sentence_join: str
    product: str
    plural_suffixes: tuple[str, ...] = ()
    singular_suffixes: tuple[str, ...] = ()
    agreement: dict[str, dict[str, str]]
    units: dict[str, tuple[str, str]]
    money_forms: dict[str, str] = datafile.pydantic.Field(alias="money")
    list_sep: str
    list_last: str
    disclosure_tag: str
    disclosure_sentence: str
    statuses: dict[str, str] = {}
    status_other: str
    no_eta_statuses: tuple[str, ...] = ()
    refund_statuses: tuple[str, ...] = ()  # an order's statuses that are a refund's: else "no refund yet"
    tool_roles: dict[str, tuple[str, ...]] = {}
    quality: dict[Literal["count", "money", "amount"], tuple[str, ...]] = {}
    beyond_listing: dict[str, str] = {}
    topics: dict[str, str] = {}  # what an ask is about, as "I can't check the {what}" names it
    lines: dict[str, tuple[str, ...]]

    @datafile.pydantic.field_validator("lines")
    @classmethod
    def _variants(cls, value):
        empty = sorted(k for k, v in value.items() if not v)
        if empty:
            raise ValueError(f"lines with no variant: {empty}")
        return value

    @datafile.pydantic.field_validator("quality", "beyond_listing")
    @classmethod
    def _patterns(cls, value, info):
        for key, patterns in value.items():
            for p in (patterns,) if isinstance(patterns, str) else patterns:
                try:
                    re.compile(p)
                except re.error as exc:
                    raise ValueError(f"{info.field_name}.{key}: {p!r} is not a regular expression ({exc})") from None
        return value

    def beyond(self, intent: str, text: str) -> bool:
        """Whether ``text`` asks, about ``intent``, what no listing says ("can it ship
        straight to my sister", "true to size?", 会缩水吗): the honest answer says so."""
        pattern = self.beyond_listing.get(intent)
        return bool(pattern) and re.search(pattern, text.lower()) is not None

    @datafile.pydantic.field_validator("agreement")
    @classmethod
    def _numbers(cls, value):
        if set(value) != {"singular", "plural"} or set(value["singular"]) != set(value["plural"]):
            raise ValueError("agreement needs 'singular' and 'plural' with the same slots")
        return value

    def count(self, unit: str, n) -> str:
        """``n`` of ``unit`` ("1 day", "30 days", 3天)."""
        one, many = self.units[unit]
        return (one if n == 1 else many).format(n=f"{n:g}" if isinstance(n, float) else n)

    def money(self, value, currency: str) -> str:
        """An amount with two decimals, or none when whole ("$18.50", "$18", 121.04元)."""
        v = float(value)
        amount = f"{v:.0f}" if round(v, 2) == round(v) else f"{v:.2f}"
        return self.money_forms.get(currency, "{amount}").format(amount=amount)

    def listed(self, items) -> str:
        """Items as a list ("a, b and c"; a、b、c)."""
        items = [str(x) for x in items]
        if len(items) < 2:
            return "".join(items)
        return self.list_sep.join(items[:-1]) + self.list_last + items[-1]

    def agreement_of(self, name: str) -> dict[str, str]:
        """The verb and pronoun forms that agree with a product called ``name``."""
        last = name.lower().rsplit(" ", 1)[-1]
        plural = last.endswith(self.plural_suffixes) and not last.endswith(self.singular_suffixes) \
            if self.plural_suffixes else False
        return self.agreement["plural" if plural else "singular"]

    def status(self, status: str) -> str:
        """How an order's status is said ("has shipped"; 已发货)."""
        return self.statuses.get(status, self.status_other.format(status=status))


@cache
def host_lines(language: str) -> HostLines:
    """The built-in host wording of ``language`` (``en`` or ``zh``)."""
    return datafile.load(HostLines, ENVS_DIR / "host" / f"{language}.yaml")


class Voice:
    """Which variant of a line a host says: the first at temperature 0 (the reference
    host), else variant ``k`` with probability proportional to ``exp(-k / temperature)``,
    drawn from the host's own generator.

    Example:
        >>> Voice("en").line("greet")
        "Welcome to the stream! Ask me anything about today's lineup."
    """

    def __init__(self, language: str, temperature: float = 0.0, rng: np.random.Generator | None = None,
                 recent: tuple[str, ...] = ()):
        self.lines = host_lines(language)
        self.temperature = temperature
        self.rng = rng
        self.recent = recent  # the host's last replies: a variant said in one is not said again

    def pick(self, options):
        """One of ``options``, the first most likely (always, at temperature 0)."""
        if self.temperature <= 0 or self.rng is None or len(options) < 2:
            return options[0]
        w = np.exp(-np.arange(len(options)) / self.temperature)
        return options[int(self.rng.choice(len(options), p=w / w.sum()))]

    def line(self, key: str, **values) -> str:
        """Line ``key`` in the picked variant, its slots filled from ``values``; a variant
        one of the host's last replies said is not said again while another is left (a
        viewer who baits twice is not refused in the same words twice, nor is one who asks
        the same thing twice answered so)."""
        said = [o.format(**values) if values or _SLOTS.search(o) else o for o in self.lines.lines[key]]
        recent = [r.lower() for r in self.recent]  # a sentence is capitalised where it is said
        return self.pick([t for t in said if not any(t.lower() in r for r in recent)] or said)
