"""Static-oracle training of a BiLSTM/MLP parser for any registered transition system.

:func:`prepare` does everything that can fail on bad input first (system name, data files,
reading, label inventory), then transforms the training trees into the system's class,
builds vocabularies and extracts the oracle configurations once.  :func:`train` runs the
epochs: batches by token count (:func:`~neuralparse.runtime.batching.token_batches`), one
cross-entropy step over *all* configurations of a batch's sentences at once (the encoder runs
once per batch, the scorer once over the gathered configurations), Adam with gradient
clipping, greedy dev evaluation with the evaluation module's scores after each epoch, the
best checkpoint by dev LAS, early stopping and resume.

The loss is the transition scorer's cross-entropy plus, for a tagging model, each tagging
head's cross-entropy over the words (weighted by ``model.<column>_loss_weight``): tagger and
parser learn together on the shared encoder.  Training runs until dev LAS has not improved
for ``patience`` epochs; ``max_epochs``, ``max_updates`` and ``max_time_minutes`` are budgets
that end it earlier only when they are reached first, and the reason is logged and written to
metrics.jsonl (a ``"stopped"`` line).

Determinism: the model is initialised after ``torch.manual_seed(seed)``; each epoch reseeds
the global generator (dropout) and the batch generator from ``(seed, epoch)``, so a resumed
run draws the same batches and dropout masks as an uninterrupted one.

Interruptions: each epoch appends its metrics line, then saves ``last.pt`` (and
``checkpoint.pt`` when it is the best), each through a temporary file renamed into place, so a
kill at any moment leaves whole checkpoints.  A run killed after the metrics line but before
``last.pt`` is resumed from the epoch before: a run first drops the metrics lines of the
epochs after the one it starts from (:func:`forget_epochs_after`), so each epoch appears once.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from neuralparse.config import ModelConfig, SearchConfig, TrainConfig, resolve_data_files
from neuralparse.errors import InputError
from neuralparse.evaluation import ScoreAccumulator, TagColumns, predicted_tag_scores_only
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.sources import partial_file, replacing
from neuralparse.model.encoder import gold_tags
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import ParserModel
from neuralparse.model.scorer import mask_illegal
from neuralparse.model.vocab import PAD_INDEX, UNK_INDEX, Vocabularies, vocabularies_for
from neuralparse.runtime import distributed
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.checkpoint import (
    CheckpointError,
    LoadedParser,
    checkpoint_data,
    load_parser,
    save_checkpoint,
    weight_mismatch,
)
from neuralparse.runtime.devices import resolve_device, set_threads
from neuralparse.search import SEARCHES
from neuralparse.search.greedy import greedy_decoder, parse_corpus_with_tags
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system
from neuralparse.training.examples import OracleExamples, extract_oracle_examples
from neuralparse.training.transforms import TransformReport, prepare_trees

log = logging.getLogger("neuralparse.train")

CHECKPOINT_NAME = "checkpoint.pt"
LAST_NAME = "last.pt"
METRICS_NAME = "metrics.jsonl"
DEV_KEYS = (
    "uas",
    "las",
    "las_full",
    "clas",
    "upos",
    "xpos",
    "ufeats",
    "alltags",
    "las_nopunct",
    "nonproj_precision",
    "nonproj_recall",
    "words",
    "sentences",
)


@dataclass
class Prepared:
    """Data, system, vocabularies and oracle examples of a run."""

    system: TransitionSystem
    system_options: dict[str, Any]
    vocabs: Vocabularies
    train_sentences: list[Sentence]
    dev_sentences: list[Sentence]
    train_corpus: EncodedCorpus
    dev_corpus: EncodedCorpus
    examples: OracleExamples
    transform_report: TransformReport
    not_reproduced: int
    unseen_dev_labels: Counter[str] = field(default_factory=Counter)


def check_system_name(name: str) -> None:
    if name not in SYSTEMS:
        raise InputError(f"unknown transition system {name!r}; available: {sorted(SYSTEMS)}")


def build_system(name: str, labels: Sequence[str], options: dict[str, Any]) -> TransitionSystem:
    """``get_system`` with bad options reported as an input error naming them."""
    check_system_name(name)
    try:
        return get_system(name, labels, **options)
    except (TypeError, ValueError) as error:
        raise InputError(f"system={name} with options {options}: {error}") from None


def read_split(path: Path, split: str, limit: int | None) -> list[Sentence]:
    """Read a split, keeping the first ``limit`` sentences; an empty result is an error."""
    sentences = read_conllu(path)
    if limit is not None:
        sentences = sentences[:limit]
    if not sentences:
        raise InputError(f"{split} treebank {path} has no sentences")
    missing = next((s for s in sentences if s.heads is None), None)
    if missing is not None:
        raise InputError(
            f"{split} sentences need gold trees (HEAD is '_')",
            source=missing.source,
            line=missing.line,
            sent_id=missing.sent_id,
        )
    return sentences


def prepare(cfg: TrainConfig | DictConfig, device: torch.device | None = None) -> Prepared:
    """Validate the configuration and data, then build everything training needs (the oracle
    runs on ``device``, default the CPU)."""
    options = dict(cfg.system.options)
    build_system(cfg.system.name, (), options)  # fails here, before any data is read
    ModelConfig.coerce(cfg.model)  # so does a bad model configuration
    if cfg.search.name not in SEARCHES:
        raise InputError(f"unknown search {cfg.search.name!r}; available: {list(SEARCHES)}")
    SearchConfig.check(cfg.search)
    files = resolve_data_files(cfg.data, ("train", "dev"))
    train_sentences = read_split(files["train"], "train", cfg.data.max_train_sentences)
    dev_sentences = read_split(files["dev"], "dev", cfg.data.max_dev_sentences)
    log.info(
        "train: %d sentences, %d words (%s); dev: %d sentences (%s)",
        len(train_sentences),
        sum(map(len, train_sentences)),
        files["train"],
        len(dev_sentences),
        files["dev"],
    )
    unlabeled = build_system(cfg.system.name, (), options)
    trees, report = prepare_trees(unlabeled, [(s.heads, s.deprels) for s in train_sentences])
    log.info("%s: %s", cfg.system.name, report.summary())
    labels = sorted({label for _, deprels in trees for label in deprels})
    system = build_system(cfg.system.name, labels, options)
    known = set(labels)
    unseen = Counter(d for s in dev_sentences for d in s.deprels if d not in known)
    if unseen:
        log.warning(
            "%d dev words have %d labels unseen in training (%s); the parser cannot predict "
            "them, so they count as labeled errors",
            sum(unseen.values()),
            len(unseen),
            ", ".join(f"{k}={v}" for k, v in unseen.most_common(10)),
        )
    model_cfg = cfg.model
    vocabs = vocabularies_for(train_sentences, model_cfg)
    start = time.perf_counter()
    examples, reproduced = extract_oracle_examples(
        system, trees, chunk_size=cfg.trainer.oracle_batch_size, device=device or "cpu"
    )
    failed = reproduced.count(False)
    log.info(
        "oracle: %d configurations from %d trees in %.1fs%s",
        examples.n_configurations,
        len(trees) - failed,
        time.perf_counter() - start,
        f"; {failed} trees not reproduced by the oracle were left out" if failed else "",
    )
    if failed == len(trees):
        raise InputError(f"the {system.name} oracle reproduces none of the training trees")
    max_chars = model_cfg.max_word_chars
    return Prepared(
        system=system,
        system_options=options,
        vocabs=vocabs,
        train_sentences=train_sentences,
        dev_sentences=dev_sentences,
        train_corpus=EncodedCorpus.build(train_sentences, vocabs, max_chars),
        dev_corpus=EncodedCorpus.build(dev_sentences, vocabs, max_chars),
        examples=examples,
        transform_report=report,
        not_reproduced=failed,
        unseen_dev_labels=unseen,
    )


def evaluate_parser(
    model: ParserModel,
    system: TransitionSystem,
    corpus: EncodedCorpus,
    gold: Sequence[Sentence],
    vocabs: Vocabularies,
    *,
    batch_tokens: int,
    device: torch.device,
) -> dict[str, Any]:
    """Greedy-parse (and tag) ``corpus`` and score it against ``gold`` (the evaluation
    module's metrics, as percentages; tag accuracies for the columns the model predicts)."""
    parses = parse_corpus_with_tags(
        model,
        system,
        corpus,
        greedy_decoder(model, system),
        batch_tokens=batch_tokens,
        device=device,
    )
    classes = vocabs.tag_classes(model.tagged_columns)
    accumulator = ScoreAccumulator()
    for sentence, parse in zip(gold, parses, strict=True):
        heads, deprels = system.output_tree(parse.heads, [lb or "_" for lb in parse.labels])
        predicted = {
            column: [classes[column].symbols[k] for k in parse.tags[column]] for column in classes
        }
        accumulator.add(
            sentence.heads,
            sentence.deprels,
            heads,
            deprels,
            sentence.forms,
            gold_tags=TagColumns(sentence.upos, sentence.xpos, sentence.feats),
            pred_tags=TagColumns(
                predicted.get("upos", sentence.upos),
                predicted.get("xpos", sentence.xpos),
                predicted.get("feats", sentence.feats),
            ),
        )
    return predicted_tag_scores_only(accumulator.result().to_dict(), classes)


def tag_loss(
    tag_scores: dict[str, torch.Tensor], batch: ModelInput, weights: dict[str, float]
) -> torch.Tensor:
    """The weighted sum of the tagging heads' mean cross-entropies over the words of
    ``batch`` (zero for a model without heads)."""
    total = torch.zeros((), device=batch.lengths.device)
    for column, scores in tag_scores.items():
        gold = gold_tags(batch, column)
        if gold is None:
            raise ValueError(f"the model predicts {column} but the batch has no gold {column}")
        # The root row, padding and (impossible in training data) unknown tags score nothing.
        target = torch.where(gold == UNK_INDEX, PAD_INDEX, gold)
        loss = F.cross_entropy(scores.flatten(0, 1), target.flatten(), ignore_index=PAD_INDEX)
        total = total + weights[column] * loss
    return total


def loss_on_batch(
    model: torch.nn.Module,
    corpus: EncodedCorpus,
    examples: OracleExamples,
    ids: torch.Tensor,
    device: torch.device,
) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over the legal actions of every oracle configuration of the
    sentences ``ids``, in one tensor batch, plus the weighted tagging losses; also returns the
    number of words.  ``model`` is a :class:`ParserModel`, possibly wrapped for
    data-parallel training."""
    inputs = corpus.batch(ids).to(device)
    batch = examples.gather(ids).to(device)
    scores, tag_scores = model(inputs, batch.position, batch.tokens, batch.summary)
    loss = F.cross_entropy(mask_illegal(scores, batch.legal), batch.actions)
    weights = getattr(model, "module", model).tag_loss_weights
    return loss + tag_loss(tag_scores, inputs, weights), int(inputs.lengths.sum())


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


@dataclass
class Progress:
    """Where training stands (saved in checkpoints for resuming)."""

    epoch: int = 0
    best_las: float = -math.inf
    best_epoch: int = 0
    stale: int = 0
    updates: int = 0
    """Optimizer steps taken so far (of this rank)."""

    def update(self, epoch: int, las: float) -> bool:
        """Record an epoch's dev LAS; True when it is the best so far."""
        self.epoch = epoch
        if las > self.best_las:
            self.best_las, self.best_epoch, self.stale = las, epoch, 0
            return True
        self.stale += 1
        return False


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
) -> tuple[float, int, int]:
    """One pass over ``batches``; returns (summed loss x words, words, steps) of this rank."""
    model.train()
    total_loss, total_words, steps = 0.0, 0, 0
    bar = tqdm(batches, desc=description, disable=not progress_bar, unit="batch", leave=False)
    start = time.perf_counter()
    for ids in bar:
        loss, words = loss_on_batch(model, data.train_corpus, data.examples, ids, device)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
        optimizer.step()
        total_loss += loss.item() * words
        total_words += words
        steps += 1
        speed = total_words / max(time.perf_counter() - start, 1e-9)
        bar.set_postfix(loss=f"{total_loss / total_words:.4f}", words_s=f"{speed:.0f}")
    return total_loss, total_words, steps


