"""``python -m ponder.repro run|prepare|refresh|verify``: what ``make figures``, ``make test``, ``make refresh`` and
``make verify`` call (:func:`ponder.repro.cli.main`)."""

from .cli import main

main()
