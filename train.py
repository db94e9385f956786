"""Train a parser: ``python train.py [key=value ...]``, the same as ``neuralparse train``.

The application lives in :mod:`neuralparse.commands.train`, so that an installed package
trains without this checkout; this file keeps the checkout's command working.
"""

from neuralparse.runtime.cli import run_program


def run() -> None:
    # Imported under run_program, which reports a Ctrl-C while Hydra loads in one line too.
    from neuralparse.commands.train import run as train

    train()


if __name__ == "__main__":
    run_program(run)
