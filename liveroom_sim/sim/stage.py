"""The stage: what the host has done with the featured product and the campaign's style.

The ``strategy`` reward reads how long the featured product has been on stage, when the
host last pitched it, how many replies went by without the slogan, and the host's last
few replies (repetition); the room keeps them here, moved only by a campaign's feature
event and by delivered replies.
"""

from __future__ import annotations

import math
from collections import deque

from liveroom_sim.rewards.analysis import Analysis
from liveroom_sim.rewards.conduct import says_slogan
from liveroom_sim.world.market import Market

#: How many of the host's replies the strategy reward reads back.
RECENT_REPLIES = 5


class Stage:
    """The featured product's time on stage and the host's recent delivery.

    Attributes:
        featured_at: When the product on stage was featured (stream seconds).
        pitched_at: When a delivered reply last named it (``-inf``: not yet).
        replies_since_slogan: Delivered replies since the last that said the style's
            slogan (99 before any: the slogan is due at once).
        recent_replies: The last :data:`RECENT_REPLIES` delivered replies, oldest first.
    """

    def __init__(self):
        self.featured_at = 0.0
        self.pitched_at = -math.inf
        self.replies_since_slogan = 99
        self.recent_replies: deque[str] = deque(maxlen=RECENT_REPLIES)

    def feature(self, at: float) -> None:
        """A campaign event put a product on stage at ``at``."""
        self.featured_at = at

    def delivered(self, text: str, analysis: Analysis, market: Market, clock: float) -> None:
        """A reply reached the room: it is recent, it may pitch the featured product and
        it may say the slogan."""
        self.recent_replies.append(text)
        if market.featured in analysis.products:
            self.pitched_at = clock
        slogan = market.style.slogan
        said_slogan = bool(slogan) and says_slogan(analysis.norm, slogan)
        self.replies_since_slogan = 0 if said_slogan else self.replies_since_slogan + 1

    def since_pitch(self, clock: float) -> float:
        """Seconds since the featured product was last pitched (``1e9``: not since it came on)."""
        return clock - self.pitched_at if self.pitched_at >= self.featured_at else 1e9
