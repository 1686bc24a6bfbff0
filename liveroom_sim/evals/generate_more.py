"""The ``robust`` and ``follow`` suites (see :mod:`liveroom_sim.evals.generate`)."""

from __future__ import annotations

from liveroom_sim.evals.cases import Case, Check, Fault
from liveroom_sim.evals.faults import FAULT_KINDS


def robust(target: int) -> list[Case]:
    raise NotImplementedError


def follow(target: int) -> list[Case]:
    raise NotImplementedError
