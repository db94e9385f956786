"""Prediction with worker processes (neuralparse.prediction.pipeline): the bytes, messages and
reports of the single-process path, and no worker left behind."""

from __future__ import annotations

import dataclasses
import logging
import os
import random
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import neuralparse.io.pieces as pieces_module
from neuralparse.config import ModelConfig
from neuralparse.errors import InputError
from neuralparse.io import ReadReport, SkippedSentencesWarning, iter_conllu, iter_text
from neuralparse.io.pieces import cut_pieces, read_piece
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import vocabularies_for
from neuralparse.oracle import training_labels
from neuralparse.prediction import PredictionReport, PredictOptions, predict_file, worker_count
from neuralparse.prediction.pipeline import EncodedPiece, Segment, assemble
from neuralparse.runtime.checkpoint import LoadedParser, checkpoint_data, save_checkpoint
from neuralparse.systems import get_system
from tests.killing import default_signals
from tests.parser_fixtures import make_corpus
from tests.test_predict import BAD_CONLLU, RICH_CONLLU

REPO = Path(__file__).resolve().parents[1]
CPU = torch.device("cpu")
WORD = "1\tw\t_\t_\t_\t_\t_\t_\t_\t_"


def untrained_parser(system: str = "arc_eager_pp", tag_input: str = "none") -> LoadedParser:
    """A small random parser (a tagging one unless ``tag_input="gold"``): its trees are
    nonsense, but the same on every path, which is what these tests compare."""
    sentences = make_corpus(60, seed=2, projective=False)
    config = ModelConfig(
        word_dim=16, char_dim=8, char_out=8, upos_dim=4, xpos_dim=4, feats_dim=4,
        lstm_layers=1, lstm_hidden=16, mlp_hidden=16, min_word_count=1, tag_input=tag_input,
    )  # fmt: skip
    parsing = get_system(system, training_labels(system, sentences))
    vocabs = vocabularies_for(sentences, config)
    torch.manual_seed(0)
    model = ParserModel.for_system(vocabs, config, parsing).eval()
    data = {"config": {"model": dataclasses.asdict(config)}}
    return LoadedParser(model, parsing, vocabs, data)


@pytest.fixture(scope="module")
def parser() -> LoadedParser:
    return untrained_parser()


def rich_input(count: int) -> str:
    """``count`` sentences: generated ones and the comments, multiword tokens, empty nodes,
    CRLF endings and untagged words of ``RICH_CONLLU``, with a missing final blank line."""
    generated = make_corpus(count, seed=7, max_words=14)
    blocks = []
    for index, sentence in enumerate(generated):
        if index % 5 == 0:
            blocks.append(RICH_CONLLU if RICH_CONLLU.endswith("\n\n") else RICH_CONLLU + "\n")
        blocks.append(dataclasses.replace(sentence, heads=None).to_conllu())
    return "".join(blocks).rstrip("\n") + "\n"


def parse(
    parser: LoadedParser, source: Path, out: Path, **options: object
) -> tuple[bytes, PredictionReport]:
    input_format = str(options.pop("input_format", "auto"))
    lenient = bool(options.pop("lenient", False))
    report = predict_file(
        parser, source, out, PredictOptions(**options), device=CPU,  # type: ignore[arg-type]
        input_format=input_format, lenient=lenient,
    )  # fmt: skip
    return out.read_bytes(), report


# -- cutting and reading pieces -------------------------------------------------------------

LINES = [WORD + "\n", WORD + "\r\n", WORD + "\r", "# sent_id = a\n", "# c\r\n", "\n", "\r\n", "\r",
         "  \n", " \t\r\n", "\ufeff" + WORD + "\n", "\f\n", "2\tx\t_\t_\t_\t_\t_\t_\t_\t_\n",
         "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_\n", "1.1\te\t_\t_\t_\t_\t_\t_\t_\t_\n", "bad line\n",
         "caf\xe9\n", "\ufeff\n", "  " + WORD + "\n"]  # fmt: skip
TEXT_LINES = ["a b c\n", "\n", "  \n", "\ufeff\n", "\ufeffx y\n", "x\r\n", "y\r", "\xa0\n",
              "z\u2028w\n", "q", "\t\n", "caf\xe9\n"]  # fmt: skip


