"""One-file checkpoints of plain data: loadable anywhere with ``torch.load(weights_only=True)``.

A checkpoint is a dict of Python scalars, strings, lists, dicts and tensors only: the resolved
config, the vocabularies, the label inventory, the system name and options, the library and
format versions, the model's ``state_dict``, the dev metrics, what the training treebank says
of segmenting raw text (its multiword tokens, :class:`~neuralparse.io.multiword.MultiwordLexicon`,
and where it ends sentences, :class:`~neuralparse.io.sentence_splitter.SentenceSplitter`;
absent from checkpoints written before them) and, for resuming, the training progress
(epoch, best score, optimizer state).  Tensors are saved from the CPU, so a checkpoint
trained on a GPU loads on a CPU-only machine.

Loading refuses with a :class:`CheckpointError` naming the file and what is wrong: a file that
is missing, empty, truncated or not a checkpoint, a pickle that would run code (torch's
``weights_only`` loader refuses it; so do we, without suggesting to switch it off), a newer
format, an entry that is missing or of the wrong type, an unknown system, or weights that do
not fit the model the checkpoint's own configuration describes.
"""

from __future__ import annotations

import functools
import logging
import os
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from neuralparse.config import ModelConfig
from neuralparse.errors import InputError
from neuralparse.io.multiword import MultiwordLexicon
from neuralparse.io.raw import Segmentation
from neuralparse.io.sentence_splitter import SentenceSplitter
from neuralparse.io.sources import partial_file, replacing
from neuralparse.model.contextual import ContextualEncoder
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import Vocabularies
from neuralparse.runtime.interrupts import interruptions_held
from neuralparse.systems import SYSTEMS, TransitionSystem, get_system
from neuralparse.version import __version__

log = logging.getLogger("neuralparse.checkpoint")

FORMAT_VERSION = 1
"""Bump when the layout changes incompatibly; older readers refuse newer files."""


SENTENCE_SPLITTERS = ("learned", "sentencizer")
"""Values of predict.py's ``sentence_splitter``."""


class CheckpointError(InputError):
    """A checkpoint that cannot be read by this version of the library."""


LAYOUT: dict[str, type] = {
    "system": str,
    "system_options": dict,
    "labels": list,
    "vocabularies": dict,
    "model": dict,
    "config": dict,
    "state_dict": dict,
}
"""The entries every checkpoint has, and their types."""
MODEL_LAYOUT: dict[str, type] = {"config": dict, "n_features": int, "n_actions": int}
"""The entries of a checkpoint's ``model`` description."""


@dataclass
class LoadedParser:
    """A model rebuilt from a checkpoint, with what it needs to parse."""

    model: ParserModel
    system: TransitionSystem
    vocabs: Vocabularies
    checkpoint: dict[str, Any]
    contextual: ContextualEncoder | None = None
    """The contextual encoder the model reads features of (``vocabs.contextual``), if any."""

    @functools.cached_property
    def multiwords(self) -> MultiwordLexicon:
        """The training treebank's multiword tokens (empty for a checkpoint written before
        neuralparse recorded them)."""
        return MultiwordLexicon.from_dict(self.checkpoint.get("multiword_tokens", {}))

    @functools.cached_property
    def sentence_splitter(self) -> SentenceSplitter | None:
        """Where the training treebank ends sentences (None for a checkpoint written before
        neuralparse learned it)."""
        weights = self.checkpoint.get("sentence_splitter")
        return SentenceSplitter.from_dict(weights) if weights else None

    def segmentation(
        self, multiword_tokens: bool = True, sentence_splitter: str = "learned"
    ) -> Segmentation:
        """How raw text is segmented for this model (logged): its multiword tokens unless
        ``multiword_tokens`` is false, and its sentence splitter with ``"learned"`` (spaCy's
        sentencizer with ``"sentencizer"``, or when the checkpoint has none)."""
        if sentence_splitter not in SENTENCE_SPLITTERS:
            raise InputError(
                f"sentence_splitter must be one of {', '.join(SENTENCE_SPLITTERS)}, not "
                f"{sentence_splitter!r}"
            )
        multiwords = self.multiwords if multiword_tokens else MultiwordLexicon()
        learned = self.sentence_splitter if sentence_splitter == "learned" else None
        if learned is not None:
            ends = "where the training treebank ends them"
        elif sentence_splitter == "learned":
            ends = "at punctuation (spaCy's sentencizer: the checkpoint has no learned splitter)"
        else:
            ends = "at punctuation (spaCy's sentencizer)"
        log.info(
            "raw text: sentences end %s; %d forms split as multiword tokens", ends, len(multiwords)
        )
        return Segmentation(multiwords, learned)


