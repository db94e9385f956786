"""Train a parser: ``python train.py [system=NAME] [data=NAME] [trainer=quick|default|full]
[key=value ...]`` (Hydra; see conf/config.yaml and neuralparse/config.py).

Outputs go to Hydra's run directory (``hydra.run.dir=DIR`` to choose it): ``checkpoint.pt``
(the best model by dev LAS), ``last.pt`` (to resume: ``trainer.resume=DIR/last.pt``),
``metrics.jsonl`` (one line per epoch), ``config.yaml`` (the resolved config) and the log.
``analysis.run=true`` first runs the corpus study (tree-class coverage and class ceilings,
:mod:`neuralparse.training.corpus_study`) and writes ``corpus_study.json``.
"""

from __future__ import annotations

import json
import logging
import os
import sys

# Before torch is imported: idle OpenMP threads sleep instead of spinning, which otherwise
# makes multi-threaded CPU training collapse when the cores are shared (see TrainerConfig).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from neuralparse.config import TrainConfig, check_known_keys, register_configs
from neuralparse.errors import InputError

log = logging.getLogger("neuralparse.train")


@hydra.main(version_base="1.3", config_path="conf", config_name="config")
def main(cfg: DictConfig) -> None:
    from neuralparse.training.corpus_study import corpus_study
    from neuralparse.training.trainer import train

    out = Path(HydraConfig.get().runtime.output_dir)
    main_process = int(os.environ.get("RANK", "0")) == 0  # torchrun: rank 0 reports
    try:
        check_known_keys(cfg, TrainConfig)
        if main_process:
            (out / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
        if cfg.analysis.run and main_process:
            study = corpus_study(cfg.data, no_punct=cfg.analysis.no_punct)
            (out / "corpus_study.json").write_text(json.dumps(study, indent=2) + "\n")
        result = train(cfg, out)
    except InputError as error:
        log.error("%s", error)
        sys.exit(2)
    if main_process:
        best = f"best dev LAS {result.best_las:.2f} (epoch {result.best_epoch})"
        print(f"{best}: {result.checkpoint}")


if __name__ == "__main__":
    register_configs()
    main()
