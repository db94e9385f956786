"""What every command-line entry point shares: how user errors and signals end a run.

A user error (a bad path, file, checkpoint, device, thread count or configuration key: an
:class:`~neuralparse.errors.InputError`, a file that cannot be read or written (an
:class:`OSError`), or a Hydra configuration that does not compose) ends
the program with one line on standard error, ``error: MESSAGE``, and exit status
:data:`USER_ERROR` (2, as argparse uses for a bad command line); a traceback means a bug.
``train.py``, ``predict.py`` and ``python -m neuralparse.evaluate|analyze|oracle`` all go
through here, so their messages and status agree.  A command whose standard output is piped
into a reader that stops early (``| head``) ends quietly with status 141, as Unix tools do.

SIGTERM (what ``kill``, batch schedulers and ``torchrun`` send) is turned into
:class:`SystemExit` by :func:`exit_on_sigterm`, so that it unwinds the stack like Ctrl-C does:
the temporary file of an output or checkpoint being written is removed on the way out
(:func:`neuralparse.io.sources.replacing`) and the files already in place stay whole (a
checkpoint being written is finished first: :mod:`neuralparse.runtime.interrupts`).  Once
the command has returned, :func:`run_program` gives SIGTERM and SIGINT their default actions
back for the interpreter's exit.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

from neuralparse.errors import InputError

USER_ERROR = 2
"""Exit status of a run stopped by a user error."""


def one_line(text: str) -> str:
    """``text``'s non-blank lines, stripped and joined with ``; ``."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def report(message: str) -> None:
    """Write the one-line report of a user error to standard error."""
    print(f"error: {one_line(message)}", file=sys.stderr, flush=True)


def describe(error: InputError | OSError) -> str:
    """The message of a user error (an operating-system error as ``FILE: reason``)."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        return f"{error.filename}: {error.strerror}"
    return str(error)


def output_closed(error: BaseException) -> bool:
    """Whether ``error`` means that standard output's reader has gone, as when the output is
    piped into ``head``: a broken pipe, and standard output is a pipe with no reader left
    (``poll`` reports an error on it).  A broken pipe elsewhere (a worker process that died)
    stays an error."""
    if not isinstance(error, BrokenPipeError):
        return False
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll(), or stdout is not a file
        return False


def end_quietly() -> NoReturn:
    """End a command whose standard output's reader has gone, as Unix tools do: no message
    (the output was not wanted any more) and status 141, that of a process ended by SIGPIPE.
    Standard output is pointed at ``/dev/null`` first, since the interpreter flushes it on
    the way out and would fail again."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    raise SystemExit(128 + signal.SIGPIPE)


def fail_with(error: InputError | OSError) -> NoReturn:
    """:func:`fail` with ``error``'s message, or :func:`end_quietly` when it only means that
    the reader of standard output has gone."""
    if output_closed(error):
        end_quietly()
    fail(describe(error))


def fail(message: str) -> NoReturn:
    """Report a user error and exit with :data:`USER_ERROR`."""
    report(message)
    raise SystemExit(USER_ERROR)


class ArgumentParser(argparse.ArgumentParser):
    """argparse reporting a bad command line in one line, as every other user error, instead
    of the usage text and the message (exit status 2 either way)."""

    def error(self, message: str) -> NoReturn:
        fail(f"{self.prog}: {message} (see --help)")


def report_error(error: InputError | OSError) -> int:
    """Report a user error caught by a command that returns its exit status, which this
    returns (:data:`USER_ERROR`); ends quietly when the reader of standard output has gone
    (:func:`end_quietly`)."""
    if output_closed(error):
        end_quietly()
    report(describe(error))
    return USER_ERROR


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def exit_on_sigterm() -> None:
    """From now on SIGTERM raises ``SystemExit(143)`` in the main thread (see the module
    docstring), as ``KeyboardInterrupt`` does for Ctrl-C."""
    signal.signal(signal.SIGTERM, _terminate)


def run_program(main: Callable[[], int | None]) -> NoReturn:
    """Run a command as the whole program and exit with its status.

    Once ``main`` has returned or raised, SIGTERM and SIGINT get their default actions back
    (the process ends at once): the work is done and its files are in place, and what
    remains is the interpreter's exit callbacks (torch registers some), where a
    ``SystemExit`` or ``KeyboardInterrupt`` raised by a handler is not an exit but an
    "Exception ignored" message with a traceback after a run that succeeded.

    Ctrl-C ends the command with one line, ``error: interrupted``, and status 130, instead of
    a traceback, wherever it comes (reading the configuration, importing torch, working)."""
    try:
        status = main()
    except KeyboardInterrupt:
        report("interrupted")
        status = 128 + signal.SIGINT
    except BrokenPipeError as error:
        if not output_closed(error):
            raise
        end_quietly()
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise SystemExit(status)


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn what the block raises for bad user input into :func:`fail`: an
    :class:`InputError`, an :class:`OSError` (a file that cannot be read or written), or
    OmegaConf's error for a mandatory value (``???``) left unset."""
    from omegaconf.errors import MissingMandatoryValue

    try:
        yield
    except (InputError, OSError) as error:
        fail_with(error)
    except MissingMandatoryValue as error:
        fail(f"no value for {error.full_key}: give {error.full_key}=VALUE")


def config_error_message(error: Exception) -> str:
    """One line for a Hydra composition error: an unknown key, a value of the wrong type, a
    config group option that does not exist, an override that does not parse."""
    from hydra.errors import MissingConfigException
    from omegaconf.errors import ConfigAttributeError, ConfigKeyError, ValidationError

    cause = error.__cause__
    if isinstance(cause, ValidationError):
        return f"{cause.full_key}: {str(cause).splitlines()[0]}"
    override = re.match(r"Could not override '([^']+)'", str(error))
    if override or isinstance(cause, ConfigKeyError | ConfigAttributeError):
        # Hydra's own message suggests '+key=value', which would add a misspelt key.
        key = override.group(1) if override else getattr(cause, "full_key", "?")
        return f"unknown configuration key {key!r}: check its spelling"
    if isinstance(error, MissingConfigException) and error.options:
        first = str(error).splitlines()[0]
        return f"{first}; available: {', '.join(error.options)}"
    return one_line(str(error))


def run_hydra(main: Callable[[], Any]) -> None:
    """Run a ``@hydra.main`` function, reporting a command line that Hydra cannot compose
    into a configuration as a user error instead of Hydra's several lines and exit status 1.

    Hydra reports errors itself unless ``HYDRA_FULL_ERROR=1``, with which it lets them
    through to be handled here; errors inside ``main`` (bugs: user errors are handled there
    with :func:`user_errors`) then keep their whole traceback."""
    from hydra.errors import HydraException

    previous = os.environ.get("HYDRA_FULL_ERROR")
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        main()
    except HydraException as error:
        fail(config_error_message(error))
    except OSError as error:  # Hydra's own files (the run folder, the log), its --help
        fail_with(error)
    finally:
        if previous is None:
            del os.environ["HYDRA_FULL_ERROR"]
        else:
            os.environ["HYDRA_FULL_ERROR"] = previous
