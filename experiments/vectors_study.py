"""Does ``model.pretrained_vectors`` help?  Train word vectors on a treebank's training text,
then the default model with and without them, and score both on untagged dev and test text.

    python -m experiments.vectors_study [--treebank hu_szeged ...] [--data-root DIR]
        [--variants baseline vectors vectors_finetune] [--seeds 1 2] [--device cuda]
        [--threads 1] [--jobs 3] [--max-minutes 240] [--out outputs/vectors]
        [--results experiments/results] [--dim 100] [--sg-epochs 10] [--vectors-seed 1]
        [train.py overrides ...]
    python -m experiments.vectors_study --table [--treebank ...] [--seeds ...] [--out ...]

No pretrained vectors can be downloaded where this was written, so the vectors are made here:
a skip-gram with negative sampling (Mikolov et al. 2013; window 5, 5 negatives, frequent
words subsampled) written in torch, trained on the lower-cased forms of the **training split
only** (never dev or test text), written as ``OUT/<treebank>/vectors.vec`` once (seed
``--vectors-seed``) and shared by every parser seed.  Such vectors know no word that training
does not, so they can only help through better vectors for rare training words (those under
``model.min_word_count`` have no trained embedding of their own); vectors trained on large raw
text (fastText's, say) would also cover test words unseen in training, which this study cannot
measure.

The variants (``model=default`` and the seed in all; each seed of ``--seeds`` runs them all):

- ``baseline``: no vectors;
- ``vectors``: ``model.pretrained_vectors=OUT/<treebank>/vectors.vec`` (the table fixed);
- ``vectors_finetune``: the same with ``model.pretrained_finetune=true``.

Each run trains with the default trainer (early stopping on dev LAS; ``--max-minutes`` is a
safety cap whose use is reported), then the best checkpoint parses dev and test with UPOS,
XPOS and FEATS blanked (the project's headline setting; test is scored by
``tagging_study.score_test``, dev the same way).  Arguments with ``=`` go to every train.py
run, e.g. ``trainer.max_epochs=2`` for a smoke run.  Runs live in
``OUT/<treebank>/<variant>/seed<k>/`` (train.py's outputs, ``study.log``, ``scores.json``); a
run with ``scores.json`` is skipped, so an interrupted study resumes.  The tables (every run,
then the means over the seeds with their differences from ``baseline``) go to stdout and
``RESULTS/vectors.{csv,json,md}``; ``--table`` only collects the runs found.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import torch
import yaml

from experiments.report import write_results
from experiments.runs import ROOT
from experiments.runs import train_command as study_train_command
from experiments.tagging_study import SCORE_KEYS, score_test
from neuralparse.config import DataConfig, resolve_data_files
from neuralparse.io import read_conllu
from neuralparse.model.vectors import WordVectors, write_vectors

RESULTS = ROOT / "experiments" / "results"
VARIANTS = {
    "baseline": [],
    "vectors": ["model.pretrained_vectors={vectors}"],
    "vectors_finetune": ["model.pretrained_vectors={vectors}", "model.pretrained_finetune=true"],
}
TABLE_KEYS = ("las", "uas", "clas", "upos", "ufeats")
SHOWN = ("epoch", "pretrained vectors", "model:", "rror")
"""What of a run's log is echoed as progress (the rest stays in its study.log)."""
print_lock = threading.Lock()
scoring_lock = threading.Lock()
"""One scoring at a time: parallel runs share the device and the threads."""


def say(message: str) -> None:
    with print_lock:
        print(message, flush=True)


