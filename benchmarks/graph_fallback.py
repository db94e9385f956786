"""How much of a file a system's CUDA-graph variant leaves to the eager loop.

A system that is not graph-safe records its greedy decoding through a host-free variant
(``TransitionSystem.for_graphs``) that abandons the configurations it cannot decide without
the host (two-registers' register phases) or within a linear number of steps (swap's budget
of swaps); the abandoned sentences are decoded again eagerly after the replay.  Beam search
does the same for the sentences whose beam had an item abandoned at any step (or which the
budget left undecided).  How well that pays on a GPU depends on how many sentences a
*trained* parser abandons, which this script counts on the CPU: it runs the loop that a graph
records (:func:`neuralparse.search.graphs.fixed_length_greedy`, or
:func:`neuralparse.search.beam.fixed_length_beam` with ``--beam K``, eagerly) over a file, in
the batches prediction uses, and reports the sentences and words searched again.

    python -m benchmarks.graph_fallback --checkpoint CKPT [CKPT ...] [--input FILE] [--beam K]
        [--graph-rule abandon|tensor] [--batch-tokens N]

``--batch-tokens`` sets prediction's ``batch_tokens`` (``beam_batch_tokens`` with a beam, which
counts each sentence's ``K`` items): a GPU run may use larger batches than the default, and a
limit per step (two-registers' ``search_limit``) can bind more often in a larger batch.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import torch

from benchmarks.common import ROOT, save_json, shared_split, with_graph_rule
from neuralparse.io import read_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.prediction import PredictOptions, batches_by_length, max_word_chars
from neuralparse.runtime.checkpoint import load_parser
from neuralparse.search.beam import fixed_length_beam
from neuralparse.search.graphs import fixed_length_greedy
from neuralparse.systems.two_registers import GRAPH_RULES


def abandoned_share(
    checkpoint: Path,
    source: Path,
    beam: int | None = None,
    graph_rule: str | None = None,
    batch_tokens: int | None = None,
) -> dict[str, object]:
    """Sentences and words of ``source`` that the graph variant of ``checkpoint``'s system
    abandons (on the CPU, in prediction's batches, of ``batch_tokens`` words when given),
    greedy or with a beam of ``beam``; for two-registers with ``graph_rule``
    (``TwoRegisters(graph_rule=...)``) when given."""
    parser = load_parser(checkpoint)
    if graph_rule is not None:
        parser = with_graph_rule(parser, graph_rule)
    recorded = parser.system.for_graphs(beam=beam is not None)
    if recorded is None:
        search = "greedy" if beam is None else "beam search"
        raise SystemExit(f"{checkpoint}: {parser.system.name} has no {search} graphs")
    sentences = list(read_conllu(source))
    corpus = EncodedCorpus.build(
        sentences, parser.vocabs, max_word_chars(parser), parser.contextual
    )
    # Prediction's batches: with a beam, ``beam_batch_tokens`` counts each sentence's items.
    options = PredictOptions(search="greedy" if beam is None else "beam", beam_size=beam or 1)
    if batch_tokens is not None:
        options = replace(options, batch_tokens=batch_tokens, beam_batch_tokens=batch_tokens)
    abandoned_sentences = abandoned_words = batches = 0
    with torch.inference_mode():
        for ids in batches_by_length(corpus.lengths, options):
            batches += 1
            batch = corpus.batch(ids)
            table = parser.model.encode(batch)
            if beam is None:
                *_, abandoned = fixed_length_greedy(parser.model, recorded, table, batch.lengths)
            else:
                *_, abandoned = fixed_length_beam(
                    parser.model, recorded, table, batch.lengths, beam
                )
            abandoned_sentences += int(abandoned.sum())
            abandoned_words += int(batch.lengths[abandoned].sum())
    words = int(corpus.lengths.sum())
    return {
        "checkpoint": str(checkpoint),
        "system": parser.system.name,
        "search": "greedy" if beam is None else f"beam {beam}",
        "graph_rule": graph_rule,
        "input": str(source),
        "sentences": len(sentences),
        "words": words,
        "batches": batches,
        "batch_words": options.batch_words,
        "abandoned_sentences": abandoned_sentences,
        "abandoned_words": abandoned_words,
        "abandoned_sentence_share": abandoned_sentences / max(1, len(sentences)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, nargs="+", required=True)
    parser.add_argument("--input", type=Path, help="CoNLL-U file (default: EWT test)")
    parser.add_argument("--beam", type=int, help="beam size (default: greedy decoding)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch-tokens", type=int, help="words per batch (default: prediction's)")
    parser.add_argument(
        "--graph-rule", choices=GRAPH_RULES, help="two-registers: the variant's graph_rule"
    )
    parser.add_argument(
        "--json-out", type=Path, default=ROOT / "outputs/benchmarks/graph_fallback.json"
    )
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    source = args.input or shared_split("UD_English-EWT", "test")
    rows = [
        abandoned_share(path, source, args.beam, args.graph_rule, args.batch_tokens)
        for path in args.checkpoint
    ]
    print("system         search  sentences  abandoned   share  words abandoned  checkpoint")
    for row in rows:
        print(
            f"{row['system']:<14} {row['search']:<7} {row['sentences']:>9} "
            f"{row['abandoned_sentences']:>10} "
            f"{row['abandoned_sentence_share']:>7.2%} {row['abandoned_words']:>16}  "
            f"{row['checkpoint']}"
        )
    save_json({"input": str(source), "runs": rows}, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
