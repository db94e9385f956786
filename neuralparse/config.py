"""Typed configuration shared by the Hydra entry points (`train.py`, `predict.py`).

The dataclasses are registered in Hydra's ConfigStore as schemas, so a misspelt key or a value
of the wrong type fails before any work starts, with Hydra's message naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from hydra.core.config_store import ConfigStore

SPLITS = ("train", "dev", "test")


@dataclass
class DataConfig:
    """Which treebank to use and where its files are.

    `treebank` names a UD treebank (`UD_English-EWT`, `English-EWT` or `en_ewt`) looked up
    under `root` (see `neuralparse.datasets.data_root` for the default); explicit `train`,
    `dev` and `test` paths take precedence over the treebank's files (the `custom` preset).
    `code` is the release file prefix (`en_ewt`) for a treebank the registry does not know.
    """

    treebank: str | None = "UD_English-EWT"
    code: str | None = None
    root: str | None = None
    train: str | None = None
    dev: str | None = None
    test: str | None = None
    download: bool = True


@dataclass
class AnalysisConfig:
    """The corpus analysis that `train.py` runs before training."""

    no_punct: bool = False


@dataclass
class TrainConfig:
    data: DataConfig = field(default_factory=DataConfig)
    analysis: AnalysisConfig = field(default_factory=AnalysisConfig)
    seed: int = 1


def register_configs() -> None:
    """Register the schemas; the YAML files under `conf/` extend them."""
    store = ConfigStore.instance()
    store.store(name="train_schema", node=TrainConfig)


def resolve_data_files(data: DataConfig, splits: tuple[str, ...] = SPLITS) -> dict[str, Path]:
    """Paths of the requested splits: explicit paths first, else the treebank's files."""
    from neuralparse import datasets
    from neuralparse.errors import InputError

    explicit = {split: getattr(data, split) for split in splits if getattr(data, split)}
    missing = [split for split in splits if split not in explicit]
    files = {split: Path(path) for split, path in explicit.items()}
    if missing:
        if not data.treebank:
            raise InputError(
                f"no treebank and no path for split(s) {', '.join(missing)}: set "
                + " ".join(f"data.{split}=PATH" for split in missing)
                + " or data.treebank=NAME"
            )
        files.update(
            datasets.treebank_paths(
                data.treebank,
                root=data.root,
                splits=tuple(missing),
                download=data.download,
                code=data.code,
            )
        )
    for split, path in files.items():
        if not path.is_file():
            raise InputError(f"{split} file not found: {path}")
    return files