# -- word vectors --------------------------------------------------------------------------
def skipgram_vectors(
    sentences: list[list[str]],
    *,
    dim: int,
    epochs: int,
    seed: int,
    device: str,
    window: int = 5,
    negatives: int = 5,
    min_count: int = 1,
    subsample: float = 1e-3,
    batch_size: int = 1024,
    lr: float = 0.002,
) -> WordVectors:
    """Skip-gram with negative sampling over ``sentences`` (lists of words), vectorised in
    torch: each epoch subsamples frequent tokens (word2vec's formula), pairs every kept token
    with the kept tokens up to ``window`` away in its sentence (a pair at distance d kept with
    probability (window - d + 1) / window, word2vec's shrunk windows in expectation), and
    trains on shuffled batches with negatives drawn from the unigram distribution ** 0.75.
    The words come out most frequent first (the usual layout of vectors files)."""
    counts = Counter(w for s in sentences for w in s)
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    index = {w: i for i, w in enumerate(words)}
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    flat = [(index[w], k) for k, s in enumerate(sentences) for w in s if w in index]
    tokens = torch.tensor([t for t, _ in flat], dtype=torch.long)
    sentence_of = torch.tensor([k for _, k in flat], dtype=torch.long)
    frequency = torch.tensor([counts[w] for w in words], dtype=torch.float)
    share = frequency / frequency.sum()
    keep_probability = ((share / subsample).sqrt() + 1) * subsample / share
    noise = frequency**0.75
    dev = torch.device(device)
    center_table = torch.nn.Embedding(len(words), dim, sparse=True).to(dev)
    context_table = torch.nn.Embedding(len(words), dim, sparse=True).to(dev)
    torch.nn.init.uniform_(center_table.weight, -0.5 / dim, 0.5 / dim)
    torch.nn.init.zeros_(context_table.weight)
    optimizer = torch.optim.SparseAdam([center_table.weight, context_table.weight], lr=lr)
    noise = noise.to(dev)
    for epoch in range(1, epochs + 1):
        start = time.perf_counter()
        kept = torch.rand(len(tokens), generator=generator) < keep_probability[tokens]
        ids, owners = tokens[kept], sentence_of[kept]
        centers, contexts = [], []
        for distance in range(1, window + 1):
            same = owners[distance:] == owners[:-distance]
            same &= torch.rand(len(same), generator=generator) < (window - distance + 1) / window
            left, right = ids[:-distance][same], ids[distance:][same]
            centers += [left, right]
            contexts += [right, left]
        center, context = torch.cat(centers), torch.cat(contexts)
        order = torch.randperm(len(center), generator=generator)
        center, context = center[order].to(dev), context[order].to(dev)
        total = 0.0
        for first in range(0, len(center), batch_size):
            c, o = center[first : first + batch_size], context[first : first + batch_size]
            negative = torch.multinomial(noise, len(c) * negatives, replacement=True)
            u = center_table(c)
            positive = (u * context_table(o)).sum(1)
            negative_scores = torch.bmm(
                context_table(negative).view(len(c), negatives, dim), u[:, :, None]
            )[:, :, 0]
            loss = -(
                torch.nn.functional.logsigmoid(positive).sum()
                + torch.nn.functional.logsigmoid(-negative_scores).sum()
            ) / len(c)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(c)
        say(
            f"  skip-gram epoch {epoch}/{epochs}: {len(center)} pairs, loss "
            f"{total / max(len(center), 1):.3f}, {time.perf_counter() - start:.1f}s"
        )
    return WordVectors(words, center_table.weight.detach().cpu())


def training_text(treebank: str, root: str | None) -> tuple[Path, list[list[str]]]:
    """The training file of ``treebank`` and its lower-cased forms, sentence by sentence."""
    train_file = resolve_data_files(DataConfig(treebank=treebank, root=root), ("train",))["train"]
    return train_file, [[f.lower() for f in s.forms] for s in read_conllu(train_file)]