def train(cfg: TrainConfig | DictConfig, output_dir: str | Path) -> TrainResult:
    """Train according to ``cfg`` writing ``checkpoint.pt`` (best dev LAS), ``last.pt``
    (for resuming) and ``metrics.jsonl`` into ``output_dir``.  Under ``torchrun`` the
    processes train data-parallel (:mod:`neuralparse.runtime.distributed`)."""
    output_dir = Path(output_dir)
    trainer = cfg.trainer
    set_threads(trainer.threads, "trainer.threads")
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
    )
    progress = Progress()
    if resume is not None:
        progress = _restore(resume, trainer.resume, model, optimizer, data, config_dict)
        log.info("resuming from %s after epoch %d", trainer.resume, progress.epoch)
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
    usable = data.examples.usable()
    lengths = data.train_corpus.lengths[usable]
    history: list[dict[str, Any]] = []
    epoch_seconds: list[float] = []
    last_epoch = progress.epoch
    reason = f"max_epochs ({trainer.max_epochs}) reached"
    for epoch in range(progress.epoch + 1, trainer.max_epochs + 1):
        if trainer.max_time_minutes is not None and epoch_seconds:
            expected = time.perf_counter() - started + sum(epoch_seconds) / len(epoch_seconds)
            if expected > 60 * trainer.max_time_minutes:
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
        )
        progress.updates += steps
        train_seconds = time.perf_counter() - epoch_start
        loss_sum, words = context.sum(loss_sum), int(context.sum(words))
        last_epoch = epoch
        stop = False
        if context.is_main:
            record = _evaluate_and_save(
                model, optimizer, data, cfg, config_dict, output_dir, progress, device,
                epoch=epoch, loss=loss_sum / max(words, 1), words=words, steps=steps,
                train_seconds=train_seconds, elapsed=time.perf_counter() - started,
            )  # fmt: skip
            history.append(record)
            if progress.stale >= trainer.patience:
                stop, reason = True, f"patience: no better dev LAS for {progress.stale} epochs"
            elif trainer.max_updates is not None and progress.updates >= trainer.max_updates:
                stop, reason = True, f"max_updates ({trainer.max_updates}) reached"
        epoch_seconds.append(time.perf_counter() - epoch_start)
        if context.broadcast_flag(stop):
            break
    if context.is_main:
        log.info("stopped after epoch %d: %s", last_epoch, reason)
        stopped = {
            "stopped": reason,
            "epochs": last_epoch,
            "updates": progress.updates,
            "best_epoch": progress.best_epoch,
            "best_las": progress.best_las,
        }
        with (output_dir / METRICS_NAME).open("a", encoding="utf-8") as out:
            out.write(json.dumps(stopped) + "\n")
    context.barrier()
    log.info(
        "best dev LAS %.2f at epoch %d; checkpoint %s",
        progress.best_las,
        progress.best_epoch,
        output_dir / CHECKPOINT_NAME,
    )
    test_scores = None
    if context.is_main and trainer.evaluate_test and (output_dir / CHECKPOINT_NAME).is_file():
        test_scores = score_test_split(cfg, output_dir, device)
    return TrainResult(
        progress.best_las,
        progress.best_epoch,
        last_epoch,
        output_dir / CHECKPOINT_NAME,
        history,
        test_scores,
    )


