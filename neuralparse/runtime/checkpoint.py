"""One-file checkpoints of plain data: loadable anywhere with ``torch.load(weights_only=True)``.

A checkpoint is a dict of Python scalars, strings, lists, dicts and tensors only: the resolved
config, the vocabularies, the label inventory, the system name and options, the library and
format versions, the model's ``state_dict``, the dev metrics and, for resuming, the training
progress (epoch, best score, optimizer state).  Tensors are saved from the CPU, so a checkpoint
trained on a GPU loads on a CPU-only machine.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from neuralparse.config import ModelConfig
from neuralparse.errors import InputError
from neuralparse.io.sources import partial_file, replacing
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import Vocabularies
from neuralparse.systems import TransitionSystem, get_system
from neuralparse.version import __version__

if TYPE_CHECKING:
    from neuralparse.search.graphs import GraphedSearch

log = logging.getLogger("neuralparse.checkpoint")

FORMAT_VERSION = 1
"""Bump when the layout changes incompatibly; older readers refuse newer files."""


class CheckpointError(InputError):
    """A checkpoint that cannot be read by this version of the library."""


@dataclass
class LoadedParser:
    """A model rebuilt from a checkpoint, with what it needs to parse."""

    model: ParserModel
    system: TransitionSystem
    vocabs: Vocabularies
    checkpoint: dict[str, Any]
    graphed: dict[int | None, GraphedSearch] = field(
        default_factory=dict, repr=False, compare=False
    )
    """CUDA graphs recorded for greedy decoding (key ``None``) and for beam search (key: the
    beam size), created by the first CUDA batch that uses them and reused by every later batch
    of the same bucket."""


def _cpu(value: Any) -> Any:
    """A deep copy of plain data with every tensor moved to the CPU."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _cpu(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_cpu(v) for v in value)
    return value


def checkpoint_data(
    *,
    model: ParserModel,
    system: TransitionSystem,
    system_options: dict[str, Any],
    vocabs: Vocabularies,
    config: dict[str, Any],
    dev_metrics: dict[str, Any] | None = None,
    training: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The checkpoint dict (see the module docstring)."""
    return {
        "format_version": FORMAT_VERSION,
        "library_version": __version__,
        "system": system.name,
        "system_options": dict(system_options),
        "labels": list(system.labels),
        "vocabularies": vocabs.to_dict(),
        "model": model.describe(),
        "config": config,
        "state_dict": _cpu(model.state_dict()),
        "dev_metrics": dev_metrics or {},
        "training": _cpu(training) if training is not None else None,
    }


def save_checkpoint(path: str | Path, data: dict[str, Any]) -> None:
    """Write atomically: into a temporary file of its own beside ``path``
    (``.NAME.RANDOM.partial``, so two runs saving the same checkpoint never write into one
    file), synced to disk and renamed over ``path``, so that a crash or an interruption never
    leaves a truncated checkpoint behind; the temporary file is removed on any failure."""
    path = Path(path)
    handle, partial = partial_file(path, binary=True)
    with replacing(path, handle, partial):
        torch.save(data, handle)
        handle.flush()
        os.fsync(handle.fileno())


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint onto the CPU, refusing unknown or newer formats clearly."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for foreign or corrupt files
        raise CheckpointError(f"{path}: not a readable neuralparse checkpoint ({error})") from None
    if not isinstance(data, dict) or "format_version" not in data:
        raise CheckpointError(f"{path}: not a neuralparse checkpoint (no format_version)")
    version = data["format_version"]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: checkpoint format {version} (written by neuralparse "
            f"{data.get('library_version', '?')}) is newer than this library's format "
            f"{FORMAT_VERSION} (neuralparse {__version__}); upgrade neuralparse"
        )
    return data


def rebuild(data: dict[str, Any], device: torch.device | str = "cpu") -> LoadedParser:
    """Model, system and vocabularies of a loaded checkpoint, weights restored."""
    vocabs = Vocabularies.from_dict(data["vocabularies"])
    system = get_system(data["system"], data["labels"], **data["system_options"])
    description = data["model"]
    config = dict(description["config"])
    if "tag_input" not in config:
        # Written before the tagging heads existed: such a model embeds its input's tags.
        config["tag_input"] = "gold"
        log.warning(
            "%s checkpoint from neuralparse %s predates the tagger: it reads gold UPOS/XPOS/"
            "FEATS from its input and cannot tag; retrain for untagged text",
            data["system"],
            data.get("library_version", "?"),
        )
    model = ParserModel(
        vocabs,
        ModelConfig.coerce(config),
        description["n_features"],
        description["n_actions"],
        description.get("n_summary", 0),
    )
    if model.n_actions != system.num_actions:
        raise CheckpointError(
            f"checkpoint scores {model.n_actions} actions but system {system.name} with "
            f"{len(system.labels)} labels has {system.num_actions}"
        )
    model.load_state_dict(data["state_dict"])
    model.to(device)
    model.eval()
    return LoadedParser(model, system, vocabs, data)


def load_parser(path: str | Path, device: torch.device | str = "cpu") -> LoadedParser:
    return rebuild(load_checkpoint(path), device)
