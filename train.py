"""Train a parser: ``python train.py [data=NAME] [key=value ...]`` (Hydra).

Until the training issue lands, this entry point runs the corpus study that every later
training run starts with: for each split of the configured treebank, the tree-class coverage
(``neuralparse.analyze``) and the accuracy ceiling of parsers restricted to a class, measured
by lifting each gold tree into the class (Nivre & Nilsson 2005) and scoring it against the
gold tree with ``neuralparse.evaluation``. Results go to stdout and to ``corpus_study.json``
in Hydra's run directory.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig

from neuralparse.analyze import analyze_sentences, format_table
from neuralparse.config import register_configs, resolve_data_files
from neuralparse.errors import InputError
from neuralparse.evaluation import evaluate
from neuralparse.io import read_conllu
from neuralparse.trees.lifting import lift

log = logging.getLogger("neuralparse.train")

CEILING_CLASSES = ("projective", "2planar", "2ci")


def class_ceilings(sentences) -> dict[str, dict]:
    """Scores of gold trees lifted into each class: the best a parser of that class can do."""
    ceilings = {}
    for target in CEILING_CLASSES:
        lifted = [s.with_tree(lift(s.heads, target).heads, s.deprels) for s in sentences]
        scores = evaluate(sentences, lifted).to_dict()
        ceilings[target] = {
            key: scores[key] for key in ("uas", "exact_unlabeled", "nonproj_recall")
        }
    return ceilings


def corpus_study(cfg: DictConfig) -> dict:
    files = resolve_data_files(cfg.data)
    rows, study = [], {}
    for split, path in files.items():
        log.info("reading %s split: %s", split, path)
        sentences = read_conllu(path)
        row = analyze_sentences(sentences, no_punct=cfg.analysis.no_punct, file=f"{split}")
        rows.append(row)
        study[split] = {
            "file": str(path),
            "coverage": row.__dict__ | {"file": str(path)},
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


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    try:
        study = corpus_study(cfg)
    except InputError as error:
        log.error("%s", error)
        sys.exit(2)
    out = Path(HydraConfig.get().runtime.output_dir) / "corpus_study.json"
    out.write_text(json.dumps(study, indent=2) + "\n")
    log.info("wrote %s", out)


if __name__ == "__main__":
    register_configs()
    main()