def configured_test_file(data: Any) -> Path | None:
    """The test split's file when the data config names one (None for a missing ``???``
    path or a treebank without a test file)."""
    if isinstance(data, DictConfig) and OmegaConf.is_missing(data, "test"):
        return None
    try:
        return resolve_data_files(data, ("test",))["test"]
    except InputError:
        return None


def score_test_split(
    cfg: TrainConfig | DictConfig, output_dir: Path, device: torch.device
) -> dict[str, Any] | None:
    """Score the best checkpoint on the test split (greedy) and append a ``"split": "test"``
    line to the metrics file."""
    path = configured_test_file(cfg.data)
    if path is None:
        log.info("no test file configured: skipping the test evaluation")
        return None
    loaded = load_parser(output_dir / CHECKPOINT_NAME, device)
    sentences = read_split(path, "test", None)
    corpus = EncodedCorpus.build(sentences, loaded.vocabs, cfg.model.max_word_chars)
    scores = evaluate_parser(
        loaded.model,
        loaded.system,
        corpus,
        sentences,
        loaded.vocabs,
        batch_tokens=cfg.trainer.eval_batch_tokens,
        device=device,
    )
    record = {"split": "test", "file": str(path), **{k: scores[k] for k in DEV_KEYS}}
    with (output_dir / METRICS_NAME).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    log.info("test (%s): UAS %.2f LAS %.2f", path, scores["uas"], scores["las"])
    return record


