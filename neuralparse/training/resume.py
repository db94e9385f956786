"""Resuming a training run: where it stood (:class:`Progress`, saved in every checkpoint), the
checks that a checkpoint fits this run before its weights and optimizer state are loaded
(:func:`restore`), and the metrics file cut back to the epoch the run starts from
(:func:`forget_epochs_after`), so that each epoch appears once in it.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import torch

from neuralparse.io.sources import partial_file, replacing
from neuralparse.model.parser import ParserModel
from neuralparse.runtime.checkpoint import CheckpointError, LoadedParser, weight_mismatch
from neuralparse.training.averaging import WeightAverage
from neuralparse.training.preparation import Prepared

log = logging.getLogger("neuralparse.train")


@dataclass
class Progress:
    """Where training stands (saved in checkpoints for resuming)."""

    epoch: int = 0
    best_las: float = -math.inf
    best_epoch: int = 0
    stale: int = 0
    updates: int = 0
    """Optimizer steps taken so far (of this rank)."""
    decays: int = 0
    """How many times the learning rate has decayed (``trainer.lr_decay``)."""

    def update(self, epoch: int, las: float) -> bool:
        """Record an epoch's dev LAS; True when it is the best so far."""
        self.epoch = epoch
        if las > self.best_las:
            self.best_las, self.best_epoch, self.stale = las, epoch, 0
            return True
        self.stale += 1
        return False


def differing_keys(saved: Any, current: Any, prefix: str) -> list[str]:
    """The dotted keys under ``prefix`` whose values differ between two resolved configs.
    Keys that ``saved`` lacks are left out: they were added to the schema after it was saved,
    and a checkpoint loads with their defaults."""
    if isinstance(saved, dict) and isinstance(current, dict):
        return [
            key
            for name in sorted(saved, key=str)
            for key in differing_keys(saved[name], current.get(name), f"{prefix}.{name}")
        ]
    return [] if saved == current else [prefix]


def restore(
    resume: LoadedParser,
    source: str,
    model: ParserModel,
    optimizer: torch.optim.Optimizer,
    data: Prepared,
    config: dict[str, Any],
) -> Progress:
    """Load weights (and optimizer) from the checkpoint ``source`` of the same system, model
    configuration and data (``config``: this run's resolved configuration); returns where its
    training stood."""
    saved_model = resume.checkpoint.get("config", {}).get("model")
    differing = differing_keys(saved_model, config.get("model"), "model") if saved_model else []
    changed = [
        key
        for key in differing
        # Where the vectors file lies is not the model: the vocabularies, compared below, say
        # whether it holds the same vectors.
        if key != "model.pretrained_vectors"
    ]
    if changed:
        raise CheckpointError(
            f"cannot resume: this run's model configuration differs from the checkpoint's in "
            f"{', '.join(changed)}; resume with the checkpoint's values (its config.yaml)",
            source=source,
        )
    saved = resume.system
    if saved.name != data.system.name or list(saved.labels) != list(data.system.labels):
        raise CheckpointError(
            f"cannot resume: checkpoint is for system {saved.name} with {len(saved.labels)} "
            f"labels, this run is {data.system.name} with {len(data.system.labels)}",
            source=source,
        )
    if resume.vocabs.to_dict() != data.vocabs.to_dict():
        raise CheckpointError(
            "cannot resume: the checkpoint's vocabularies differ from this data's", source=source
        )
    mismatch = weight_mismatch(model.state_dict(), resume.model.state_dict())
    if mismatch:
        raise CheckpointError(
            f"cannot resume: the checkpoint's model is not this run's model config ({mismatch})",
            source=source,
        )
    model.load_state_dict(resume.model.state_dict())
    state = dict(resume.checkpoint["training"] or {})
    if "optimizer" in state:
        try:
            optimizer.load_state_dict(state.pop("optimizer"))
        except (KeyError, TypeError, ValueError, RuntimeError) as error:
            raise CheckpointError(
                f"its optimizer state does not fit the model's parameters ({error})",
                source=source,
            ) from None
    values = {f.name: state[f.name] for f in fields(Progress) if f.name in state}
    wrong = [k for k, v in values.items() if isinstance(v, bool) or not isinstance(v, int | float)]
    if wrong or not isinstance(values.get("epoch", 0), int):
        raise CheckpointError(
            f"its training progress ({', '.join(wrong or ['epoch'])}) is not a number",
            source=source,
        )
    return Progress(**values)


def restore_average(resume: LoadedParser, source: str, average: WeightAverage) -> None:
    """Go on with the weight average saved in the checkpoint ``source``; one saved without
    (averaging switched on when resuming) starts from the checkpoint's weights."""
    saved = (resume.checkpoint.get("training") or {}).get("average")
    if saved is None:
        log.info("%s has no weight average: it starts from the checkpoint's weights", source)
        return
    try:
        average.load_state_dict(saved)
    except (KeyError, TypeError, ValueError) as error:
        raise CheckpointError(
            f"its weight average does not fit the model's parameters ({error})", source=source
        ) from None


def forget_epochs_after(path: Path, epoch: int) -> None:
    """Cut the metrics file ``path`` after the line of ``epoch`` (all of it for epoch 0: a
    run started afresh in the folder of an earlier one), rewriting it atomically.  What follows
    was written after the checkpoint a run starts from was saved (an epoch killed before its
    ``last.pt``, a line cut short, the ``"stopped"`` and test lines of a finished run), and the
    run writes it again."""
    if not path.is_file():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = 0
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            break
        if not isinstance(record, dict) or not isinstance(record.get("epoch"), int):
            break
        if record["epoch"] > epoch or not line.endswith("\n"):
            break
        kept += 1
    if kept == len(lines):
        return
    log.warning(
        "%s: dropped %d line(s) after epoch %d, where this run starts (left by an interrupted "
        "or an earlier run)",
        path,
        len(lines) - kept,
        epoch,
    )
    handle, partial = partial_file(path)
    with replacing(path, handle, partial) as out:
        out.writelines(lines[:kept])
