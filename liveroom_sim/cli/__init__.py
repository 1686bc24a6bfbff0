"""The ``liveroom`` command line (the top layer: it may import every other layer).

One module per command group: :mod:`.demo`, :mod:`.runs` (rollout, train, latency,
export-sft) and :mod:`.rewards`; :mod:`.main` builds the parser.
"""

from liveroom_sim.cli.main import main

__all__ = ["main"]
