"""Parse with a trained parser: ``python predict.py checkpoint=PATH input=IN output=OUT
[key=value ...]``, the same as ``neuralparse predict``.

The application lives in :mod:`neuralparse.commands.predict`, so that an installed package
predicts without this checkout; this file keeps the checkout's command working.
"""

from neuralparse.runtime.cli import run_program


def run() -> None:
    # Imported under run_program, which reports a Ctrl-C while Hydra loads in one line too.
    from neuralparse.commands.predict import run as predict

    predict()


if __name__ == "__main__":
    run_program(run)
