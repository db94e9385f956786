"""Pictures of CoNLL-U trees from the command line: ``python -m neuralparse.show``.

``python -m neuralparse.show FILE.conllu [--sentence ID]... [--gold GOLD.conllu] -o OUT`` draws
the trees of FILE with :mod:`neuralparse.pictures`, every sentence or those named by sent_id
(``#N``, the block's ordinal, for a sentence without ``# sent_id``).  The suffix of OUT picks
the format: ``.html`` holds every selected sentence, its id and text as heading; ``.svg`` and
``.png`` need exactly one.  ``--gold`` marks the arcs that differ from the gold file, which
must hold the same sentences with the same words.  A PNG is a screenshot by a headless
Chromium or Chrome (``--browser``, else the first of :data:`BROWSERS` on PATH), at twice the
picture's size and cropped to it, for READMEs and slides.

Outputs are written atomically (a temporary file renamed over OUT, removed when the run fails
or is killed); problems, a bad command line included, are reported in one line on stderr with
exit status 2 (:mod:`neuralparse.runtime.cli`, as every command of the package).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from neuralparse.errors import InputError
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.sources import write_atomically
from neuralparse.pictures import Picture, draw, html_page
from neuralparse.runtime.cli import (
    USER_ERROR,
    ArgumentParser,
    exit_on_sigterm,
    report,
    run_program,
)

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
"""Browser commands looked up on PATH for PNG output, in this order."""

PNG_SCALE = 2  # device pixels per CSS pixel: sharp on high-density screens
BROWSER_TIMEOUT_S = 120
FORMATS = {".html": "html", ".htm": "html", ".svg": "svg", ".png": "png"}


def read_sentences(path: str) -> list[Sentence]:
    """The sentences of a CoNLL-U file, trees not required (HEAD ``_`` draws the words only)."""
    try:
        return read_conllu(path, check_tree=False)
    except OSError as error:
        raise InputError(f"cannot read the file: {error.strerror}", source=path) from None


def select(sentences: Sequence[Sentence], ids: Sequence[str], source: str) -> list[int]:
    """Indices of the sentences whose sent_id is in ``ids`` (in the order of ``ids``), or of
    every sentence when ``ids`` is empty."""
    if not ids:
        return list(range(len(sentences)))
    where: dict[str, list[int]] = {}
    for index, sentence in enumerate(sentences):
        where.setdefault(sentence.sent_id or f"#{index + 1}", []).append(index)
    chosen: list[int] = []
    for sent_id in ids:
        if sent_id not in where:
            first = ", ".join(list(where)[:3])
            raise InputError(
                f"no sentence with id {sent_id!r} among its {len(sentences)} (ids like {first})",
                source=source,
            )
        chosen.extend(where[sent_id])
    return chosen


def find_browser(given: str | None) -> str:
    """The browser command for PNG output: ``given``, or the first of :data:`BROWSERS` found."""
    candidates = [given] if given else list(BROWSERS)
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return found
    wanted = given or "Chromium or Chrome (" + ", ".join(BROWSERS) + ")"
    raise InputError(f"PNG output needs {wanted} on PATH; give --browser or write .svg/.html")


def render_png(picture: Picture, browser: str) -> bytes:
    """A screenshot of ``picture`` by the headless ``browser``, :data:`PNG_SCALE` times its
    size.  The window is the picture's size, so the screenshot is exactly the picture."""
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><style>'
        "html,body{margin:0;background:#fff}svg{display:block}</style></head>"
        f"<body>{picture.svg}</body></html>"
    )
    with tempfile.TemporaryDirectory(prefix="neuralparse-show-") as folder:
        html_path = Path(folder) / "picture.html"
        png_path = Path(folder) / "picture.png"
        html_path.write_text(page, encoding="utf-8")
        command = [
            browser,
            "--headless",
            # The sandbox cannot start as root (containers, CI); the page is our own file.
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            f"--user-data-dir={Path(folder) / 'profile'}",
            f"--force-device-scale-factor={PNG_SCALE}",
            f"--window-size={picture.width},{picture.height}",
            f"--screenshot={png_path}",
            html_path.as_uri(),
        ]
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            raise InputError(f"{browser} took over {BROWSER_TIMEOUT_S} s to draw the PNG") from None
        except OSError as error:
            raise InputError(f"cannot run {browser}: {error.strerror}") from None
        if done.returncode != 0 or not png_path.is_file():
            lines = done.stderr.strip().splitlines()
            detail = lines[-1] if lines else "no message"
            raise InputError(f"{browser} did not draw the PNG (exit {done.returncode}): {detail}")
        return png_path.read_bytes()


def show(
    file: str,
    output: str,
    *,
    sentence_ids: Sequence[str] = (),
    gold: str | None = None,
    browser: str | None = None,
) -> int:
    """Draw the selected sentences of ``file`` into ``output``; returns how many were drawn.

    Raises :class:`InputError` for every problem the command reports (see the module).
    """
    out = Path(output)
    fmt = FORMATS.get(out.suffix.lower())
    if fmt is None:
        raise InputError("output must end in .html, .svg or .png", source=output)
    browser_command = find_browser(browser) if fmt == "png" else ""
    sentences = read_sentences(file)
    chosen = select(sentences, sentence_ids, file)
    golds: list[Sentence] | None = None
    if gold is not None:
        gold_sentences = read_sentences(gold)
        if len(gold_sentences) != len(sentences):
            raise InputError(
                f"sentence count {len(gold_sentences)} differs from {file}'s {len(sentences)}",
                source=gold,
            )
        golds = [gold_sentences[i] for i in chosen]
    shown = [sentences[i] for i in chosen]
    if fmt == "html":
        write_atomically(out, html_page(shown, golds, title=Path(file).name))
        return len(shown)
    if len(shown) != 1:
        raise InputError(
            f"{fmt.upper()} output holds one sentence, {len(shown)} selected: pick one with "
            "--sentence ID or write .html",
            source=output,
        )
    picture = draw(shown[0], golds[0] if golds is not None else None)
    if fmt == "svg":
        write_atomically(out, picture.svg + "\n")
    else:
        write_atomically(out, render_png(picture, browser_command))
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m neuralparse.show",
        description="Draw dependency trees of a CoNLL-U file as HTML, SVG or PNG; crossing "
        "arcs have colours of their own, non-projective arcs glow, and with --gold the arcs "
        "that differ from the gold tree are marked.",
    )
    parser.add_argument("file", metavar="FILE", help="CoNLL-U file")
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUT",
        help="OUT.html (every selected sentence), OUT.svg or OUT.png (one sentence)",
    )
    parser.add_argument(
        "--sentence",
        action="append",
        default=[],
        metavar="ID",
        help="draw the sentence with this sent_id (#N for the N-th block without one); "
        "repeatable; default: every sentence",
    )
    parser.add_argument(
        "--gold",
        metavar="GOLD",
        help="gold CoNLL-U of the same sentences: mark wrong heads and labels",
    )
    parser.add_argument(
        "--browser",
        metavar="CMD",
        help="Chromium/Chrome command for .png (default: the first of "
        + ", ".join(BROWSERS)
        + " on PATH)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    exit_on_sigterm()  # a killed run unwinds, and `replacing` removes its temporary output
    try:
        show(
            args.file,
            args.output,
            sentence_ids=args.sentence,
            gold=args.gold,
            browser=args.browser,
        )
    except (InputError, OSError) as error:
        report(str(error))
        return USER_ERROR
    return 0


if __name__ == "__main__":
    run_program(main)
