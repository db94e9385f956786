"""Parsing from raw text: a treebank's test sentences as running text, tokenized and split by
spaCy's blank pipeline (``input_format=raw``), parsed, and scored against the gold file with the
official CoNLL 2018 scorer (``udtools.udeval``); the same model on the gold words, for reference.

    python -m experiments.raw_text --checkpoint outputs/make_train/checkpoint.pt
        [--treebank UD_English-EWT] [--split test] [--lang en] [--threads 1]
        [--work outputs/raw_text] [--out experiments/results] [--name raw_text]

The raw text is made of the ``# text`` comments of the gold file: a paragraph starts at each
``# newdoc`` or ``# newpar``, its sentences are joined by single spaces and paragraphs are
separated by blank lines (``WORK/raw.txt``, outside the project).  The tokenizer's language is
``--lang``, else the checkpoint's (:func:`neuralparse.io.raw.resolve_language`).  The raw
text is parsed three times: with spaCy's sentencizer and each token one word, with the
sentencizer and the forms that the model's training treebank writes as multiword tokens split
into their words (:mod:`neuralparse.io.multiword`), and as ``predict.py`` parses it, with
those and the sentence ends learned from the treebank
(:mod:`neuralparse.io.sentence_splitter`).  The reference row parses the
gold sentences' words (no tags, no lemmas) with the same model, written under the gold file's
own multiword tokens.  Scores are F1 percentages of the official script: Tokens, Sentences
and Words measure the segmentation; UPOS, XPOS, UFeats, AllTags are the model's own tags;
BLEX (and Lemmas) count lemmas, which neuralparse does not predict, so they stay near zero.
Results go to ``OUT/NAME.{md,json}`` and the parsed files to ``WORK``.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

import torch

from neuralparse import Parser
from neuralparse.datasets import treebank_paths
from neuralparse.io import Sentence, iter_conllu, parse_conllu_text, read_conllu, write_conllu
from neuralparse.io.raw import resolve_language

ROOT = Path(__file__).resolve().parents[1]
METRICS = (
    "Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags",
    "UAS", "LAS", "CLAS", "MLAS", "BLEX",
)  # fmt: skip
_TEXT = re.compile(r"#\s*text\s*=\s?(.*)")
_PARAGRAPH = re.compile(r"#\s*new(doc|par)\b")


def raw_text(gold: Path) -> tuple[str, int]:
    """The running text of ``gold`` (see the module docstring) and its number of paragraphs."""
    paragraphs: list[list[str]] = []
    for sentence in iter_conllu(gold, check_tree=False):
        texts = [m.group(1) for c in sentence.comments if (m := _TEXT.fullmatch(c))]
        if not texts:
            raise ValueError(f"{gold}: sentence {sentence.sent_id} has no # text comment")
        if not paragraphs or any(_PARAGRAPH.match(c) for c in sentence.comments):
            paragraphs.append([])
        paragraphs[-1].append(texts[0].strip())
    return "\n\n".join(" ".join(p) for p in paragraphs) + "\n", len(paragraphs)


def official_scores(gold: Path, predicted: Path) -> dict[str, float]:
    """F1 percentages of :data:`METRICS` from the CoNLL 2018 script."""
    from udtools import udeval

    scores = udeval.evaluate(
        udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(predicted))
    )
    return {name: round(100 * scores[name].f1, 2) for name in METRICS}


def without_lemmas(sentence: Sentence) -> Sentence:
    """``sentence`` with LEMMA ``_`` on every word line (re-read from its CoNLL-U)."""
    lines = []
    for line in sentence.to_conllu().splitlines(keepends=True):
        cells = line.split("\t")
        if len(cells) == 10 and cells[0].isdigit():
            cells[2] = "_"
        lines.append("\t".join(cells))
    (blanked,) = parse_conllu_text("".join(lines), check_tree=False)
    return blanked


def markdown(rows: list[dict[str, Any]], header: str) -> str:
    lines = [
        header,
        "",
        "| input | sentences | words | " + " | ".join(METRICS) + " |",
        "| --- | ---: | ---: | " + " | ".join("---:" for _ in METRICS) + " |",
    ]
    for row in rows:
        cells = [row["input"], str(row["sentences"]), str(row["words"])]
        cells += [f"{row['scores'][name]:.2f}" for name in METRICS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--treebank", default="UD_English-EWT")
    parser.add_argument("--split", default="test", choices=("train", "dev", "test"))
    parser.add_argument("--lang", default=None, help="spaCy language (default: the model's)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--work", type=Path, default=ROOT / "outputs" / "raw_text")
    parser.add_argument("--out", type=Path, default=ROOT / "experiments" / "results")
    parser.add_argument("--name", default="raw_text", help="file name of the results")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    torch.set_num_threads(args.threads)

    gold = treebank_paths(args.treebank, splits=[args.split], download=False)[args.split]
    args.work.mkdir(parents=True, exist_ok=True)
    text, paragraphs = raw_text(gold)
    raw_path = args.work / "raw.txt"
    raw_path.write_text(text, encoding="utf-8")
    model = Parser.load(args.checkpoint, device="cpu")
    lang = resolve_language(args.lang, model.config)

    rows = []
    forms = len(model.loaded.multiwords)
    settings = (
        ("sentencizer", False, "spaCy's sentencizer, every token one word"),
        ("sentencizer", True, f"spaCy's sentencizer, multiword tokens split ({forms} forms)"),
        ("learned", True, "learned sentence ends, multiword tokens split (the default)"),
    )
    for splitter, split, label in settings:
        start = time.perf_counter()
        predicted = args.work / f"raw_{splitter}{'_mwt' if split else ''}.conllu"
        report = model.parse_file(
            raw_path,
            predicted,
            input_format="raw",
            lang=lang,
            multiword_tokens=split,
            sentence_splitter=splitter,
        )
        rows.append(
            {
                "input": f"raw text ({lang!r} tokenizer), {label}",
                "sentence_splitter": splitter,
                "multiword_tokens": split,
                "sentences": report.sentences,
                "words": report.words,
                "seconds": round(time.perf_counter() - start, 1),
                "scores": official_scores(gold, predicted),
            }
        )
    start = time.perf_counter()
    reference = args.work / "gold_words.conllu"
    gold_sentences = read_conllu(gold, check_tree=False)
    parsed = model.parse([s.forms for s in gold_sentences])
    # Written over the gold file's own lines, so that its multiword tokens give the scorer the
    # same text, with the model's tags and tree and without the gold lemmas.
    predictions = [
        sentence.with_prediction(
            p.heads, p.deprels, upos=p.upos, xpos=p.xpos, feats=p.feats, clear_deps=True
        )
        for sentence, p in zip(gold_sentences, parsed, strict=True)
    ]
    write_conllu([without_lemmas(sentence) for sentence in predictions], reference)
    rows.append(
        {
            "input": "gold words and sentences",
            "sentences": len(parsed),
            "words": sum(len(s) for s in parsed),
            "seconds": round(time.perf_counter() - start, 1),
            "scores": official_scores(gold, reference),
        }
    )

    command = " ".join(["python -m experiments.raw_text", *sys.argv[1:]])
    header = (
        f"{gold.parent.name} {args.split} from raw text ({paragraphs} paragraphs, "
        f"{len(text)} characters), checkpoint `{args.checkpoint}`; CoNLL 2018 scorer, F1 "
        f"(`{command}`)"
    )
    md = markdown(rows, header)
    document = {
        "treebank": gold.parent.name,
        "split": args.split,
        "checkpoint": str(args.checkpoint),
        "lang": lang,
        "command": command,
        "paragraphs": paragraphs,
        "characters": len(text),
        "rows": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(document, indent=1) + "\n", "utf-8")
    (args.out / f"{args.name}.md").write_text(md, encoding="utf-8")
    print(md)
    print(f"saved {args.out}/{args.name}.{{md,json}}; parses in {args.work}", file=sys.stderr)


if __name__ == "__main__":
    main()
