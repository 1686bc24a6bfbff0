"""Evaluation: the four frozen suites (lsqa, hvqa, robust, follow) and the runner of
``liveroom eval`` (see ``docs/eval.md``)."""

from liveroom_sim.evals.cases import SUITES, Case, SuiteError, load_suite

__all__ = ["SUITES", "Case", "SuiteError", "load_suite"]
