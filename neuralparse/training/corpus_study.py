"""The corpus study a training run can start with (``python train.py analysis.run=true``).

For each split of the configured treebank: the tree-class coverage (``neuralparse.analyze``)
and the accuracy ceiling of parsers restricted to a class, measured by lifting each gold tree
into the class (Nivre & Nilsson 2005) and scoring it against the gold tree with
``neuralparse.evaluation``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from neuralparse.analyze import analyze_sentences, format_table
from neuralparse.config import DataConfig, resolve_split_files
from neuralparse.evaluation import evaluate
from neuralparse.io import Sentence, read_conllu
from neuralparse.trees.lifting import lift

log = logging.getLogger("neuralparse.train")

CEILING_CLASSES = ("projective", "2planar", "2ci")


def class_ceilings(sentences: Sequence[Sentence]) -> dict[str, dict[str, Any]]:
    """Scores of gold trees lifted into each class: the best a parser of that class can do."""
    ceilings = {}
    for target in CEILING_CLASSES:
        lifted = [s.with_tree(lift(s.heads, target).heads, s.deprels) for s in sentences]
        scores = evaluate(sentences, lifted).to_dict()
        ceilings[target] = {
            key: scores[key] for key in ("uas", "exact_unlabeled", "nonproj_recall")
        }
    return ceilings


def corpus_study(data: DataConfig, *, no_punct: bool = False) -> dict[str, Any]:
    """Coverage and class ceilings of every split; prints a table and returns the numbers."""
    files = resolve_split_files(data, optional=("dev",))  # some treebanks have no dev split
    rows, study = [], {}
    for split, paths in files.items():
        names = " + ".join(map(str, paths))
        log.info("reading %s split: %s", split, names)
        sentences = [sentence for path in paths for sentence in read_conllu(path)]
        row = analyze_sentences(sentences, no_punct=no_punct, file=f"{split}")
        rows.append(row)
        study[split] = {
            "file": names,
            "coverage": row.__dict__ | {"file": names},
            "class_ceilings": class_ceilings(sentences),
        }
    print(format_table(rows))
    print("\nceilings (UAS / exact match / non-projective recall of gold trees lifted into class):")
    for split, entry in study.items():
        cells = [
            f"{cls} {v['uas']:.2f}/{v['exact_unlabeled']:.2f}/{v['nonproj_recall'] or 0:.2f}"
            for cls, v in entry["class_ceilings"].items()
        ]
        print(f"  {split:5s}  " + "   ".join(cells))
    return study
