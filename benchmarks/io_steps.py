"""Time CoNLL-U reading and writing here against pyconll on one file.

``python -m benchmarks.io_steps FILE`` prints seconds for each step and whether each library's
read -> write round trip reproduces the file byte for byte.  The numbers quoted in
:mod:`neuralparse.io.conllu` come from this script.
"""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

import pyconll

from neuralparse.io import read_conllu, write_conllu


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    args = parser.parse_args(argv)
    original = args.file.read_bytes().decode("utf-8")

    start = time.perf_counter()
    sentences = read_conllu(args.file)
    read_s = time.perf_counter() - start
    buffer = io.StringIO(newline="")
    start = time.perf_counter()
    write_conllu(sentences, buffer)
    write_s = time.perf_counter() - start
    same = buffer.getvalue() == original
    print(
        f"neuralparse.io: {len(sentences)} sentences, read {read_s:.2f} s, "
        f"write {write_s:.2f} s, byte-identical {same}"
    )

    start = time.perf_counter()
    corpus = pyconll.load_from_file(str(args.file))
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    written = corpus.conll()
    write_s = time.perf_counter() - start
    same = written + "\n" == original or written == original
    print(
        f"pyconll {pyconll.__version__}: {len(corpus)} sentences, read {read_s:.2f} s, "
        f"write {write_s:.2f} s, byte-identical {same}"
    )


if __name__ == "__main__":
    main()
