"""The ``neuralparse`` command: one installed tool for every task.

    neuralparse train [key=value ...]                      train a parser (Hydra)
    neuralparse predict checkpoint=PATH input=IN output=OUT parse files or stdin (Hydra)
    neuralparse evaluate GOLD SYSTEM [--json]               CoNLL 2018 metrics and more
    neuralparse analyze FILE... [--no-punct]                tree classes of treebanks
    neuralparse oracle --system NAME FILE                   replay a system's static oracle
    neuralparse show FILE -o OUT.html|svg|png               draw dependency trees
    neuralparse curves RUN... -o OUT.svg                    draw training curves

``train`` and ``predict`` are the applications of :mod:`neuralparse.commands.train` and
:mod:`neuralparse.commands.predict` (what the checkout's ``train.py`` and ``predict.py``
run), with the configuration packaged in :mod:`neuralparse.conf`; the others are the
``python -m neuralparse.<name>`` tools.  Each command's ``--help`` says more; a user error
ends any of them with one line and exit status 2.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from neuralparse.runtime.cli import run_program
from neuralparse.runtime.interrupts import interruptions_held

COMMANDS = {
    "train": ("neuralparse.commands.train", "train a parser (Hydra key=value overrides)"),
    "predict": ("neuralparse.commands.predict", "parse CoNLL-U, text or raw text"),
    "evaluate": ("neuralparse.commands.evaluate", "score a system file against gold (CoNLL 2018)"),
    "analyze": ("neuralparse.analyze", "tree-class coverage of CoNLL-U files"),
    "oracle": ("neuralparse.oracle", "replay a transition system's static oracle"),
    "show": ("neuralparse.show", "draw dependency trees as HTML, SVG or PNG"),
    "curves": ("neuralparse.curves", "draw training runs' dev LAS and loss per epoch (SVG)"),
}
HYDRA_COMMANDS = ("train", "predict")
"""Commands that read ``sys.argv`` themselves (Hydra applications)."""


def usage() -> str:
    lines = ["usage: neuralparse COMMAND [ARGUMENTS ...]", "", "commands:"]
    lines += [f"  {name:9s} {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "neuralparse COMMAND --help tells more about each."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command named by the first argument with the rest."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(usage())
        return 0 if arguments else 2
    name, rest = arguments[0], arguments[1:]
    if name not in COMMANDS:
        print(f"error: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    with interruptions_held():  # a Ctrl-C that cut torch's import short would fail in numpy
        module = importlib.import_module(COMMANDS[name][0])
    if name in HYDRA_COMMANDS:
        # Hydra parses sys.argv; the program name stays the command's.
        sys.argv = [f"neuralparse {name}", *rest]
        module.run()
        return 0
    return int(module.main(rest))


def entry_point() -> None:
    """The console script ``neuralparse``."""
    run_program(main)
