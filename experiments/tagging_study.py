"""How tag information should reach the parser: train the joint tagger-parser variants and a
gold-tag parser to convergence, then score each on the test file with and without its tags.

    python -m experiments.tagging_study [--data en_ewt hu_szeged got_proiel ...]
        [--variants joint soft predicted gold_tags] [--seeds 1] [--jobs 4] [--device cuda]
        [--max-minutes 60] [--out outputs/tagging] [--quick]
    python -m experiments.tagging_study --table [--out outputs/tagging]

The variants (``model.tag_input``, see :class:`neuralparse.config.ModelConfig`):

- ``joint`` (``model=default``): tagging heads on the shared encoder's first layer; the
  parser reads the shared encoder alone;
- ``joint_top``: the same with the heads on the top layer, beside the parser (all layers
  shared);
- ``soft``: the upper BiLSTM layer also reads the heads' tag distributions;
- ``predicted``: the upper layer reads the embeddings of the predicted tags (gold tags for half
  the training words);
- ``gold_tags`` (``model=gold_tags``): no heads, the input's gold UPOS/XPOS/FEATS embedded;
- ``joint_chars`` / ``predicted_chars``: ``joint`` / ``predicted`` with a character BiLSTM
  (128 dimensions) instead of the character convolution.

Every run trains with the default trainer (early stopping on dev LAS; ``--max-minutes`` is a
safety cap whose use is reported), then parses test twice: as distributed (``tagged``) and
with UPOS, XPOS and FEATS blanked to ``_`` (``untagged``, what users' text looks like).  The
scores are the CoNLL 2018 shared task's (LAS on the universal part of DEPREL, Zeman et al.
2018) with gold tokenization; a tagging model's UPOS/XPOS/UFeats/AllTags are its own
predictions (``tags=predict``).  Each run lives in ``OUT/<data>/<variant>/seed<k>/``
(train.py's outputs, then ``scores.json``); a run with ``scores.json`` is skipped, so an
interrupted study resumes.  ``--table`` collects the runs into
``experiments/results/tagging.{csv,json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from experiments.report import write_results
from experiments.runs import DATA_KEYS, ROOT, load_run, step_command, training_minutes
from experiments.runs import train_command as study_train_command

RESULTS = ROOT / "experiments" / "results"
VARIANTS = {
    "joint": ["model=default"],
    "joint_top": ["model=default", "model.tagger_layer=2"],
    "soft": ["model=default", "model.tag_input=soft"],
    "predicted": ["model=default", "model.tag_input=predicted"],
    "gold_tags": ["model=gold_tags"],
    "joint_chars": ["model=default", "model.char_model=bilstm", "model.char_out=128"],
    "predicted_chars": [
        "model=default",
        "model.tag_input=predicted",
        "model.char_model=bilstm",
        "model.char_out=128",
    ],
}
SETTINGS = ("untagged", "tagged")
SCORE_KEYS = (
    "las",
    "uas",
    "las_full",
    "clas",
    "mlas",
    "upos",
    "xpos",
    "ufeats",
    "alltags",
    "nonproj_recall",
    "crossed_recall",
)


def run_directory(out: Path, data: str, variant: str, seed: int) -> Path:
    return out / data / variant / f"seed{seed}"


def train_command(run_dir: Path, data: str, variant: str, seed: int, args) -> list[str]:
    overrides = [
        f"data={data}",
        *VARIANTS[variant],
        f"seed={seed}",
        f"trainer.max_time_minutes={args.max_minutes}",
    ]
    quick = [
        "model.word_dim=16",
        "model.char_out=16",
        "model.lstm_hidden=16",
        "model.mlp_hidden=16",
        "trainer.max_epochs=2",
        "data.max_train_sentences=100",
        "data.max_dev_sentences=30",
    ]
    return study_train_command(run_dir, overrides, args, quick if args.quick else ())


def score_test(run_dir: Path, device: str, threads: int, quick: bool) -> dict:
    """Parse the run's test file tagged and untagged; write and return ``scores.json``."""
    import torch

    from neuralparse.evaluation import evaluate, predicted_tag_scores_only

    trained = load_run(run_dir, device, threads, quick)
    gold, parser, epochs = trained.gold, trained.parser, trained.epochs
    tagging = bool(parser.model.tagged_columns)
    stopped = next((r for r in trained.records if "stopped" in r), {})
    summary = {
        "epochs": len(epochs),
        "best_epoch": stopped.get("best_epoch"),
        "stopped": stopped.get("stopped"),
        "best_dev_las": stopped.get("best_las"),
        "train_minutes": training_minutes(epochs),
        "parameters": parser.model.describe()["parameters"],
        "device": str(parser.device)
        + (
            f" ({torch.cuda.get_device_name(parser.device)})"
            if parser.device.type == "cuda"
            else ""
        ),
        "test_file": str(trained.test_file),
        "settings": {},
    }
    for setting in SETTINGS:
        given = [s.without_tags() for s in gold] if setting == "untagged" else gold
        start = time.perf_counter()
        predicted = parser.parse(given, tags="predict" if tagging else "keep")
        seconds = time.perf_counter() - start
        scores = predicted_tag_scores_only(
            evaluate(gold, predicted).to_dict(), parser.model.tagged_columns
        )
        summary["settings"][setting] = {
            **{key: scores.get(key) for key in SCORE_KEYS},
            "seconds": seconds,
        }
    (run_dir / "scores.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def execute(data: str, variant: str, seed: int, args) -> str:
    run_dir = run_directory(args.out, data, variant, seed)
    if (run_dir / "scores.json").is_file():
        return f"{run_dir}: done before, skipped"
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    start = time.time()
    with open(run_dir / "study.log", "w") as log:
        steps = [
            train_command(run_dir, data, variant, seed, args),
            step_command("experiments.tagging_study", "--score", run_dir, args),
        ]
        for step in steps:
            done = subprocess.run(step, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
            if done.returncode != 0:
                return f"{run_dir}: failed ({done.returncode}), see study.log"
    return f"{run_dir}: done in {(time.time() - start) / 60:.1f} min"


def _cell(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def table(out: Path, results: Path) -> str:
    """Collect every run's ``scores.json`` into ``results/tagging.{csv,json,md}``; returns the
    Markdown."""
    rows = []
    for path in sorted(out.glob("*/*/seed*/scores.json")):
        summary = json.loads(path.read_text())
        data, variant, seed = path.parts[-4], path.parts[-3], int(path.parts[-2][4:])
        for setting, scores in summary["settings"].items():
            rows.append(
                {
                    "data": data,
                    "variant": variant,
                    "seed": seed,
                    "setting": setting,
                    **{key: scores.get(key) for key in SCORE_KEYS},
                    "epochs": summary["epochs"],
                    "best_epoch": summary["best_epoch"],
                    "stopped": summary["stopped"],
                    "train_minutes": summary["train_minutes"],
                    "device": summary["device"],
                }
            )
    columns = ("LAS", "UAS", "LAS full", "CLAS", "MLAS", "UPOS", "XPOS", "UFeats", "AllTags")
    keys = ("las", "uas", "las_full", "clas", "mlas", "upos", "xpos", "ufeats", "alltags")
    lines = [
        "| treebank | variant | seed | test input | " + " | ".join(columns) + " | best / last"
        " epoch | stopped by |",
        "|" + " --- |" * 4 + " ---: |" * (len(columns) + 1) + " --- |",
    ]
    for row in rows:
        stop = (row["stopped"] or "?").split(":")[0].split(" (")[0]
        lines.append(
            f"| {row['data']} | {row['variant']} | {row['seed']} | {row['setting']} | "
            + " | ".join(_cell(row[key]) for key in keys)
            + f" | {row['best_epoch']} / {row['epochs']} | {stop} |"
        )
    md = "\n".join(lines) + "\n"
    document = {
        "definition": "CoNLL 2018 shared task metrics (LAS: head and universal DEPREL), gold "
        "tokenization; 'untagged': test UPOS/XPOS/FEATS blanked",
        "rows": rows,
    }
    write_results(results, "tagging", rows, document, md)
    return md


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", nargs="+", default=list(DATA_KEYS), choices=DATA_KEYS)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[1])
    parser.add_argument("--jobs", type=int, default=2, help="runs at a time")
    parser.add_argument("--threads", type=int, default=1, help="torch threads per run")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--max-minutes", type=float, default=240.0, help="safety cap per run")
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "tagging")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--table", action="store_true", help="only collect the results")
    parser.add_argument("--quick", action="store_true", help="tiny smoke run")
    parser.add_argument("--score", type=Path, help=argparse.SUPPRESS)  # one run's test scores
    args = parser.parse_args(argv)
    if args.score is not None:
        score_test(args.score, args.device, args.threads, args.quick)
        return 0
    if not args.table:
        runs = [
            (data, variant, seed)
            for seed in args.seeds
            for data in DATA_KEYS
            if data in args.data
            for variant in VARIANTS
            if variant in args.variants
        ]
        print(f"{len(runs)} runs, {args.jobs} at a time, into {args.out}", flush=True)
        with ThreadPoolExecutor(args.jobs) as pool:
            messages = list(pool.map(lambda run: execute(*run, args), runs))
        print("\n".join(messages), flush=True)
        if any("failed" in m for m in messages):
            return 1
    print(table(args.out, args.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
