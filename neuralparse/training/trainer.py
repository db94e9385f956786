"""Static-oracle training of a BiLSTM/MLP parser for any registered transition system.

:func:`~neuralparse.training.preparation.prepare` does everything that can fail on bad input
first (system name, data files, reading, label inventory), then transforms the training trees
into the system's class, builds vocabularies and extracts the oracle configurations once.
:func:`train` runs the
epochs: batches by token count (:func:`~neuralparse.runtime.batching.token_batches`), one
cross-entropy step over *all* configurations of a batch's sentences at once (the encoder runs
once per batch, the scorer once over the gathered configurations), Adam with gradient
clipping, greedy dev evaluation after each epoch (:mod:`~neuralparse.training.scoring`), the
best checkpoint by dev LAS, early stopping and resume.  With ``trainer.oracle=dynamic`` the
configurations of a batch are those the model reaches itself and the targets the dynamic
oracle's (:mod:`~neuralparse.training.exploration`); the loss is in
:mod:`~neuralparse.training.losses`.

The loss is the transition scorer's cross-entropy plus, for a tagging model, each tagging
head's cross-entropy over the words (weighted by ``model.<column>_loss_weight``): tagger and
parser learn together on the shared encoder.  Training runs until dev LAS has not improved
for ``patience`` epochs, or for ``lr_patience`` epochs once the learning rate has decayed
``max_lr_decays`` times; ``max_epochs``, ``max_updates`` and ``max_time_minutes`` are budgets
that end it earlier only when they are reached first, and the reason is logged and written to
metrics.jsonl (a ``"stopped"`` line, whose ``"limit"`` names what ended the run: ``patience``,
``max_lr_decays`` or one of the budgets).  With ``trainer.average_epochs`` the dev
evaluation, and so the early stopping, the learning-rate decay and ``checkpoint.pt``, see a
moving average of the weights (:mod:`~neuralparse.training.averaging`) instead of the last
update's.

Determinism: the model is initialised after ``torch.manual_seed(seed)``; each epoch reseeds
the global generator (dropout) and the batch generator from ``(seed, epoch)``, so a resumed
run draws the same batches and dropout masks as an uninterrupted one.

A folder that already holds a run's checkpoints is refused unless the run resumes
(:func:`check_output_dir`): a second run into it would replace the first one's model.

Interruptions: each epoch appends its metrics line, then saves ``last.pt`` (and
``checkpoint.pt`` when it is the best), each through a temporary file renamed into place, so a
kill at any moment leaves whole checkpoints.  A run killed after the metrics line but before
``last.pt`` is resumed from the epoch before: a run first drops the metrics lines of the
epochs after the one it starts from (:func:`~neuralparse.training.resume.forget_epochs_after`),
so each epoch appears once.

Pictures: after every epoch (and once more when it stops) the run redraws ``curve.svg``
beside ``metrics.jsonl``, its dev LAS and loss per epoch (:mod:`neuralparse.curves`), so a
long run can be watched in a browser; a picture that cannot be written is logged and never
stops training.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from neuralparse.config import ModelConfig, TrainConfig, TrainerConfig
from neuralparse.curves import CURVE_NAME, METRICS_NAME, write_curve
from neuralparse.errors import InputError
from neuralparse.model.parser import ParserModel
from neuralparse.runtime import distributed
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import checkpoint_data, load_parser, save_checkpoint
from neuralparse.runtime.devices import flush_denormals, resolve_device, set_threads
from neuralparse.search.graphs import GraphedSearch, supports_graphs
from neuralparse.search.greedy import Decoder
from neuralparse.systems import TransitionSystem
from neuralparse.training.averaging import WeightAverage
from neuralparse.training.exploration import Explorer
from neuralparse.training.losses import loss_on_batch, tag_loss
from neuralparse.training.preparation import (
    Prepared,
    build_system,
    check_system_name,
    prepare,
    read_split,
)
from neuralparse.training.resume import (
    Progress,
    differing_keys,
    forget_epochs_after,
    restore,
    restore_average,
)
from neuralparse.training.scoring import DEV_KEYS, evaluate_parser, score_test_split

__all__ = [
    "CHECKPOINT_NAME",
    "LAST_NAME",
    "METRICS_NAME",
    "Prepared",
    "Progress",
    "TrainResult",
    "build_system",
    "check_system_name",
    "differing_keys",
    "forget_epochs_after",
    "loss_on_batch",
    "prepare",
    "read_split",
    "run_epoch",
    "tag_loss",
    "train",
]

log = logging.getLogger("neuralparse.train")

CHECKPOINT_NAME = "checkpoint.pt"
LAST_NAME = "last.pt"
PROGRESS_STEPS = 20
"""Steps between the progress bar's updates of the mean loss (each one reads it from the
device)."""


def _seeded(seed: int, epoch: int) -> torch.Generator:
    torch.manual_seed(seed * 100_003 + epoch)
    return torch.Generator().manual_seed(seed * 100_019 + epoch)


@dataclass
class TrainResult:
    best_las: float
    best_epoch: int
    epochs_run: int
    checkpoint: Path
    history: list[dict[str, Any]]
    test: dict[str, Any] | None = None


def run_epoch(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    data: Prepared,
    batches: Sequence[torch.Tensor],
    *,
    device: torch.device,
    clip_norm: float,
    progress_bar: bool,
    description: str,
    explorer: Explorer | None = None,
    average: WeightAverage | None = None,
) -> tuple[float, int, int]:
    """One pass over ``batches`` (with the dynamic oracle when ``explorer`` is given, folding
    each update into ``average`` when given); returns (summed loss x words, words, steps) of
    this rank."""
    model.train()
    # The loss is summed on the device and read once an epoch (and by the progress bar every
    # PROGRESS_STEPS steps): reading it every step would make the host wait for the device.
    total_loss = torch.zeros((), device=device)
    total_words, steps = 0, 0
    bar = tqdm(batches, desc=description, disable=not progress_bar, unit="batch", leave=False)
    start = time.perf_counter()
    for ids in bar:
        loss, words = loss_on_batch(model, data.train_corpus, data.examples, ids, device, explorer)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        if average is not None:
            average.update(model, len(batches))
        total_loss += loss.detach() * words
        total_words += words
        steps += 1
        if progress_bar and steps % PROGRESS_STEPS == 0:
            speed = total_words / max(time.perf_counter() - start, 1e-9)
            mean = float(total_loss) / total_words
            bar.set_postfix(loss=f"{mean:.4f}", words_s=f"{speed:.0f}")
    return float(total_loss), total_words, steps


def dev_decoder(
    model: ParserModel, system: TransitionSystem, device: torch.device
) -> Decoder | None:
    """The greedy decoder of the dev evaluation: on CUDA, for the systems whose steps allow
    it, replayed from CUDA graphs (:mod:`neuralparse.search.graphs`: the eager loop's trees,
    without its per-transition kernel launches).  The graphs are recorded by the first epoch
    and replayed by every later one: they read the weights where they are, and the optimizer
    updates them in place.  Elsewhere None: the eager loop."""
    if not supports_graphs(system, device):
        return None
    search = GraphedSearch(model, system)
    return lambda batch, table: search(batch, table)[:2]


def check_output_dir(output_dir: Path, resume: str | None) -> None:
    """Refuse to train afresh into a folder that holds a trained run's checkpoints: they would
    be replaced.  Resuming (``trainer.resume``) may write there."""
    found = [name for name in (CHECKPOINT_NAME, LAST_NAME) if (output_dir / name).exists()]
    if found and not resume:
        raise InputError(
            f"already holds a trained run ({', '.join(found)}), which training would replace: "
            f"go on with trainer.resume={output_dir / LAST_NAME}, or train into another folder "
            "(hydra.run.dir=...)",
            source=str(output_dir),
        )


def train(cfg: TrainConfig | DictConfig, output_dir: str | Path) -> TrainResult:
    """Train according to ``cfg`` writing ``checkpoint.pt`` (best dev LAS), ``last.pt``
    (for resuming) and ``metrics.jsonl`` into ``output_dir``.  Under ``torchrun`` the
    processes train data-parallel (:mod:`neuralparse.runtime.distributed`)."""
    output_dir = Path(output_dir)
    trainer = cfg.trainer
    set_threads(trainer.threads, "trainer.threads")
    flush_denormals()
    context, device = distributed.setup(resolve_device(trainer.device, "trainer.device"))
    try:
        return _train(cfg, output_dir, context, device)
    finally:
        distributed.teardown(context)


def _train(
    cfg: TrainConfig | DictConfig,
    output_dir: Path,
    context: distributed.Distributed,
    device: torch.device,
) -> TrainResult:
    trainer = cfg.trainer
    if context.is_main:
        check_output_dir(output_dir, trainer.resume)
        output_dir.mkdir(parents=True, exist_ok=True)
    else:
        log.setLevel(logging.WARNING)  # rank 0 reports
    config_dict = OmegaConf.to_container(
        cfg if isinstance(cfg, DictConfig) else OmegaConf.structured(cfg), resolve=True
    )
    # The checkpoint to resume is rebuilt first: a bad one fails before the data is read.
    resume = load_parser(trainer.resume) if trainer.resume else None
    started = time.perf_counter()
    data = prepare(cfg, device)
    torch.manual_seed(cfg.seed)
    model = ParserModel.for_system(data.vocabs, ModelConfig.coerce(cfg.model), data.system).to(
        device
    )
    optimizer = torch.optim.Adam(
        model.parameters(),
        lr=trainer.lr,
        betas=tuple(trainer.betas),
        weight_decay=trainer.weight_decay,
        # One kernel per step instead of about ten per parameter: the update takes a third of
        # the time on the CPU (Greek-GDT batches, one thread); the same rule.
        fused=True,
    )
    progress = Progress()
    if resume is not None:
        progress = restore(resume, trainer.resume, model, optimizer, data, config_dict)
        log.info("resuming from %s after epoch %d", trainer.resume, progress.epoch)
    average = None
    if trainer.average_epochs > 0:
        average = WeightAverage(model, trainer.average_epochs)
        if resume is not None:
            restore_average(resume, trainer.resume, average)
    if context.is_main:
        forget_epochs_after(output_dir / METRICS_NAME, progress.epoch)
    trained = (
        torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[device.index] if device.type == "cuda" else None
        )
        if context.active
        else model
    )
    log.info(
        "model: %d parameters, %d actions, features %s, device %s, %d threads, %d process(es)",
        sum(p.numel() for p in model.parameters()),
        data.system.num_actions,
        ",".join(data.system.feature_names),
        device,
        torch.get_num_threads(),
        context.world_size,
    )
    if context.is_main:
        log.info("dev LAS and loss per epoch: %s (redrawn every epoch)", output_dir / CURVE_NAME)
        if average is not None:
            log.info("evaluating the weights averaged over %g epochs", trainer.average_epochs)
    decode = dev_decoder(model, data.system, device)
    usable = data.examples.usable()
    lengths = data.train_corpus.lengths[usable]
    history: list[dict[str, Any]] = []
    epoch_seconds: list[float] = []
    last_epoch = progress.epoch
    limit, reason = "max_epochs", f"max_epochs ({trainer.max_epochs}) reached"
    for epoch in range(progress.epoch + 1, trainer.max_epochs + 1):
        if trainer.max_time_minutes is not None and epoch_seconds:
            expected = time.perf_counter() - started + sum(epoch_seconds) / len(epoch_seconds)
            if expected > 60 * trainer.max_time_minutes:
                limit = "max_time_minutes"
                reason = f"another epoch would pass max_time_minutes ({trainer.max_time_minutes})"
                break
        epoch_start = time.perf_counter()
        generator = _seeded(cfg.seed, epoch)
        batches = [
            usable[b] for b in token_batches(lengths, trainer.batch_tokens, generator=generator)
        ]
        loss_sum, words, steps = run_epoch(
            trained,
            optimizer,
            data,
            context.shard(batches),
            device=device,
            clip_norm=trainer.clip_norm,
            progress_bar=trainer.progress and context.is_main,
            description=f"epoch {epoch}",
            explorer=(
                Explorer(data.system, data.train_trees, trainer.exploration, generator)
                if trainer.oracle == "dynamic" and epoch >= trainer.exploration_from_epoch
                else None
            ),
            average=average,
        )
        progress.updates += steps
        train_seconds = time.perf_counter() - epoch_start
        loss_sum, words = context.sum(loss_sum), int(context.sum(words))
        last_epoch = epoch
        stop = decayed = False
        if context.is_main:
            record = _evaluate_and_save(
                model, optimizer, data, cfg, config_dict, output_dir, progress, device, decode,
                average, epoch=epoch, loss=loss_sum / max(words, 1), words=words, steps=steps,
                train_seconds=train_seconds, elapsed=time.perf_counter() - started,
            )  # fmt: skip
            history.append(record)
            decayed = record["lr_decayed"]
            if progress.stale >= trainer.patience:
                stop, limit = True, "patience"
                reason = f"patience: no better dev LAS for {progress.stale} epochs"
            elif ends_plateau(progress, trainer) and not decayed:  # max_lr_decays reached
                stop, limit = True, "max_lr_decays"
                reason = (
                    f"patience: no better dev LAS for {progress.stale} epochs at the lowest "
                    f"learning rate ({progress.decays} decays: max_lr_decays)"
                )
            elif trainer.max_updates is not None and progress.updates >= trainer.max_updates:
                stop, limit = True, "max_updates"
                reason = f"max_updates ({trainer.max_updates}) reached"
        epoch_seconds.append(time.perf_counter() - epoch_start)
        # Rank 0 decided and decayed its own learning rate before saving the checkpoint.
        if context.broadcast_flag(context.is_main and decayed) and not context.is_main:
            scale_learning_rate(optimizer, trainer.lr_decay)
        if context.broadcast_flag(stop):
            break
    if context.is_main:
        log.info("stopped after epoch %d: %s", last_epoch, reason)
        stopped = {
            "stopped": reason,
            "limit": limit,
            "epochs": last_epoch,
            "updates": progress.updates,
            "best_epoch": progress.best_epoch,
            "best_las": progress.best_las,
        }
        with (output_dir / METRICS_NAME).open("a", encoding="utf-8") as out:
            out.write(json.dumps(stopped) + "\n")
        redraw_curve(output_dir)
    context.barrier()
    log.info(
        "best dev LAS %.2f at epoch %d; checkpoint %s",
        progress.best_las,
        progress.best_epoch,
        output_dir / CHECKPOINT_NAME,
    )
    test_scores = None
    if context.is_main and trainer.evaluate_test and (output_dir / CHECKPOINT_NAME).is_file():
        test_scores = score_test_split(
            cfg, output_dir / CHECKPOINT_NAME, output_dir / METRICS_NAME, device
        )
    return TrainResult(
        progress.best_las,
        progress.best_epoch,
        last_epoch,
        output_dir / CHECKPOINT_NAME,
        history,
        test_scores,
    )


def redraw_curve(output_dir: Path) -> None:
    """Redraw the run's ``curve.svg`` from its metrics; a failure is logged, not raised (a
    picture never stops training)."""
    try:
        write_curve(output_dir)
    except Exception as error:  # whatever the picture's problem, training goes on
        log.warning("could not draw %s: %s", output_dir / CURVE_NAME, error)


def ends_plateau(progress: Progress, trainer: TrainerConfig | DictConfig) -> bool:
    """Whether this epoch ends a plateau: ``lr_patience`` epochs (or a multiple) without a
    better dev LAS, when ``lr_decay`` is below 1.  The learning rate decays there while
    :func:`may_decay`; after that such a plateau ends the run."""
    stale = progress.stale
    return trainer.lr_decay < 1.0 and stale > 0 and stale % trainer.lr_patience == 0


def may_decay(progress: Progress, trainer: TrainerConfig | DictConfig) -> bool:
    """Whether the learning rate has decayed fewer than ``max_lr_decays`` times."""
    return trainer.max_lr_decays is None or progress.decays < trainer.max_lr_decays


def scale_learning_rate(optimizer: torch.optim.Optimizer, factor: float) -> None:
    """Multiply every parameter group's learning rate by ``factor`` (saved with the
    optimizer's state, so a resumed run goes on at the decayed rate)."""
    for group in optimizer.param_groups:
        group["lr"] *= factor


