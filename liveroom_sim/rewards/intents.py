"""What a viewer's message asks for, as the reward reads it: :class:`Intent`, built from the
intents the personas declare (:data:`liveroom_sim.world.personas.INTENTS`), so a new
intent is declared once.

>>> Intent.BAIT == "bait", "inject" in REFUSED
(True, True)
"""

from __future__ import annotations

from enum import StrEnum

from liveroom_sim.world.personas import INTENTS

#: A viewer's intent; each member is its string (``Intent.BAIT == "bait"``), so a question
#: built with a plain string compares the same.
Intent = StrEnum("Intent", [(name.upper(), name) for name in INTENTS], module=__name__)

#: Intents answered by refusing (politely) rather than with facts.
REFUSED = frozenset({Intent.BAIT, Intent.INJECT})