def _cpu(value: Any) -> Any:
    """A deep copy of plain data with every tensor moved to the CPU (copied there too: a
    snapshot never changes with the model it was taken from)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu", copy=True)
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
    segmentation: Segmentation | None = None,
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
        **_segmentation_entries(segmentation or Segmentation()),
    }


def _segmentation_entries(segmentation: Segmentation) -> dict[str, Any]:
    splitter = segmentation.sentences
    return {
        "multiword_tokens": segmentation.multiwords.to_dict(),
        "sentence_splitter": splitter.to_dict() if splitter is not None else {},
    }


def save_checkpoint(path: str | Path, data: dict[str, Any]) -> None:
    """Write atomically: into a temporary file of its own beside ``path``
    (``.NAME.RANDOM.partial``, so two runs saving the same checkpoint never write into one
    file), synced to disk and renamed over ``path``, so that a crash or an interruption never
    leaves a truncated checkpoint behind; the temporary file is removed on any failure.
    SIGTERM and Ctrl-C wait until the checkpoint is in place
    (:func:`~neuralparse.runtime.interrupts.interruptions_held`)."""
    path = Path(path)
    with interruptions_held():
        handle, partial = partial_file(path, binary=True)
        with replacing(path, handle, partial):
            torch.save(data, handle)
            handle.flush()
            os.fsync(handle.fileno())


def _unreadable(path: Path, error: Exception) -> CheckpointError:
    """Why ``torch.load(weights_only=True)`` could not read ``path``, in one line.  torch's
    own message for a refused pickle ends with advice to switch the check off: never quoted."""
    text = str(error)
    called = re.search(r"GLOBAL (\S+)", text)
    if called:
        return CheckpointError(
            f"refused: the file is a pickle that calls {called.group(1)}, not the plain data "
            "(tensors, numbers, strings, lists, dicts) of a neuralparse checkpoint; neuralparse "
            "refuses to unpickle code",
            source=str(path),
        )
    detail = re.search(r"WeightsUnpickler error:\s*(\S.*)", text)
    if detail:
        reason = detail.group(1).strip()
    elif "weights_only" in text:
        reason = "not plain data"
    else:
        reason = "an empty file" if path.stat().st_size == 0 else (text.splitlines() or [""])[0]
    return CheckpointError(
        "not a readable neuralparse checkpoint (truncated, or not written by torch.save"
        + (f": {reason})" if reason else ")"),
        source=str(path),
    )


def _entry_problem(data: dict[str, Any]) -> str | None:
    """What is missing or of the wrong type in a checkpoint's entries (see :data:`LAYOUT`)."""
    for layout, entries, prefix in (
        (LAYOUT, data, ""),
        (MODEL_LAYOUT, data.get("model"), "model."),
    ):
        for key, kind in layout.items():
            if key not in entries:
                return f"it has no {prefix}{key} entry"
            if not isinstance(entries[key], kind) or isinstance(entries[key], bool):
                return (
                    f"its {prefix}{key} entry is of type {type(entries[key]).__name__}, "
                    f"not {kind.__name__}"
                )
    if not all(isinstance(label, str) for label in data["labels"]):
        return "its labels are not all strings"
    if not all(isinstance(value, torch.Tensor) for value in data["state_dict"].values()):
        return "its state_dict holds values that are not tensors"
    if not isinstance(data.get("training"), dict | None):
        return f"its training entry is of type {type(data['training']).__name__}, not dict"
    try:
        MultiwordLexicon.from_dict(data.get("multiword_tokens", {}))
        SentenceSplitter.from_dict(data.get("sentence_splitter", {}))
    except ValueError as error:
        return str(error)
    return None


def load_checkpoint(path: str | Path) -> dict[str, Any]:
    """Read a checkpoint onto the CPU, refusing what is not one, newer formats and
    incomplete entries clearly (see the module docstring)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        with warnings.catch_warnings():  # torch warns about foreign pickles before refusing
            warnings.simplefilter("ignore", UserWarning)
            data = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # torch raises several types for foreign or corrupt files
        raise _unreadable(path, error) from None
    if not isinstance(data, dict) or "format_version" not in data:
        raise CheckpointError("not a neuralparse checkpoint (no format_version)", source=str(path))
    version = data["format_version"]
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint format {version} (written by neuralparse "
            f"{data.get('library_version', '?')}) is newer than this library's format "
            f"{FORMAT_VERSION} (neuralparse {__version__}); upgrade neuralparse",
            source=str(path),
        )
    problem = _entry_problem(data)
    if problem is not None:
        raise CheckpointError(f"not a complete neuralparse checkpoint: {problem}", source=str(path))
    return data


def _reason(error: Exception) -> str:
    """The first line of an error's message (a missing key as ``missing 'key'``)."""
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r}" if error.args else "missing entry"
    text = str(error).splitlines()
    return text[0] if text else type(error).__name__


