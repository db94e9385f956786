"""Input detection, invalid UTF-8, and the safety of outputs and checkpoints.

Regression tests for defects users hit: CoNLL-U read as plain text by ``input_format=auto``,
runs writing the same output through one fixed temporary name, bad output locations noticed
only after parsing, and raw ``UnicodeDecodeError`` tracebacks.
"""

from __future__ import annotations

import io
import logging
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from neuralparse.errors import ConlluError, InputError
from neuralparse.io import ReadReport, Sentence, detect_format, parse_conllu_text
from neuralparse.prediction import open_output, open_sentences, predict_file
from neuralparse.runtime import checkpoint as checkpoint_module
from neuralparse.runtime.checkpoint import save_checkpoint
from neuralparse.runtime.cli import USER_ERROR
from neuralparse.runtime.interrupts import interruptions_held
from tests.killing import default_signals
from tests.test_predict import train_tiny_checkpoint

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")

GOOD = "# sent_id = good\n1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n2\tw2\t_\t_\t_\t_\t_\t_\t_\t_\n\n"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_tiny_checkpoint(tmp_path_factory.mktemp("reliability"), "arc_standard")


def predict(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, str(REPO / "predict.py"), "device=cpu", "progress=false", *args],
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def source_of(kind: str, data: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``data`` as a path, as standard input (``-``) or as an open text file, and its name."""
    if kind == "path":
        path = tmp_path / "in.conllu"
        path.write_bytes(data)
        return path, str(path)
    if kind == "stdin":
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        return "-", "<stdin>"
    return io.StringIO(data.decode(), newline=""), "<file>"


def read_all(source: Any, **options: Any) -> list[Sentence]:
    with open_sentences(source, **options) as sentences:
        return list(sentences)


# -- defect 1: CoNLL-U that input_format=auto read as plain text ------------------------------

# A first sentence whose first word line is malformed, then a good sentence: strict reading
# must stop at line 2 of sentence "bad", lenient reading must keep the good sentence.
MALFORMED_FIRST_WORD_LINE = {
    "nine_columns": ("1\tw1\t_\t_\t_\t_\t_\t_\t_\n", "found 9"),
    "non_integer_id": ("one\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n", "malformed token id"),
    "tab_inside_form": ("1\tNew\tYork\t_\t_\t_\t_\t_\t_\t_\t_\n", "found 11"),
    "spaces_for_tabs": ("1 w1 _ _ _ _ _ _ _ _\n", "found 1"),
}


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
@pytest.mark.parametrize("case", sorted(MALFORMED_FIRST_WORD_LINE))
def test_malformed_conllu_is_detected_and_reported_with_its_location(
    case: str, kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    word_line, reason = MALFORMED_FIRST_WORD_LINE[case]
    data = ("# sent_id = bad\n" + word_line + "\n" + GOOD).encode()
    assert detect_format(data.decode().splitlines(keepends=True)) == "conllu"
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match=reason) as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 2, "bad")
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        assert [s.sent_id for s in read_all(source, lenient=True, report=report)] == ["good"]
    assert [(s.line, s.sent_id) for s in report.skipped] == [(2, "bad")]


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_byte_order_mark_does_not_hide_conllu(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = ("\ufeff1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n\n" + GOOD).encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    with open_sentences(source) as sentences:
        first, second = sentences
    assert (first.forms, second.forms) == (["w1"], ["w1", "w2"])
    assert first.to_conllu().startswith("\ufeff1\tw1\t")  # the mark is kept on output
    assert detect_format(["\ufeff# sent_id = 1\n", "1\tw1\n"]) == "conllu"


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_many_leading_comments_without_equals_sign_do_not_hide_conllu(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    comments = "# newdoc\n" + "# a licence line without an equals sign\n" * 60
    data = (comments + GOOD).encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    with open_sentences(source) as sentences:
        (sentence,) = sentences
    assert (sentence.forms, sentence.sent_id) == (["w1", "w2"], "good")
    assert sentence.to_conllu() == data.decode()  # the comments are kept


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The cat sat .\nIt ran .\n", "text"),
        ("1 . Introduction\n2 . Methods\n", "text"),  # numbered lines are not word lines
        ("1 The cat sat on the mat and then left\n", "text"),  # 10 tokens, HEAD not a number
        ("#hashtag day\n" * 70 + "sun is out\n", "text"),
        ("  w4\tw5 zzz  w6 \nw7\n", "text"),  # a tab between words
        ("a\tb\tc\nd e\n", "text"),
        ("a\tb\tc\n3\tw3\t_\n", "conllu"),  # a token id before a tab: CoNLL-U
        ("a\tb\tc\n" + "x\t" * 9 + "x\n", "conllu"),  # ten tab-separated columns
        ("the cat\n" * 60 + "1\tw1\t_\n", "text"),  # past the 50 probed lines
        ("# sent_id = 1\n# text = w1\n", "conllu"),
        ("", "text"),
    ],
)
def test_detection_rule(text: str, expected: str) -> None:
    assert detect_format(text.splitlines(keepends=True)) == expected


def test_detected_format_is_logged(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "in.txt"
    path.write_text("w1 w2\n")
    caplog.set_level(logging.INFO, logger="neuralparse.predict")
    with open_sentences(path) as sentences:
        assert [s.forms for s in sentences] == [["w1", "w2"]]
    path.write_text(GOOD)
    with open_sentences(path) as sentences:
        list(sentences)
    messages = [r.getMessage() for r in caplog.records if r.name == "neuralparse.predict"]
    assert len(messages) == 2
    assert str(path) in messages[0] and "plain text" in messages[0]
    assert "CoNLL-U" in messages[1] and "line 1 is a '# key = value' comment" in messages[1]


@pytest.mark.parametrize("suffix", [".conllu", ".txt"])
def test_a_file_of_comments_only_is_read_as_its_name_says(tmp_path: Path, suffix: str) -> None:
    """Comments without ``=`` could be hashtags of plain text or a CoNLL-U file that lost its
    word lines; only a ``.conllu`` name tips it, so that such a file gets the CoNLL-U reader's
    error (naming its first line) rather than having its comments parsed as words."""
    path = tmp_path / f"notes{suffix}"
    path.write_text("# just a note\n\n")
    if suffix == ".conllu":
        with (
            pytest.raises(
                ConlluError, match=r"notes\.conllu, line 1, sentence #1: .*no word lines"
            ),
            open_sentences(path) as sentences,
        ):
            list(sentences)
    else:
        with open_sentences(path) as sentences:
            assert [s.forms for s in sentences] == [["#", "just", "a", "note"]]


def test_predict_py_parses_stdin_conllu_with_byte_order_mark(checkpoint: Path) -> None:
    data = ("\ufeff" + GOOD).encode()
    result = predict(f"checkpoint={checkpoint}", "input=-", "output=-", stdin=data)
    assert result.returncode == 0, result.stderr.decode()
    (parsed,) = parse_conllu_text(result.stdout.decode())
    assert result.stdout.startswith("\ufeff# sent_id = good\n".encode())
    assert parsed.heads is not None and parsed.sent_id == "good"
    assert b"<stdin>: detected CoNLL-U" in result.stderr


# -- defect 2: temporary files of outputs and checkpoints -------------------------------------


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".partial"))


def test_two_writers_of_one_output_do_not_corrupt_it(tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    with open_output(out) as first:
        first.write("first\n" * 1000)
        with open_output(out) as second:
            second.write("second\n")
            partials = leftovers(tmp_path)
        assert out.read_text() == "second\n"
    assert out.read_text() == "first\n" * 1000  # the last to finish wins, whole
    assert len(partials) == 2 and all(p.startswith(".out.conllu.") for p in partials)
    assert leftovers(tmp_path) == []


def raise_keyboard_interrupt() -> None:
    raise KeyboardInterrupt


def raise_value_error() -> None:
    raise ValueError("boom")


def send_sigterm() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(5)  # interrupted by the handler's SystemExit
    raise AssertionError("the SIGTERM handler did not run")


@pytest.mark.parametrize(
    ("interrupt", "expected"),
    [
        (raise_value_error, ValueError),
        (raise_keyboard_interrupt, KeyboardInterrupt),
        (send_sigterm, SystemExit),
    ],
)
def test_an_interrupted_output_leaves_no_file(
    interrupt: Any, expected: type[BaseException], tmp_path: Path
) -> None:
    def exit_on_sigterm(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)  # what predict.py's SIGTERM handler does

    previous = signal.signal(signal.SIGTERM, exit_on_sigterm)
    try:
        out = tmp_path / "out.conllu"
        with pytest.raises(expected), open_output(out) as handle:
            handle.write("half a sentence")
            interrupt()
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert list(tmp_path.iterdir()) == []


SIGNAL_AT_EXIT = """
import atexit, os, signal, sys, time
from neuralparse.runtime.cli import exit_on_sigterm, run_program

def main():
    exit_on_sigterm()
    # Exit callbacks run after the command's work; the signal comes in one of them.
    atexit.register(lambda: (os.kill(os.getpid(), int(sys.argv[1])), time.sleep(5)))
    return 0

run_program(main)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_after_the_work_ends_the_process_without_a_traceback(signum: int) -> None:
    # A kill that lands while the interpreter runs its exit callbacks (torch has some) used
    # to raise SystemExit/KeyboardInterrupt inside one: "Exception ignored" and a traceback.
    done = subprocess.run(
        [sys.executable, "-c", SIGNAL_AT_EXIT, str(int(signum))],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == -signum, done.stderr
    assert "Traceback" not in done.stderr


def run_command(main: str) -> subprocess.CompletedProcess[str]:
    """Run ``main`` (the body of a command's ``main``) as a program through ``run_program``."""
    program = (
        "from neuralparse.runtime.cli import run_program, user_errors\n"
        f"def main():\n    {main}\nrun_program(main)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )


def test_ctrl_c_ends_a_command_with_one_line_and_status_130() -> None:
    done = run_command("raise KeyboardInterrupt")
    assert done.returncode == 130 and done.stderr == "error: interrupted\n", done.stderr


SLOW_COMMAND = """
import signal, sys
signal.raise_signal(signal.SIGINT)  # Ctrl-C while the command's module (torch...) loads
sys.modules[__name__].LOADED = True

def main(arguments):
    return 0
"""


RUNS_SLOW_COMMAND = """
import sys
from neuralparse import commands
from neuralparse.runtime.cli import run_program

commands.COMMANDS["slow"] = ("slow_command", "loads slowly")

def main():
    try:
        return commands.main(["slow"])
    finally:
        print(getattr(sys.modules.get("slow_command"), "LOADED", False), flush=True)

run_program(main)
"""


def test_ctrl_c_while_a_command_loads_waits_for_the_import(tmp_path: Path) -> None:
    # Cut short, importing torch fails in numpy with an error of its own (a traceback, 1).
    (tmp_path / "slow_command.py").write_text(SLOW_COMMAND)
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", RUNS_SLOW_COMMAND],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": path},
        preexec_fn=default_signals,  # Ctrl-C delivered even where the suite runs with it ignored
    )
    assert done.stdout == "True\n", "the import was cut short"
    assert done.returncode == 130 and done.stderr == "error: interrupted\n", done.stderr


WRITES_A_LOT = """
import contextlib, sys
from neuralparse.runtime.cli import run_program, user_errors

def main():
    with user_errors() if sys.argv[1] == "user_errors" else contextlib.nullcontext():
        for _ in range(10_000):
            print("x" * 1000)
    return 0

run_program(main)
"""


@pytest.mark.parametrize("where", ["user_errors", "plain"])
def test_a_closed_standard_output_ends_a_command_quietly(where: str) -> None:
    # `predict.py output=- | head`: the reader goes away; as Unix tools, no message, 141.
    process = subprocess.Popen(
        [sys.executable, "-c", WRITES_A_LOT, where],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    process.stdout.read(10)
    process.stdout.close()
    _, errors = process.communicate(timeout=60)
    assert process.returncode == 128 + signal.SIGPIPE and errors == b"", errors.decode()


def test_a_broken_pipe_elsewhere_stays_an_error() -> None:
    done = run_command("with user_errors():\n        raise BrokenPipeError(32, 'Broken pipe')")
    assert done.returncode == USER_ERROR and done.stderr == "error: [Errno 32] Broken pipe\n"


def test_run_program_exits_with_the_command_status() -> None:
    done = run_command("return 3")
    assert done.returncode == 3, done.stderr


def test_output_keeps_the_usual_permissions(tmp_path: Path) -> None:
    out = tmp_path / "out.conllu"
    with open_output(out) as handle:
        handle.write("x\n")
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_named_pipe_is_written_not_replaced(tmp_path: Path) -> None:
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    with open_output(pipe) as handle:
        handle.write("through the pipe\n")
    reader.join(timeout=10)
    assert received == [b"through the pipe\n"]
    assert stat.S_ISFIFO(pipe.stat().st_mode) and leftovers(tmp_path) == []


def test_save_checkpoint_uses_a_unique_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "checkpoint.pt"
    real_save = torch.save
    seen: list[str] = []

    def save_and_meanwhile_save_again(data: Any, target: Any) -> None:
        real_save(data, target)
        seen.extend(leftovers(tmp_path))
        if data["run"] == 1:  # a second writer of the same checkpoint, while the first writes
            save_checkpoint(path, {"run": 2})

    monkeypatch.setattr(checkpoint_module.torch, "save", save_and_meanwhile_save_again)
    save_checkpoint(path, {"run": 1})
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert len(set(seen)) == 2 and all(name.startswith(".checkpoint.pt.") for name in seen)

    def fail(data: Any, target: Any) -> None:
        real_save(data, target)
        raise OSError("disk full")

    monkeypatch.setattr(checkpoint_module.torch, "save", fail)
    with pytest.raises(OSError, match="disk full"):
        save_checkpoint(path, {"run": 3})
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["checkpoint.pt"]


@pytest.mark.parametrize(
    ("signum", "raised"), [(signal.SIGTERM, SystemExit), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_during_save_checkpoint_waits_for_the_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, signum: int, raised: type[BaseException]
) -> None:
    # Unwound half-way, torch.save's zip writer raised a second error that hid the
    # interruption: a killed train.py ended with a traceback and status 1, not 143.
    path = tmp_path / "checkpoint.pt"
    real_save = torch.save

    def interrupted_save(data: Any, target: Any) -> None:
        signal.raise_signal(signum)
        real_save(data, target)

    def terminate(number: int, frame: object) -> None:
        raise SystemExit(128 + number)

    earlier = signal.signal(signal.SIGTERM, terminate)
    # Python's own Ctrl-C handler, even where the suite was started with SIGINT ignored.
    earlier_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(checkpoint_module.torch, "save", interrupted_save)
        with pytest.raises(raised):
            save_checkpoint(path, {"run": 1})
        assert signal.getsignal(signal.SIGTERM) is terminate
    finally:
        signal.signal(signal.SIGTERM, earlier)
        signal.signal(signal.SIGINT, earlier_int)
    assert torch.load(path, weights_only=True) == {"run": 1}
    assert leftovers(tmp_path) == []


def test_interruptions_are_held_only_in_the_main_thread() -> None:
    # Python runs signal handlers in the main thread only, and refuses to install them
    # elsewhere: another thread's block runs as it is, with the handlers untouched.
    seen: list[object] = []

    def elsewhere() -> None:
        with interruptions_held():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join(timeout=10)
    assert seen == [before]
    with interruptions_held():
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


# -- defect 3: bad output locations are refused before anything is parsed --------------------


class Untouchable:
    """A parser that fails the test as soon as anything uses it."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"parsing started (parser.{name}) before the output was checked")


def bad_output(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if kind == "missing_folder":
        return tmp_path / "missing" / "out.conllu"
    if kind == "folder":
        (tmp_path / "folder").mkdir()
        return tmp_path / "folder"
    if kind == "unwritable_folder":
        folder = tmp_path / "locked"
        folder.mkdir(mode=0o555)
        if os.access(folder, os.W_OK):  # root may write anyway: refuse as for a user
            real_open = os.open

            def refuse(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
                if str(path).startswith(str(folder)) and flags & os.O_CREAT:
                    raise PermissionError(13, "Permission denied", str(path))
                return real_open(path, flags, *args, **kwargs)

            monkeypatch.setattr(os, "open", refuse)
        return folder / "out.conllu"
    out = tmp_path / "readonly.conllu"
    out.write_text("keep me\n")
    out.chmod(0o444)
    if os.access(out, os.W_OK):  # root may write anyway
        monkeypatch.setattr(os, "access", lambda path, mode, **kw: Path(path) != out)
    return out


@pytest.mark.parametrize("kind", ["missing_folder", "folder", "unwritable_folder", "readonly"])
def test_bad_output_location_is_refused_before_parsing(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "in.conllu"
    source.write_text(GOOD)
    out = bad_output(kind, tmp_path, monkeypatch)
    with pytest.raises(InputError) as caught:
        predict_file(Untouchable(), source, out, device=CPU)  # type: ignore[arg-type]
    assert caught.value.source == str(out)
    if out.parent.is_dir():
        assert leftovers(out.parent) == []
    if kind == "readonly":
        assert out.read_text() == "keep me\n"


def test_predict_py_refuses_a_missing_output_folder_in_one_line(
    checkpoint: Path, tmp_path: Path
) -> None:
    out = tmp_path / "missing" / "out.conllu"
    result = predict(f"checkpoint={checkpoint}", "input=-", f"output={out}", stdin=b"w1 w2\n")
    message = result.stderr.decode()
    assert result.returncode == 2, message
    (error,) = [line for line in message.splitlines() if str(out) in line]
    assert "folder" in error and "Traceback" not in message and not result.stdout


# -- defect 4: invalid UTF-8 -------------------------------------------------------------------

BAD_UTF8 = b"# sent_id = latin\n1\tcaf\xe9\t_\t_\t_\t_\t_\t_\t_\t_\n\n"


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_invalid_utf8_names_source_line_and_sentence(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = GOOD.encode() + BAD_UTF8 + GOOD.encode()
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(InputError, match=r"not valid utf-8 \(byte 6 of the line\)") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 6, "latin")


def test_text_that_cannot_be_utf8_is_reported_too() -> None:
    """A caller's string holding a lone surrogate cannot be written as UTF-8 either."""
    lines = ["# sent_id = x\ud800\n", "1\tw\t_\t_\t_\t_\t0\troot\t_\t_\n"]
    with pytest.raises(ConlluError, match=r"not valid utf-8 \(byte 14 of the line\)") as caught:
        read_all(iter(lines), input_format="conllu")
    assert (caught.value.line, caught.value.sent_id) == (1, "x\\ud800")


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_lenient_skips_a_sentence_with_invalid_utf8(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = GOOD.encode() + BAD_UTF8.replace(b"latin", b"l\xe4tin") + GOOD.encode()
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True, report=report)
    assert [s.sent_id for s in sentences] == ["good", "good"]
    (skipped,) = report.skipped
    assert (skipped.line, skipped.sent_id) == (5, "l\\xe4tin")
    assert "not valid utf-8" in skipped.reason


@pytest.mark.parametrize("kind", ["path", "stdin"])
def test_invalid_utf8_in_plain_text_names_its_exact_line(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"w1 w2\n" * 300 + b"caf\xe9 au lait\n" + b"w3\n" * 300
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(InputError, match="not valid utf-8") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 301, "#301")


def test_predict_py_reports_invalid_utf8_on_stdin(checkpoint: Path) -> None:
    result = predict(f"checkpoint={checkpoint}", "input=-", stdin=b"w1 w2\nw3\n\xff\xfe w4\n")
    message = result.stderr.decode()
    assert result.returncode == 2, message
    assert "<stdin>, line 3, sentence #3: not valid utf-8" in message
    assert "Traceback" not in message and not result.stdout


# -- reader input: whitespace-only lines inside sentences, bare-CR files ----------------------

# A line of spaces and a tab between two word lines: it used to end the sentence, so lenient
# reading wrote "1 w1" as a whole sentence and strict reading blamed "sentence #3" at line 8.
SPLIT_BY_BLANK = (
    "# sent_id = split\n1\tw1\t_\t_\t_\t_\t_\t_\t_\t_\n \t\n2\tw2\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
)


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_whitespace_only_line_inside_a_sentence_is_reported_at_its_line(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = (GOOD + SPLIT_BY_BLANK + GOOD).encode()
    source, name = source_of(kind, data, tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match="only whitespace") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 7, "split")
    source, _ = source_of(kind, data, tmp_path, monkeypatch)
    report = ReadReport()
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True, report=report)
    assert "".join(s.to_conllu() for s in sentences) == GOOD + GOOD  # nothing of "split"
    assert [(s.line, s.sent_id) for s in report.skipped] == [(7, "split")]


@pytest.mark.parametrize("kind", ["path", "stdin", "file"])
def test_bare_cr_input_is_read_line_by_line_with_short_messages(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bare-CR file or standard input used to be one line: its first error quoted it all."""
    text = (GOOD + "# sent_id = bad\n" + "1\tw1\t_\n" * 300 + "\n" + GOOD).replace("\n", "\r")
    source, name = source_of(kind, text.encode(), tmp_path, monkeypatch)
    with pytest.raises(ConlluError, match="found 3") as caught:
        read_all(source)
    assert (caught.value.source, caught.value.line, caught.value.sent_id) == (name, 6, "bad")
    assert len(str(caught.value)) < len(name) + 100
    source, _ = source_of(kind, text.encode(), tmp_path, monkeypatch)
    with pytest.warns(UserWarning, match="skipped 1"):
        sentences = read_all(source, lenient=True)
    assert "".join(s.to_conllu() for s in sentences) == (GOOD + GOOD).replace("\n", "\r")


# -- standard output: all or nothing ------------------------------------------------------------


def test_bad_input_after_the_first_chunk_writes_nothing_to_standard_output(
    checkpoint: Path,
) -> None:
    bad = "# sent_id = bad\n1\tw1\t_\t_\t_\t_\t_\t_\t_\n\n"  # nine columns
    data = (GOOD * 5 + bad).encode()
    failed = predict(f"checkpoint={checkpoint}", "input=-", "output=-", "chunk_size=2", stdin=data)
    assert failed.returncode == 2
    assert failed.stdout == b""  # not the four sentences parsed before the error
    assert b"<stdin>, line 22, sentence bad" in failed.stderr
    whole = predict(f"checkpoint={checkpoint}", "input=-", "output=-", "chunk_size=2",
                    stdin=(GOOD * 5).encode())  # fmt: skip
    assert whole.returncode == 0 and whole.stdout.count(b"# sent_id = good") == 5