def _evaluate_and_save(
    model: ParserModel,
    optimizer: torch.optim.Optimizer,
    data: Prepared,
    cfg: TrainConfig | DictConfig,
    config_dict: Any,
    output_dir: Path,
    progress: Progress,
    device: torch.device,
    *,
    epoch: int,
    loss: float,
    words: int,
    steps: int,
    train_seconds: float,
    elapsed: float,
) -> dict[str, Any]:
    """Dev evaluation, the metrics line, the log line and the checkpoints of one epoch."""
    eval_start = time.perf_counter()
    scores = evaluate_parser(
        model,
        data.system,
        data.dev_corpus,
        data.dev_sentences,
        data.vocabs,
        batch_tokens=cfg.trainer.eval_batch_tokens,
        device=device,
    )
    eval_seconds = time.perf_counter() - eval_start
    improved = progress.update(epoch, scores["las"])
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
    }
    with (output_dir / METRICS_NAME).open("a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
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
    state = asdict(progress)
    snapshot = checkpoint_data(
        model=model,
        system=data.system,
        system_options=data.system_options,
        vocabs=data.vocabs,
        config=config_dict,
        dev_metrics={k: v for k, v in scores.items() if not isinstance(v, dict | list)},
        training={**state, "optimizer": optimizer.state_dict()},
    )
    save_checkpoint(output_dir / LAST_NAME, snapshot)
    if improved:
        # The best model is kept without the optimizer state (resume uses last.pt).
        save_checkpoint(output_dir / CHECKPOINT_NAME, dict(snapshot, training=state))
    return record


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


def _restore(
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
