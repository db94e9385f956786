"""``python -m neuralparse COMMAND ...``: the ``neuralparse`` command.

See :mod:`neuralparse.commands`.
"""

from neuralparse.commands import entry_point

if __name__ == "__main__":
    entry_point()
