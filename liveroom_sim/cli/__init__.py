"""The ``liveroom`` command line (the top layer: it may import every other layer).

One module per command group: :mod:`.demo` (with :mod:`.transcript`), :mod:`.runs`
(rollout, train, latency, export-sft), :mod:`.rewards` and ``report`` (in
:mod:`liveroom_sim.report`); :mod:`.main` builds the parser, :mod:`.common` holds what they
share.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the ``liveroom`` command (imported on call, so that ``python -m
    liveroom_sim.cli.main`` does not find its module already imported)."""
    from liveroom_sim.cli.main import main as run

    return run(argv)


__all__ = ["main"]
