"""HSA operators on prompt structure, tool order and numeric limits.

Registered in :mod:`liveroom_sim.harness.augment`'s operator table (off unless a spec
names them, so the default variants stay what they were):

- ``reorder_items``: the sentences (items) inside each prose section of the system
  prompt, shuffled; every sentence stays, placeholders and all.
- ``reorder_tools``: the order in which the tool schemas are offered.
- ``perturb_limits``: numeric limits of the interaction constraints (the reply length
  cap, and any other whole-number constraint) drawn anew within the range the business
  allows, declared per language under ``limits:`` in ``envs/harness/hsa.yaml``.

Each only changes how the task is presented: the catalog, campaign, viewers and every
question's ground truth are untouched, and the reward reads the limits from the same
harness the prompt shows, so a reply the variant's prompt allows is judged by the
variant's limit.

Example:
    >>> import numpy as np
    >>> from liveroom_sim.spec import load_spec
    >>> from liveroom_sim.world.paths import ENVS_DIR
    >>> h = load_spec(ENVS_DIR / "LiveRoom-v0.yaml").harness
    >>> v = perturb_limits(h, "en", np.random.default_rng(1), {"max_chars": {"en": (160, 280)}})
    >>> 160 <= v.constraints.max_chars <= 280
    True
"""

from __future__ import annotations

import re
from types import UnionType
from typing import Annotated, Union, get_args, get_origin

import numpy as np

from liveroom_sim.harness.core import Constraints, Harness
from liveroom_sim.world.datafile import replaced

#: Operators of this module, in the order they run (after the default ones).
OPERATORS = ("reorder_items", "reorder_tools", "perturb_limits")

# A sentence ends at . ! ? (and their full-width forms) followed by space or the end; a
# "{placeholder}" of its own counts as an item.
_ENDS = (".", "!", "?", "。", "！", "？")
_SENTENCE = re.compile(r"[^.!?。！？]*(?:[.!?](?=\s|$)|[。！？])|\S[^.!?。！？]*$")


def _whole_number(annotation) -> bool:
    """``int``, an annotated ``int`` (``PositiveInt``), or either of them optional."""
    options = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else (annotation,)
    return any(a is int or (get_origin(a) is Annotated and get_args(a)[0] is int) for a in options)


#: Constraints that are whole numbers (limits ``perturb_limits`` may draw).
_NUMERIC = tuple(name for name, f in Constraints.model_fields.items() if _whole_number(f.annotation))


def sentences(text: str) -> list[str]:
    """The items of a prose section: its sentences, stripped, in order.

    Example:
        >>> sentences("Look it up. Then answer! {etiquette}")
        ['Look it up.', 'Then answer!', '{etiquette}']
    """
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def reorder_items(h: Harness, lang: str, rng: np.random.Generator, limits=None) -> Harness:
    """Shuffle the sentences inside each section of two or more (a closing placeholder
    without a full stop stays last), and list the rendered data items (the lineup's
    products, the rules' lines) in an order of their own."""
    joiner = "" if lang == "zh" else " "
    out = []
    for s in h.sections:
        items = sentences(s.text)
        # An unpunctuated last item (a placeholder such as {etiquette}) stays last: moved
        # before a sentence it would run into it.
        tail = [items.pop()] if items and not items[-1].endswith(_ENDS) else []
        if len(items) < 2:
            out.append(s)
            continue
        order = rng.permutation(len(items))
        out.append(replaced(s, {"text": joiner.join([*(items[i] for i in order), *tail])}))
    return replaced(h, {"sections": tuple(out), "item_order": int(rng.integers(2**31))})


def reorder_tools(h: Harness, lang: str, rng: np.random.Generator, limits=None) -> Harness:
    """Offer the tools in another order."""
    names = list(h.tools)
    order = rng.permutation(len(names))
    return replaced(h, {"tools": {names[i]: h.tools[names[i]] for i in order}})


def perturb_limits(h: Harness, lang: str, rng: np.random.Generator, limits: dict) -> Harness:
    """Draw each declared numeric constraint uniformly within its business range for
    ``lang`` (inclusive); constraints without a range for ``lang`` stay, and so does a
    limit the harness does not set (perturbing adds no limit the task did not have)."""
    update = {}
    for name, per_language in sorted(limits.items()):
        bounds = per_language.get(lang)
        if bounds is not None and getattr(h.constraints, name) is not None:
            lo, hi = bounds
            update[name] = int(rng.integers(lo, hi + 1))
    if not update:
        return h
    return replaced(h, {"constraints": replaced(h.constraints, update)})


def check_limits(value: dict) -> dict:
    """Validate ``limits:`` of the pools: known whole-number constraints, per language
    ``[low, high]`` with ``0 < low <= high``; raises ``ValueError`` naming the entry."""
    for name, per_language in value.items():
        if name not in _NUMERIC:
            raise ValueError(f"limits.{name}: not a numeric constraint; expected one of {sorted(_NUMERIC)}")
        for lang, bounds in per_language.items():
            lo, hi = bounds
            if not 0 < lo <= hi:
                raise ValueError(f"limits.{name}.{lang}: expected [low, high] with 0 < low <= high, got {list(bounds)}")
    return value


def _op(fn):
    return lambda h, lang, rng, pools: fn(h, lang, rng, getattr(pools, "limits", {}))


#: The operator table entries, as :mod:`liveroom_sim.harness.augment` calls them.
OPS = {"reorder_items": _op(reorder_items), "reorder_tools": _op(reorder_tools), "perturb_limits": _op(perturb_limits)}
