"""``python -m liveroom_sim.cli``: the ``liveroom`` command."""

import sys

from liveroom_sim.cli.main import main

sys.exit(main())