def _evaluate_and_save(
    model: ParserModel,
    optimizer: torch.optim.Optimizer,
    data: Prepared,
    cfg: TrainConfig | DictConfig,
    config_dict: Any,
    output_dir: Path,
    progress: Progress,
    device: torch.device,
    decode: Decoder | None,
    average: WeightAverage | None,
    *,
    epoch: int,
    loss: float,
    words: int,
    steps: int,
    train_seconds: float,
    elapsed: float,
) -> dict[str, Any]:
    """Dev evaluation, the metrics line, the log line and the checkpoints of one epoch (the
    evaluation and ``checkpoint.pt`` of the averaged weights when ``average`` is given)."""

    def snapshot(training: dict[str, Any]) -> dict[str, Any]:
        return checkpoint_data(
            model=model,
            system=data.system,
            system_options=data.system_options,
            vocabs=data.vocabs,
            segmentation=data.segmentation,
            config=config_dict,
            dev_metrics={k: v for k, v in scores.items() if not isinstance(v, dict | list)},
            training=training,
        )

    eval_start = time.perf_counter()
    with average.applied(model) if average is not None else nullcontext():
        scores = evaluate_parser(
            model,
            data.system,
            data.dev_corpus,
            data.dev_sentences,
            data.vocabs,
            batch_tokens=cfg.trainer.eval_batch_tokens,
            device=device,
            decode=decode,
        )
        eval_seconds = time.perf_counter() - eval_start
        improved = progress.update(epoch, scores["las"])
        # The best model is kept without the optimizer state (resume uses last.pt), saved
        # below after last.pt: its weights are snapshot now, while they are the average.
        best = snapshot(asdict(progress)) if improved else None
    decayed = ends_plateau(progress, cfg.trainer) and may_decay(progress, cfg.trainer)
    if decayed:
        progress.decays += 1
        scale_learning_rate(optimizer, cfg.trainer.lr_decay)
    record = {
        "epoch": epoch,
        "loss": loss,
        "steps": steps,
        "train_words": words,
        "words_per_s": words / max(train_seconds, 1e-9),
        "train_seconds": train_seconds,
        "eval_seconds": eval_seconds,
        "elapsed_seconds": elapsed + eval_seconds,
        "dev": {k: scores[k] for k in DEV_KEYS},
        "best_las": progress.best_las,
        "best_epoch": progress.best_epoch,
        "lr": optimizer.param_groups[0]["lr"],
        "lr_decayed": decayed,
    }
    with (output_dir / METRICS_NAME).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    redraw_curve(output_dir)
    tags = "".join(
        f" {name} {scores[key]:.2f}"
        for column, key, name in (("upos", "upos", "UPOS"), ("feats", "ufeats", "UFeats"))
        if column in model.tagged_columns and scores.get(key) is not None
    )
    log.info(
        "epoch %d: loss %.4f, %.0f words/s, dev UAS %.2f LAS %.2f%s%s (%.0fs train, %.0fs dev)",
        epoch,
        loss,
        record["words_per_s"],
        scores["uas"],
        scores["las"],
        tags,
        " *best*" if improved else "",
        train_seconds,
        eval_seconds,
    )
    if decayed:
        log.info(
            "no better dev LAS for %d epochs: learning rate now %.2e", progress.stale, record["lr"]
        )
    resumable = {**asdict(progress), "optimizer": optimizer.state_dict()}
    if average is not None:
        resumable["average"] = average.state_dict()
    save_checkpoint(output_dir / LAST_NAME, snapshot(resumable))
    if best is not None:
        save_checkpoint(output_dir / CHECKPOINT_NAME, best)
    return record