def weight_mismatch(expected: dict[str, torch.Tensor], given: dict[str, torch.Tensor]) -> str:
    """How a checkpoint's weights ``given`` differ in names and shapes from those of the model
    its configuration describes (``expected``), in a few words; empty when they fit."""
    problems = [f"{key} is missing" for key in expected if key not in given]
    problems += [f"{key} is not a weight of this model" for key in given if key not in expected]
    problems += [
        f"{key} has shape {list(given[key].shape)}, the configuration gives {list(tensor.shape)}"
        for key, tensor in expected.items()
        if key in given and given[key].shape != tensor.shape
    ]
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(problems[:3]) + more


def rebuild(
    data: dict[str, Any], device: torch.device | str = "cpu", source: str | Path | None = None
) -> LoadedParser:
    """Model, system and vocabularies of a loaded checkpoint, weights restored; a checkpoint
    whose entries do not fit together is a :class:`CheckpointError` naming ``source``."""
    where = {"source": str(source)} if source is not None else {}
    try:
        vocabs = Vocabularies.from_dict(data["vocabularies"])
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise CheckpointError(f"unreadable vocabularies ({_reason(error)})", **where) from None
    name = data["system"]
    if name not in SYSTEMS:
        raise CheckpointError(
            f"unknown transition system {name!r} (this version has {', '.join(sorted(SYSTEMS))})",
            **where,
        )
    try:
        system = get_system(name, data["labels"], **data["system_options"])
    except (TypeError, ValueError) as error:
        raise CheckpointError(
            f"system {name} with options {data['system_options']}: {_reason(error)}", **where
        ) from None
    description = data["model"]
    config = dict(description["config"])
    if "tag_input" not in config:
        # Written before the tagging heads existed: such a model embeds its input's tags.
        config["tag_input"] = "gold"
        log.warning(
            "%s checkpoint from neuralparse %s predates the tagger: it reads gold UPOS/XPOS/"
            "FEATS from its input and cannot tag; retrain for untagged text",
            name,
            data.get("library_version", "?"),
        )
    try:
        model = ParserModel(
            vocabs,
            ModelConfig.coerce(config),
            description["n_features"],
            description["n_actions"],
            description.get("n_summary", 0),
            system.arc_term_by_default,
        )
    except (InputError, TypeError, ValueError, KeyError, RuntimeError) as error:
        raise CheckpointError(
            f"its model configuration cannot be built ({_reason(error)})", **where
        ) from None
    if model.n_actions != system.num_actions:
        raise CheckpointError(
            f"checkpoint scores {model.n_actions} actions but system {system.name} with "
            f"{len(system.labels)} labels has {system.num_actions}",
            **where,
        )
    mismatch = weight_mismatch(model.state_dict(), data["state_dict"])
    if mismatch:
        raise CheckpointError(
            f"its weights do not fit the model its configuration describes: {mismatch}", **where
        )
    try:
        model.load_state_dict(data["state_dict"])
    except RuntimeError as error:
        raise CheckpointError(f"its weights cannot be loaded ({_reason(error)})", **where) from None
    contextual = None
    if vocabs.contextual is not None:
        spec = vocabs.contextual
        try:
            contextual = ContextualEncoder(
                spec.source, layers=spec.layers, expected_sha256=spec.sha256
            ).to(device)
        except InputError as error:
            raise CheckpointError(
                f"its contextual encoder {spec.source!r} cannot be loaded: {_reason(error)}",
                **where,
            ) from None
    model.to(device)
    model.eval()
    return LoadedParser(model, system, vocabs, data, contextual)


def load_parser(path: str | Path, device: torch.device | str = "cpu") -> LoadedParser:
    """The parser of the checkpoint ``path`` on ``device`` (:class:`CheckpointError` when the
    file is not a usable checkpoint)."""
    return rebuild(load_checkpoint(path), device, source=path)