def whole_file(path: Path, fmt: str, lenient: bool) -> tuple[object, ...]:
    """What the single-process readers give: the sentences, their lines and ids, the skips or
    the error."""
    report = ReadReport()
    try:
        if fmt == "conllu":
            read = list(iter_conllu(path, lenient=lenient, check_tree=False, report=report))
        else:
            read = list(iter_text(path))
    except InputError as error:
        if "no valid sentences" in str(error) or "no sentences (empty file)" in str(error):
            return [], list(report.skipped), None  # the pipeline asks the reader for these
        return None, None, str(error)
    return [(s.to_conllu(), s.line, s.sent_id) for s in read], list(report.skipped), None


def in_pieces(path: Path, fmt: str, lenient: bool, size: int) -> tuple[object, ...]:
    pieces = list(cut_pieces(path, fmt, size))
    assert b"".join(piece.data for piece in pieces) == path.read_bytes()
    assert all(piece.sentences >= size for piece in pieces[:-1])  # more: a U+FEFF line
    sentences: list[tuple[str, int, str | None]] = []
    skipped = []
    try:
        for piece in pieces:
            read = read_piece(piece, fmt, str(path), lenient=lenient)
            sentences += [(s.to_conllu(), s.line, s.sent_id) for s in read.sentences]
            skipped += read.skipped
    except InputError as error:
        return None, None, str(error)
    return sentences, skipped, None


def test_pieces_read_as_the_whole_file_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Random files of awkward lines (line endings of every kind, byte order marks, form
    feeds, bad UTF-8, malformed lines), cut with tiny and large read blocks."""
    warnings.simplefilter("ignore", SkippedSentencesWarning)
    rng = random.Random(1)
    for trial in range(400):
        monkeypatch.setattr(pieces_module, "_BLOCK_BYTES", [1, 2, 3, 5, 17, 1 << 22][trial % 6])
        fmt = "conllu" if trial % 2 else "text"
        text = "".join(rng.choice(LINES if fmt == "conllu" else TEXT_LINES) for _ in range(20))
        data = (("\ufeff" if trial % 5 == 0 else "") + text).encode()
        path = tmp_path / f"in{trial}"
        path.write_bytes(data.replace(b"\xc3\xa9", b"\xe9") if trial % 7 == 0 else data)
        for lenient in (False, True) if fmt == "conllu" else (False,):
            expected = whole_file(path, fmt, lenient)
            for size in (1, 3):
                assert in_pieces(path, fmt, lenient, size) == expected, (trial, size, data)


def test_assembled_pieces_encode_as_the_whole_chunk() -> None:
    """Chunks made of whole and partial pieces, for a tagging model's vocabularies and a
    gold-tag model's (FEATS pairs, two-dimensional)."""
    corpus = make_corpus(40, seed=4, max_words=9)
    for tag_input in ("none", "gold"):
        loaded = untrained_parser("arc_eager", tag_input)
        pieces = []
        for index, start in enumerate(range(0, 40, 7)):
            sentences = corpus[start : start + 7]
            piece = pieces_module.Piece(index, b"", 1, start, len(sentences))
            read = pieces_module.PieceSentences(sentences, [])
            pieces.append(
                EncodedPiece.of(
                    piece,
                    read,
                    lambda s: EncodedCorpus.build(s, loaded.vocabs, 24),  # noqa: B023
                    lambda s: np.zeros((len(s), 0), dtype=bool),
                )
            )
        for first, last in ((0, 40), (3, 19), (10, 11), (7, 14)):
            segments = [
                Segment(p, max(first - 7 * p.index, 0), min(last - 7 * p.index, p.sentences))
                for p in pieces
                if 7 * p.index < last and 7 * p.index + p.sentences > first
            ]
            assembled = assemble(segments)
            expected = EncodedCorpus.build(corpus[first:last], loaded.vocabs, 24)
            for field in dataclasses.fields(EncodedCorpus):
                got, want = getattr(assembled, field.name), getattr(expected, field.name)
                assert (got is None) == (want is None), field.name
                if want is not None:
                    assert got.dtype == want.dtype and torch.equal(got, want), field.name


