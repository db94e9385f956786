"""Parsing throughput, end to end from file to file, for every system: greedy and beam search.

For each system this parses a CoNLL-U file (default English-EWT test under the data root,
gold tokenization) with
:func:`neuralparse.prediction.predict_file` exactly as ``predict.py`` does: read, encode,
batch by length, search on the state batch, write CoNLL-U.  It reports words/s, sentences/s,
seconds, peak memory and the beam/greedy time ratio (the project's targets: >= 15,000 words/s
greedy with 2 CPU threads for arc_eager and two_registers; beam 8 at most 3x greedy time), prints a
table and saves JSON.

Without ``--checkpoint`` each system gets an *untrained* model of the default preset
(``neuralparse/conf/model/default.yaml``: the joint tagger-parser) with vocabularies and labels
from the training file next to the input: speed depends on the sizes, not on the weight values,
except through the number of transitions for systems whose derivation length varies (swap's SWAPs,
the planar systems' register moves), which a random scorer may inflate (two-registers also
decides its register phases on the slow exact path of its legal mask, so an untrained model
that stores into registers often is much slower than a trained one).  ``--checkpoint A B ...``
times trained parsers instead, each on its own system.  The JSON says which models it used.

Peak memory on CPU is the process's resident high-water mark (``ru_maxrss``), which never goes
down, so later rows include earlier ones; on CUDA it is ``torch.cuda.max_memory_allocated``
per run.

Each row also gives the parse time alone (``parse s``: the sentences already read, no
files: input encoding, encoder, search and trees back into sentences), which is what
published figures of other parsers measure, with the graphs of the input's batch shapes
recorded beforehand for the systems that allow them (:mod:`neuralparse.search.graphs`), as
a long corpus replays them.  Before it the input is parsed twice with the same graph cache:
the first parse is timed apart (``cold s``: it allocates and, on CUDA, decodes each bucket's
first batch eagerly), the second records the graphs.  The file run is a fresh
``predict_file`` with graphs of its own, as ``predict.py`` is: a bucket that comes back in
the file replays, one seen once is decoded eagerly.
``--compare-graphs`` adds ``greedy-eager`` and ``beam-eager`` rows per system (graphs off) in
the same run, and checks that both wrote the same bytes.

``--graph-rules abandon tensor`` runs two-registers once per value of its CUDA-graph
variant's ``graph_rule`` (:class:`~neuralparse.systems.two_registers.TwoRegisters`), its rows
tagged ``[abandon]``, ``[tensor]``: what a GPU's graphs gain or lose by deciding the register
phases in tensors instead of decoding those sentences again eagerly.

``--repeats N`` times every file run and in-memory parse N times and keeps the fastest: other
work on the machine only ever adds time, so on a shared machine the minimum is the figure
that repeats (default 1).

``--profile SYSTEM`` parses the file once with the library's greedy loop timed through its
``timer`` hook (:func:`neuralparse.search.greedy.greedy_decode_counted`) and splits the time
into reading, input encoding (vocabulary lookups), encoder, scorer, state operations
(features, legal mask, apply, terminal test), output (trees back into sentences) and writing.

    python -m benchmarks.throughput [--systems arc_eager two_registers] [--limit 500]
        [--threads 2] [--device cpu|cuda] [--beam 8] [--checkpoint PATH ...] [--profile arc_eager]
        [--batch-size 4096 --batch-tokens 200000] [--compare-graphs] [--repeats 3]
        [--graph-rules abandon tensor]
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch

from benchmarks.common import (
    ROOT,
    Timers,
    save_json,
    shared_split,
    synchronize,
    untrained_parser,
    with_graph_rule,
)
from neuralparse.io import Sentence, read_conllu, write_conllu
from neuralparse.model.inputs import EncodedCorpus
from neuralparse.prediction import (
    PredictOptions,
    batches_by_length,
    chunks,
    parse_sentences,
    predict_file,
)
from neuralparse.runtime.checkpoint import LoadedParser, load_parser
from neuralparse.runtime.devices import describe_machine
from neuralparse.search.graphs import GraphCache
from neuralparse.search.greedy import greedy_decode_counted
from neuralparse.systems import SYSTEMS
from neuralparse.systems.two_registers import GRAPH_RULES

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "throughput.json"


# -- models ----------------------------------------------------------------------------------


def vocabulary_source(input_path: Path) -> Path:
    """The training file beside ``input_path`` when there is one, else the input itself."""
    train = input_path.with_name("train.conllu")
    return train if train.is_file() else input_path


def profile_file(
    parser: LoadedParser,
    input_path: Path,
    output_path: Path,
    options: PredictOptions,
    device: torch.device,
    limit: int | None,
) -> tuple[dict[str, float], int]:
    """Seconds per part of one greedy file-to-file parse (see the module docstring) and the
    transitions taken (their number varies by system and scorer: it explains speed)."""
    timers = Timers(device)
    with timers("read"):
        sentences = read_conllu(input_path, check_tree=False)[:limit]
    with timers("input encoding"):
        corpus = EncodedCorpus.build(
            sentences, parser.vocabs, parser.model.config.max_word_chars, parser.contextual
        )
        groups = batches_by_length(corpus.lengths, options)
        batches = [corpus.batch(ids).to(device) for ids in groups]
    parsed: list[Sentence | None] = [None] * len(sentences)
    transitions = 0
    for ids, batch in zip(groups, batches, strict=True):
        heads, labels, steps = greedy_decode_counted(
            parser.model, parser.system, batch, timer=timers
        )
        transitions += int(steps.sum())
        with timers("output"):
            heads_rows, label_rows = heads.cpu().tolist(), labels.cpu().tolist()
            for row, index in enumerate(ids.tolist()):
                sentence = sentences[index]
                n = len(sentence)
                names = [parser.system.labels[k] for k in label_rows[row][1 : n + 1]]
                tree = parser.system.output_tree(heads_rows[row][1 : n + 1], names)
                parsed[index] = sentence.with_tree(*tree)
    with timers("write"):
        write_conllu(parsed, output_path)  # type: ignore[arg-type]  # every index was filled
    return timers.seconds, transitions


# -- measurements -----------------------------------------------------------------------------


@dataclass
class Run:
    system: str
    search: str
    sentences: int
    words: int
    seconds: float
    peak_memory_mb: float
    parse_seconds: float
    cold_seconds: float

    @property
    def words_per_s(self) -> float:
        return self.words / max(self.seconds, 1e-9)

    @property
    def sentences_per_s(self) -> float:
        return self.sentences / max(self.seconds, 1e-9)


def peak_memory_mb(device: torch.device) -> float:
    if device.type == "cuda":
        return torch.cuda.max_memory_allocated(device) / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def limited_input(input_path: Path, limit: int | None, workdir: Path) -> Path:
    """``input_path`` itself, or a copy of its first ``limit`` sentences in ``workdir``."""
    if limit is None:
        return input_path
    subset = workdir / f"first{limit}.conllu"
    write_conllu(read_conllu(input_path, check_tree=False)[:limit], subset)
    return subset


def timed_parse(
    parser: LoadedParser,
    sentences: Sequence[Sentence],
    options: PredictOptions,
    device,
    graphs: GraphCache,
) -> float:
    """Seconds to parse sentences already in memory (no reading, no writing), chunk by chunk
    as ``predict_file`` does, so that both make the same batches."""
    synchronize(device)
    start = time.perf_counter()
    for chunk in chunks(sentences, options.chunk_sizes(device)):
        parse_sentences(parser, chunk, options, device=device, graphs=graphs)
    synchronize(device)
    return time.perf_counter() - start


def time_parse(
    parser: LoadedParser,
    input_path: Path,
    output_path: Path,
    options: PredictOptions,
    device: torch.device,
    label: str | None = None,
    repeats: int = 1,
) -> Run:
    """The fastest of ``repeats`` end-to-end ``predict_file`` runs and of as many parses of
    the same sentences in memory, after two warm-up parses of the input (the first timed,
    ``cold_seconds``; the second records the graphs that the timed parses replay)."""
    sentences = read_conllu(input_path, check_tree=False)
    graphs = GraphCache()
    cold = timed_parse(parser, sentences, options, device, graphs)
    timed_parse(parser, sentences, options, device, graphs)
    parse_seconds = min(
        timed_parse(parser, sentences, options, device, graphs) for _ in range(repeats)
    )
    # The file run starts without the parsed copies in memory, as predict.py does (holding
    # them slowed it by about 5% here: the garbage collector walks them).
    del sentences
    gc.collect()
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    seconds = float("inf")
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        report = predict_file(parser, input_path, output_path, options, device=device)
        synchronize(device)
        seconds = min(seconds, time.perf_counter() - start)
    return Run(
        parser.system.name,
        label or options.search,
        report.sentences,
        report.words,
        seconds,
        peak_memory_mb(device),
        parse_seconds,
        cold,
    )


def format_table(runs: Sequence[Run], ratios: dict[str, float]) -> str:
    lines = [
        f"{'system':14s} {'search':12s} {'sent':>6s} {'words':>7s} {'seconds':>8s} "
        f"{'words/s':>9s} {'sent/s':>8s} {'parse s':>8s} {'parse sent/s':>12s} "
        f"{'cold s':>7s} {'peak MB':>8s} {'beam/greedy':>11s}"
    ]
    for run in runs:
        beam_row = run.search == "beam" and run.system in ratios
        ratio = f"{ratios[run.system]:.2f}" if beam_row else ""
        cold = f"{run.cold_seconds:.2f}"
        lines.append(
            f"{run.system:14s} {run.search:12s} {run.sentences:6d} {run.words:7d} "
            f"{run.seconds:8.2f} {run.words_per_s:9.0f} {run.sentences_per_s:8.0f} "
            f"{run.parse_seconds:8.2f} {run.sentences / max(run.parse_seconds, 1e-9):12.0f} "
            f"{cold:>7s} {run.peak_memory_mb:8.0f} {ratio:>11s}"
        )
    return "\n".join(lines)


def compare_eager(
    loaded: LoadedParser,
    source: Path,
    output: Path,
    options: PredictOptions,
    device: torch.device,
    same_output: dict[str, bool],
    repeats: int = 1,
    tag: str = "",
) -> Run:
    """Time ``options`` again with CUDA graphs off (row ``<search>-eager``), right after the
    run with graphs wrote ``output``, and record in ``same_output`` whether both wrote the
    same bytes."""
    parsed = output.read_bytes()
    eager = replace(options, cuda_graphs=False)
    search = f"{options.search}{tag}"
    run = time_parse(loaded, source, output, eager, device, f"{search}-eager", repeats)
    key = f"{loaded.system.name} {search}"
    same_output[key] = output.read_bytes() == parsed
    print(f"{key}: with and without CUDA graphs wrote the same file: {same_output[key]}")
    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", type=Path, help="CoNLL-U to parse (default: EWT test)")
    parser.add_argument("--limit", type=int, help="parse only the first N sentences")
    parser.add_argument("--systems", nargs="+", default=sorted(SYSTEMS), choices=sorted(SYSTEMS))
    parser.add_argument(
        "--checkpoint", type=Path, nargs="+", help="trained parsers (each times its own system)"
    )
    parser.add_argument("--beam", type=int, default=8, help="beam size (0: greedy only)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: default)")
    parser.add_argument("--batch-size", type=int, default=PredictOptions.batch_size)
    parser.add_argument("--batch-tokens", type=int, default=PredictOptions.batch_tokens)
    parser.add_argument("--beam-batch-tokens", type=int, default=PredictOptions.beam_batch_tokens)
    parser.add_argument("--profile", choices=sorted(SYSTEMS), help="time the parts of one system")
    parser.add_argument(
        "--compare-graphs",
        action="store_true",
        help="also time greedy and beam search with CUDA graphs off (rows greedy-eager, "
        "beam-eager)",
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="time each run N times, keep the fastest"
    )
    parser.add_argument(
        "--graph-rules",
        nargs="+",
        choices=GRAPH_RULES,
        help="two-registers: one run per graph_rule of its CUDA-graph variant",
    )
    parser.add_argument("--json-out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    args.input = args.input or shared_split("UD_English-EWT", "test")
    if not args.input.is_file():
        print(f"error: input not found: {args.input}", file=sys.stderr)
        return 2
    greedy = PredictOptions(batch_size=args.batch_size, batch_tokens=args.batch_tokens)
    beam = None
    if args.beam:
        beam = replace(
            greedy, search="beam", beam_size=args.beam, beam_batch_tokens=args.beam_batch_tokens
        )

    trained: dict[str, Path] = {}
    for path in args.checkpoint or ():
        trained[load_parser(path, "cpu").system.name] = path
    vocab_sentences: list[Sentence] = []
    if not trained or (args.profile and args.profile not in trained):
        vocab_sentences = read_conllu(vocabulary_source(args.input))

    def parser_for(name: str) -> LoadedParser:
        if name in trained:
            return load_parser(trained[name], device)
        return untrained_parser(name, vocab_sentences, device)

    systems = list(trained) if trained else args.systems
    result: dict[str, object] = {
        "input": str(args.input),
        "limit": args.limit,
        "model": {name: str(path) for name, path in trained.items()}
        if trained
        else "untrained (default ModelConfig)",
        "environment": describe_machine(device),
        "batch_size": args.batch_size,
        "batch_tokens": args.batch_tokens,
        "beam_batch_tokens": args.beam_batch_tokens,
        "repeats": args.repeats,
        "peak_memory": "cuda max_memory_allocated per run"
        if device.type == "cuda"
        else "process ru_maxrss so far (monotonic)",
    }
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        source = limited_input(args.input, args.limit, workdir)
        output = workdir / "parsed.conllu"
        if args.profile:
            loaded = parser_for(args.profile)
            warm_up = read_conllu(source, check_tree=False)[:4]
            timed_parse(loaded, warm_up, greedy, device, GraphCache())
            parts, transitions = profile_file(loaded, source, output, greedy, device, None)
            words = sum(len(s) for s in read_conllu(source, check_tree=False))
            total = sum(parts.values())
            print(
                f"profile of {args.profile} greedy ({total:.2f} s in all, "
                f"{transitions / words:.2f} transitions per word):"
            )
            for part, seconds in sorted(parts.items(), key=lambda kv: -kv[1]):
                print(f"  {part:15s} {seconds:7.3f} s  {100 * seconds / total:5.1f} %")
            result["profile"] = {
                "system": args.profile,
                "seconds": parts,
                "transitions_per_word": transitions / words,
            }
        runs: list[Run] = []
        ratios: dict[str, float] = {}
        same_output: dict[str, bool] = {}
        variants = [
            (name, rule)
            for name in systems
            for rule in (
                args.graph_rules if name == "two_registers" and args.graph_rules else [None]
            )
        ]
        for name, rule in variants:
            loaded = parser_for(name)
            if rule is not None:
                loaded = with_graph_rule(loaded, rule)
            tag, repeats = ("" if rule is None else f"[{rule}]"), args.repeats
            mine = [time_parse(loaded, source, output, greedy, device, f"greedy{tag}", repeats)]
            if args.compare_graphs:
                mine.append(
                    compare_eager(loaded, source, output, greedy, device, same_output, repeats, tag)
                )
            if beam is not None:
                mine.append(time_parse(loaded, source, output, beam, device, f"beam{tag}", repeats))
                ratios[name] = mine[-1].seconds / mine[0].seconds
                if args.compare_graphs:
                    mine.append(
                        compare_eager(
                            loaded, source, output, beam, device, same_output, repeats, tag
                        )
                    )
            runs += mine
            print(format_table(mine, ratios).split("\n", 1)[1], flush=True)
    print(format_table(runs, ratios))
    env = result["environment"]
    print(f"device {env['device']}, {env['threads']} threads, model: {result['model']}")
    result["runs"] = [
        {**asdict(r), "words_per_s": r.words_per_s, "sentences_per_s": r.sentences_per_s}
        for r in runs
    ]
    result["beam_size"] = args.beam
    result["beam_over_greedy_time"] = ratios
    if args.compare_graphs:
        result["graphs_same_output_as_eager"] = same_output
    save_json(result, args.json_out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
