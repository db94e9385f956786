"""``python -m neuralparse.evaluate GOLD PRED [--json] [--verbose]``: the ``evaluate`` command
under the name the README and scripts use.  The command is
:mod:`neuralparse.commands.evaluate`; this name stays apart from the
:mod:`neuralparse.evaluation` package, which holds the metrics."""

from neuralparse.commands.evaluate import (
    CONVENTIONS,
    DESCRIPTION,
    ROWS,
    build_parser,
    format_table,
    main,
)
from neuralparse.runtime.cli import run_program

__all__ = ["CONVENTIONS", "DESCRIPTION", "ROWS", "build_parser", "format_table", "main"]

if __name__ == "__main__":
    run_program(main)