# -- the same output, in-process ------------------------------------------------------------


@pytest.mark.parametrize(
    ("search", "chunk_size", "workers", "first_chunk_size"),
    [
        ("greedy", 3, 1, None),
        ("greedy", 7, 3, None),
        ("greedy", 10_000, 2, None),
        ("beam", 5, 2, None),
        ("greedy", 16, 2, 1),  # growing first chunks of 1, 2, 4 and 8 sentences
    ],
)
def test_workers_write_the_bytes_of_one_process(
    parser: LoadedParser,
    tmp_path: Path,
    search: str,
    chunk_size: int,
    workers: int,
    first_chunk_size: int | None,
) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes(rich_input(40).encode())
    options = {
        "search": search,
        "beam_size": 3,
        "chunk_size": chunk_size,
        "first_chunk_size": first_chunk_size,
        "batch_tokens": 40,
    }
    single, single_report = parse(parser, source, tmp_path / "one.conllu", workers=0, **options)
    piped, report = parse(parser, source, tmp_path / "many.conllu", workers=workers, **options)
    assert piped == single
    assert (report.sentences, report.words) == (single_report.sentences, single_report.words)
    assert report.summary().split(" in ")[0] == single_report.summary().split(" in ")[0]
    assert report.first_output is not None and report.first_output <= report.seconds + 1


@pytest.mark.parametrize(("tags", "deps"), [("predict", "keep"), ("keep", "clear")])
def test_text_input_and_other_modes(
    parser: LoadedParser, tmp_path: Path, tags: str, deps: str
) -> None:
    source = tmp_path / "in.txt"
    source.write_text("\ufeffw1 w2 w3\n\n  w4\tw5 zzz \r\nw7\n" * 9, encoding="utf-8")
    options = {"chunk_size": 4, "tags": tags, "deps": deps, "input_format": "text"}
    single, _ = parse(parser, source, tmp_path / "one.conllu", workers=0, **options)
    piped, _ = parse(parser, source, tmp_path / "many.conllu", workers=2, **options)
    assert piped == single


def test_an_error_in_the_middle_is_the_one_process_error(
    parser: LoadedParser, tmp_path: Path
) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes((rich_input(12) + "\n" + BAD_CONLLU + rich_input(12)).encode())
    messages = []
    for workers in (0, 2):
        out = tmp_path / f"out{workers}.conllu"
        with pytest.raises(InputError) as raised:
            parse(parser, source, out, workers=workers, chunk_size=3)
        messages.append(str(raised.value))
        assert not out.exists() and not list(tmp_path.glob(".out*.partial"))
    assert messages[0] == messages[1] and "sentence broken" in messages[0]


def test_lenient_skips_are_reported_as_in_one_process(parser: LoadedParser, tmp_path: Path) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes((rich_input(12) + "\n" + BAD_CONLLU * 3 + rich_input(12)).encode())
    runs = []
    for workers in (0, 2):
        with pytest.warns(SkippedSentencesWarning) as warned:
            output, report = parse(
                parser, source, tmp_path / f"out{workers}.conllu", workers=workers,
                chunk_size=4, lenient=True,
            )  # fmt: skip
        runs.append((output, report.read.skipped, report.summary().split(" in ")[0]))
        runs[-1] += ([str(w.message) for w in warned],)
    assert runs[0] == runs[1]
    assert len(runs[0][1]) == 3


