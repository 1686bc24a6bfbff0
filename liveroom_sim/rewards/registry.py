"""The reward components, each declared once: its name, its function, its default weight,
whether only a reply that serves a need earns its positive value, and whether a spec
must name it for it to run (:data:`COMPONENTS`).

Everything else reads this list: the spec validates its ``reward.weights`` against it
(:class:`~liveroom_sim.spec.RewardConfig`), the reward model scores it in this order
(:class:`~liveroom_sim.rewards.model.RewardModel`), the env's docstring and the tests
name the components from it. A component's docstring (what earns and what loses) is
its function's.

>>> [c.name for c in COMPONENTS if not c.optional]
['factuality', 'compliance', 'engagement', 'strategy', 'harness', 'tools', 'outcome']
>>> by_name("factuality").served, by_name("outcome").served
(True, False)
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from liveroom_sim.rewards.components import Score, compliance, factuality
from liveroom_sim.rewards.conduct import engagement, harness_following, strategy
from liveroom_sim.rewards.skills import reasoning_length, skill_selection
from liveroom_sim.rewards.tooluse import no_outcome, tool_rationality


@dataclass(frozen=True)
class Component:
    """One reward component.

    Attributes:
        name: The name a spec weights it by and ``info["reward_breakdown"]`` reports.
        score: ``score(ctx) -> Score``, a pure function of the turn's context.
        weight: Its weight when a spec sets no ``reward.weights`` at all (a spec that
            sets some gives 0 to a component it leaves out).
        served: Whether its positive value is earned only by a reply that serves a need
            of the room (pay per served need, not per turn: otherwise a short reply buys
            more paid turns).
        optional: Whether it runs only in a spec that weights it (and is reported only
            there).
        gates: Whether a value at or below the spec's ``compliance_gate`` caps the
            turn's total (one severe violation outweighs good answers).
        judged: Whether the spec's LLM judge, when there is one, grades it.
        settles: Whether the room's losses during a step are added to it when the
            step is settled (:meth:`~liveroom_sim.rewards.model.RewardModel.settle`).
        short: Its abbreviation in a transcript's reward lines (empty: the name).
    """

    name: str
    score: Callable[..., Score]
    weight: float = 1.0
    served: bool = False
    optional: bool = False
    gates: bool = False
    judged: bool = False
    settles: bool = False
    short: str = ""

    @property
    def doc(self) -> str:
        """What earns and what loses this component's reward (its function's docstring)."""
        return inspect.getdoc(self.score) or ""


#: Every reward component, in the order the reward model scores and reports them. In
#: the paper's terms: factuality is accuracy, engagement is effectiveness, tools is tool
#: rationality, outcome is what the room lost.
COMPONENTS = (
    Component("factuality", factuality, served=True, short="fact"),
    Component("compliance", compliance, served=True, gates=True, short="comp"),
    Component("engagement", engagement, judged=True, short="eng"),
    Component("strategy", strategy, served=True, short="strat"),
    Component("harness", harness_following, served=True, short="harn"),
    Component("tools", tool_rationality, served=True),
    Component("outcome", no_outcome, settles=True),
    Component("skills", skill_selection, optional=True),
    Component("reasoning", reasoning_length, optional=True),
)

_BY_NAME = {c.name: c for c in COMPONENTS}


def by_name(name: str) -> Component:
    """The declared component called ``name`` (``KeyError`` for another name)."""
    return _BY_NAME[name]


def the_one(flag: str) -> Component:
    """The one component whose ``flag`` (``gates``, ``judged``, ``settles``) is set."""
    found = [c for c in COMPONENTS if getattr(c, flag)]
    if len(found) != 1:  # (a declaration error: caught by the module's import in any test)
        raise ValueError(f"{len(found)} reward components declare {flag!r}; expected exactly one")
    return found[0]
