"""Train a parser: ``neuralparse train`` or ``python train.py`` with ``[system=NAME]
[data=NAME] [trainer=quick|default|full] [key=value ...]`` (Hydra; the configuration is
neuralparse/conf/config.yaml, its schema neuralparse/config.py).

Outputs go to Hydra's run directory (``hydra.run.dir=DIR`` to choose it): ``checkpoint.pt``
(the best model by dev LAS), ``last.pt`` (to resume: ``trainer.resume=DIR/last.pt``),
``metrics.jsonl`` (one line per epoch), ``curve.svg``, ``config.yaml`` (the resolved config)
and the log; a folder that holds a trained run already is refused unless the run resumes.
``analysis.run=true`` first runs the corpus study (tree-class coverage and class ceilings,
:mod:`neuralparse.training.corpus_study`) and writes ``corpus_study.json``.

A bad configuration, data file, device or checkpoint stops it with one line on stderr and exit
status 2 (:mod:`neuralparse.runtime.cli`); SIGTERM and Ctrl-C stop it with whole checkpoints
in place and no temporary files, and ``trainer.resume=DIR/last.pt`` goes on from there.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import DictConfig, OmegaConf

from neuralparse.config import TrainConfig, check_known_keys, register_configs
from neuralparse.runtime.cli import exit_on_sigterm, run_hydra, run_program, user_errors
from neuralparse.runtime.interrupts import interruptions_held
from neuralparse.runtime.openmp import SLEEPING, choose_waiting


@hydra.main(version_base="1.3", config_path="pkg://neuralparse.conf", config_name="config")
def main(cfg: DictConfig) -> None:
    # Before torch loads OpenMP (TrainerConfig.threads).
    if choose_waiting(str(cfg.trainer.device), threads=cfg.trainer.threads):
        logging.getLogger("neuralparse.train").info(SLEEPING)
    exit_on_sigterm()
    with interruptions_held():  # an import cut short half-way would fail with its own error
        from neuralparse.training.corpus_study import corpus_study
        from neuralparse.training.trainer import check_output_dir, train

    out = Path(HydraConfig.get().runtime.output_dir)
    main_process = int(os.environ.get("RANK", "0")) == 0  # torchrun: rank 0 reports
    with user_errors():
        check_known_keys(cfg, TrainConfig)
        if main_process:
            check_output_dir(out, cfg.trainer.resume)  # before config.yaml is replaced
            (out / "config.yaml").write_text(OmegaConf.to_yaml(cfg, resolve=True))
        if cfg.analysis.run and main_process:
            study = corpus_study(cfg.data, no_punct=cfg.analysis.no_punct)
            (out / "corpus_study.json").write_text(json.dumps(study, indent=2) + "\n")
        result = train(cfg, out)
    if main_process:
        best = f"best dev LAS {result.best_las:.2f} (epoch {result.best_epoch})"
        print(f"{best}: {result.checkpoint}")


def run() -> None:
    """``neuralparse train`` and ``python train.py``: the Hydra application with its schema."""
    register_configs()
    run_hydra(main)


if __name__ == "__main__":
    run_program(run)
