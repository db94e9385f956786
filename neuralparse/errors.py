"""Exceptions for problems in what the user gave us (files, trees, checkpoints, configs)."""

from __future__ import annotations


class InputError(ValueError):
    """Bad user input; the message names the file, line and sentence where known."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        sent_id: str | None = None,
    ) -> None:
        self.reason = message
        self.source = source
        self.line = line
        self.sent_id = sent_id
        where = []
        if source is not None:
            where.append(str(source))
        if line is not None:
            where.append(f"line {line}")
        if sent_id is not None:
            where.append(f"sentence {sent_id}")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class ConlluError(InputError):
    """Malformed CoNLL-U (columns, ids, heads) or an ill-formed tree in a CoNLL-U file."""


class TreeError(InputError):
    """A heads array that is not a well-formed dependency tree (cycle, head out of range...)."""


class OptionError(InputError, TypeError):
    """An option or configuration key that does not exist, or a value of the wrong type.

    Also a :class:`TypeError`, which Python raises for an unknown keyword argument, so that
    code catching that keeps working."""
