"""Encoder and greedy-decoding seconds of one file in prediction's batches, with 1 and 2 torch
threads, in one process: run it once per OpenMP setting (openmp_parts_in_process.txt).

    env OMP_WAIT_POLICY=PASSIVE python openmp_parts_in_process.py CHECKPOINT INPUT.conllu
"""

import os
import sys
import time
from pathlib import Path

from neuralparse.runtime.memory import bound_native_heap, bound_primitive_cache

bound_primitive_cache()
bound_native_heap()

import torch  # noqa: E402  # after the settings above, as in predict.py

from neuralparse import Parser  # noqa: E402
from neuralparse.io import read_conllu  # noqa: E402
from neuralparse.model.inputs import EncodedCorpus  # noqa: E402
from neuralparse.prediction import PredictOptions  # noqa: E402
from neuralparse.prediction.decoding import batches_by_length  # noqa: E402
from neuralparse.search.greedy import greedy_decode_counted  # noqa: E402

parser = Parser.load(sys.argv[1], device="cpu").loaded
model = parser.model
sentences = read_conllu(Path(sys.argv[2]), check_tree=False)
corpus = EncodedCorpus.build(sentences, parser.vocabs, model.config.max_word_chars, None)
char_vectors = model.char_vectors(corpus, torch.device("cpu"))
batches = [
    corpus.batch(ids, char_vectors) for ids in batches_by_length(corpus.lengths, PredictOptions())
]
seconds: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
for _ in range(4):
    for threads in (1, 2):
        torch.set_num_threads(threads)
        encoder = decoding = 0.0
        with torch.inference_mode():
            for batch in batches:
                start = time.perf_counter()
                table, _ = model.encode_and_tag(batch)
                encoded = time.perf_counter()
                greedy_decode_counted(model, parser.system, batch, table)
                encoder += encoded - start
                decoding += time.perf_counter() - encoded
        seconds[threads].append((round(encoder, 3), round(decoding, 3)))
print(os.environ.get("OMP_WAIT_POLICY"), os.environ.get("GOMP_SPINCOUNT"))
for threads, rounds in seconds.items():
    print(
        " threads", threads,
        "enc", sorted(r[0] for r in rounds),
        "greedy", sorted(r[1] for r in rounds),
    )  # fmt: skip
