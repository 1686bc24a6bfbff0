"""The serve package's docstring examples run."""

from __future__ import annotations

import doctest


def test_the_app_docstring_example_runs():
    import liveroom_sim.serve.app as app

    assert doctest.testmod(app).failed == 0