def test_the_gold_tags_warning_comes_once(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    gold = untrained_parser("arc_eager", tag_input="gold")
    source = tmp_path / "in.txt"
    source.write_text("w1 w2\nw3\n" * 10, encoding="utf-8")
    outputs = []
    for workers in (0, 2):
        caplog.clear()
        # The level set here, not left to whatever earlier tests did to the loggers.
        with caplog.at_level(logging.WARNING, logger="neuralparse.predict"):
            output, _ = parse(gold, source, tmp_path / "out.conllu", workers=workers, chunk_size=3)
        outputs.append(output)
        assert sum("NEEDS GOLD TAGS" in r.getMessage() for r in caplog.records) == 1
    assert outputs[0] == outputs[1]


def test_cleared_enhanced_graphs_are_said_once_and_only_when_there(
    parser: LoadedParser, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def sentence(deps: str = "_", empty_node: str = "") -> str:
        return f"1\tw1\t_\t_\t_\t_\t_\t_\t{deps}\t_\n{empty_node}2\tw2\t_\t_\t_\t_\t_\t_\t_\t_\n\n"

    plain, deps = sentence(), sentence(deps="0:root")
    node = sentence(empty_node="1.1\tw3\t_\t_\t_\t_\t_\t_\t_\t_\n")
    cases = {"none": plain * 9, "deps": plain * 7 + deps + plain, "node": plain * 8 + node}
    for name, text in cases.items():
        source = tmp_path / f"{name}.conllu"
        source.write_text(text, encoding="utf-8")
        for workers, deps_mode in ((0, "clear"), (2, "clear"), (0, "keep")):
            caplog.clear()
            with caplog.at_level(logging.WARNING, logger="neuralparse.predict"):
                parse(parser, source, tmp_path / "o.conllu", workers=workers, chunk_size=3,
                      deps=deps_mode)  # fmt: skip
            said = [r.getMessage() for r in caplog.records if "enhanced graphs" in r.getMessage()]
            expected = 1 if name != "none" and deps_mode == "clear" else 0
            assert len(said) == expected, (name, workers, deps_mode, said)
            assert all(m.startswith(f"{source}: ") for m in said)


def test_workers_are_for_files_and_auto_for_cuda(tmp_path: Path) -> None:
    source = tmp_path / "in.conllu"
    source.write_bytes(b"x" * 3_000_000)
    explicit, auto = PredictOptions(workers=3), PredictOptions()
    assert worker_count(explicit, source, CPU) == 3
    assert worker_count(explicit, "-", CPU) == 0
    assert worker_count(explicit, source, CPU, input_format="raw") == 0
    assert worker_count(auto, source, CPU) == 0  # the CPU's cores decode
    by_size = 3_000_000 // 262_144  # one per 256 KiB, at most 12, leaving two cores
    expected = max(0, min(12, (os.cpu_count() or 1) - 2, by_size))
    assert worker_count(auto, source, torch.device("cuda")) == expected
    for bad in (-1, "many", 1.5, True):
        with pytest.raises(InputError, match="workers"):
            PredictOptions(workers=bad)  # type: ignore[arg-type]


# -- stopping -------------------------------------------------------------------------------


def children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        text = (task / "children").read_text() if (task / "children").exists() else ""
        found.update(int(child) for child in text.split())
    return found


def running(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_leaves_no_worker_and_no_output(
    parser: LoadedParser, tmp_path: Path, signum: int
) -> None:
    checkpoint = tmp_path / "model.pt"
    save_checkpoint(
        checkpoint,
        checkpoint_data(
            model=parser.model, system=parser.system, system_options={}, vocabs=parser.vocabs,
            config=parser.checkpoint["config"],
        ),
    )  # fmt: skip
    source, out = tmp_path / "in.conllu", tmp_path / "out.conllu"
    source.write_bytes((rich_input(40) + "\n").encode() * 200)
    command = [sys.executable, str(REPO / "predict.py"), f"checkpoint={checkpoint}",
               f"input={source}", f"output={out}", "device=cpu", "workers=2", "chunk_size=50",
               "progress=false", "threads=1"]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=REPO, stderr=subprocess.PIPE, preexec_fn=default_signals
    )
    try:
        deadline = time.monotonic() + 60
        while len(workers := children(process.pid)) < 2 and time.monotonic() < deadline:
            assert process.poll() is None, process.stderr.read().decode()  # type: ignore[union-attr]
            time.sleep(0.05)
        assert len(workers) >= 2
        time.sleep(0.5)  # well into parsing
        process.send_signal(signum)
        process.wait(timeout=60)
    finally:
        process.kill()
        process.wait()
    assert process.returncode in (128 + signum, -signum), process.stderr.read().decode()  # type: ignore[union-attr]
    deadline = time.monotonic() + 5
    while any(running(worker) for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(running(worker) for worker in workers)
    assert not out.exists() and not list(tmp_path.glob(".out.conllu.*.partial"))