def make_vectors(treebank: str, args: argparse.Namespace) -> Path:
    path = args.out / treebank / "vectors.vec"
    if path.is_file():
        say(f"vectors: {path} (made before)")
        return path.resolve()
    train_file, sentences = training_text(treebank, args.data_root)
    say(
        f"vectors: skip-gram, {args.dim} dimensions, {args.sg_epochs} epochs on {train_file} "
        f"({sum(map(len, sentences))} words)"
    )
    vectors = skipgram_vectors(
        sentences,
        dim=args.dim,
        epochs=args.sg_epochs,
        seed=args.vectors_seed,
        device=args.device,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    write_vectors(path.with_suffix(".partial"), vectors).replace(path)
    say(f"vectors: {len(vectors.words)} words written to {path}")
    say("  nearest neighbours: " + "; ".join(neighbours(vectors, n=5)))
    return path.resolve()


def neighbours(vectors: WordVectors, n: int) -> list[str]:
    """A sanity check for the log: the nearest words (cosine) of a few frequent content-ish
    words (the 20th to 24th most frequent)."""
    unit = torch.nn.functional.normalize(vectors.vectors, dim=1)
    lines = []
    for i in range(20, min(20 + n, len(vectors.words))):
        best = (unit @ unit[i]).topk(min(4, len(vectors.words)))[1].tolist()[1:]
        lines.append(f"{vectors.words[i]}: {', '.join(vectors.words[j] for j in best)}")
    return lines


# -- training and scoring ------------------------------------------------------------------
def train_command(
    run_dir: Path, treebank: str, variant: str, seed: int, vectors: Path, args: argparse.Namespace
) -> list[str]:
    overrides = [
        "model=default",
        f"data.treebank={treebank}",
        *([f"data.root={args.data_root}"] if args.data_root else []),
        *(o.format(vectors=vectors) for o in VARIANTS[variant]),
        f"seed={seed}",
        f"trainer.max_time_minutes={args.max_minutes}",
    ]
    return study_train_command(run_dir, overrides, args, args.overrides)


def score_dev(run_dir: Path, device: str) -> dict:
    """Dev scores of the run's best checkpoint on untagged input, as ``score_test`` scores
    test."""
    from neuralparse import Parser
    from neuralparse.evaluation import evaluate, predicted_tag_scores_only

    config = yaml.safe_load((run_dir / "config.yaml").read_text())
    gold = read_conllu(resolve_data_files(DataConfig(**config["data"]), ("dev",))["dev"])
    parser = Parser.load(run_dir / "checkpoint.pt", device=device)
    predicted = parser.parse([s.without_tags() for s in gold], tags="predict")
    scores = evaluate(gold, predicted).to_dict()
    scores = predicted_tag_scores_only(scores, parser.model.tagged_columns)
    return {key: scores.get(key) for key in SCORE_KEYS}


def run_directory(treebank: str, variant: str, seed: int, args: argparse.Namespace) -> Path:
    return args.out / treebank / variant / f"seed{seed}"


def execute(treebank: str, variant: str, seed: int, vectors: Path, args: argparse.Namespace) -> str:
    run_dir = run_directory(treebank, variant, seed, args)
    name = f"{treebank}/{variant}/seed{seed}"
    if (run_dir / "scores.json").is_file():
        return f"{name}: done before, skipped"
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    start = time.time()
    say(f"{name}: training in {run_dir}")
    with open(run_dir / "study.log", "w") as log:
        child = subprocess.Popen(
            train_command(run_dir, treebank, variant, seed, vectors, args),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        assert child.stdout is not None
        for line in child.stdout:
            log.write(line)
            if any(key in line for key in SHOWN):
                say(f"  [{name}] {line.rstrip()}")
        if child.wait() != 0:
            return f"{name}: training failed ({child.returncode}), see {run_dir}/study.log"
    with scoring_lock:
        summary = score_test(run_dir, args.device, args.threads, quick=False)
        summary["dev_untagged"] = score_dev(run_dir, args.device)
        summary["vectors"] = str(vectors) if VARIANTS[variant] else None
        summary["study_command"] = " ".join(sys.argv)
        (run_dir / "scores.json").write_text(json.dumps(summary, indent=2) + "\n")
    return f"{name}: done in {(time.time() - start) / 60:.1f} min"


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table(args: argparse.Namespace) -> str:
    """Collect the runs' ``scores.json`` into ``RESULTS/vectors.{csv,json,md}``; returns the
    Markdown."""
    rows = []
    commands: list[str] = []
    for treebank, variant, seed in (
        (t, v, k) for t in args.treebank for v in VARIANTS for k in args.seeds
    ):
        path = run_directory(treebank, variant, seed, args) / "scores.json"
        if not path.is_file():
            continue
        summary = json.loads(path.read_text())
        commands.append(summary.get("study_command", "?"))
        row = {"treebank": treebank, "variant": variant, "seed": seed}
        for split, scores in (
            ("dev", summary["dev_untagged"]),
            ("test", summary["settings"]["untagged"]),
        ):
            row |= {f"{split}_{key}": scores.get(key) for key in TABLE_KEYS}
        row |= {
            key: summary[key]
            for key in ("epochs", "best_epoch", "stopped", "train_minutes", "parameters", "device")
        }
        rows.append(row)
    names = {"las": "LAS", "uas": "UAS", "clas": "CLAS", "upos": "UPOS", "ufeats": "UFeats"}
    columns = [f"{split} {names[key]}" for split in ("dev", "test") for key in TABLE_KEYS]
    lines = [
        "| treebank | variant | seed | "
        + " | ".join(columns)
        + " | best / last epoch | stopped by |",
        "|" + " --- |" * 3 + " ---: |" * (len(columns) + 1) + " --- |",
    ]
    for row in rows:
        stop = (row["stopped"] or "?").split(":")[0].split(" (")[0]
        cells = [_cell(row[f"{split}_{key}"]) for split in ("dev", "test") for key in TABLE_KEYS]
        lines.append(
            f"| {row['treebank']} | {row['variant']} | {row['seed']} | "
            + " | ".join(cells)
            + f" | {row['best_epoch']} / {row['epochs']} | {stop} |"
        )
    means = mean_rows(rows)
    lines += [
        "",
        "Means over the seeds; in brackets the difference from `baseline` on the same treebank:",
        "",
        "| treebank | variant | seeds | " + " | ".join(columns) + " |",
        "|" + " --- |" * 2 + " ---: |" * (len(columns) + 1),
    ]
    for row in means:
        base = next(b for b in means if b["treebank"] == row["treebank"])
        cells = []
        for split in ("dev", "test"):
            for key in TABLE_KEYS:
                value, reference = row[f"{split}_{key}"], base[f"{split}_{key}"]
                difference = (
                    f" ({value - reference:+.2f})"
                    if row is not base and None not in (value, reference)
                    else ""
                )
                cells.append(_cell(value) + difference)
        lines.append(
            f"| {row['treebank']} | {row['variant']} | {row['seeds']} | " + " | ".join(cells) + " |"
        )
    md = "\n".join(lines) + "\n"
    document = {
        "definition": "CoNLL 2018 shared task metrics (LAS: head and universal DEPREL), gold "
        "tokenization, UPOS/XPOS/FEATS blanked in the input (untagged); vectors: skip-gram on "
        "the lower-cased training forms only",
        "commands": list(dict.fromkeys(commands)),
        "rows": rows,
        "means": means,
    }
    write_results(args.results, "vectors", rows, document, md)
    return md


def mean_rows(rows: list[dict]) -> list[dict]:
    """Per treebank and variant (in the rows' order), the mean of each score over the seeds."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        groups.setdefault((row["treebank"], row["variant"]), []).append(row)
    means = []
    for (treebank, variant), group in groups.items():
        mean = {"treebank": treebank, "variant": variant, "seeds": len(group)}
        for key in (f"{split}_{k}" for split in ("dev", "test") for k in TABLE_KEYS):
            values = [r[key] for r in group if r[key] is not None]
            mean[key] = sum(values) / len(values) if values else None
        means.append(mean)
    return means


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--treebank", nargs="+", default=["hu_szeged"], help="UD names or data preset names"
    )
    parser.add_argument("--data-root", help="data.root for train.py (default: the usual)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1], help="parser seeds")
    parser.add_argument("--vectors-seed", type=int, default=1, help="skip-gram seed")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time")
    parser.add_argument("--max-minutes", type=float, default=240.0, help="safety cap per run")
    parser.add_argument("--dim", type=int, default=100, help="dimension of the vectors")
    parser.add_argument("--sg-epochs", type=int, default=10, help="skip-gram epochs")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "vectors")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true", help="only collect the results")
    parser.add_argument("overrides", nargs="*", help="train.py overrides (key=value)")
    args = parser.parse_args(argv)
    if any("=" not in o for o in args.overrides):
        parser.error("extra arguments are train.py overrides of the form key=value")
    messages = []
    if not args.table:
        torch.set_num_threads(args.threads)
        vectors = {treebank: make_vectors(treebank, args) for treebank in args.treebank}
        runs = [(t, v, k) for k in args.seeds for t in args.treebank for v in args.variants]
        with ThreadPoolExecutor(args.jobs) as pool:
            messages = list(pool.map(lambda run: execute(*run, vectors[run[0]], args), runs))
        say("\n".join(messages))
    say(table(args))
    return 1 if any("failed" in m for m in messages) else 0


if __name__ == "__main__":
    sys.exit(main())
