"""What the benchmarks and experiments share: timers for the library's decoding hooks, the
corpus-oracle loop and label inventory, untrained parsers, the shared data and JSON output.

Nothing here decodes or runs transitions itself: the loops are the library's
(:func:`neuralparse.search.greedy.greedy_decode_counted`, :func:`neuralparse.systems.run_oracle`,
:func:`neuralparse.training.transforms.prepare_trees`), called with measurement hooks.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from neuralparse.config import ModelConfig, preset_model_config
from neuralparse.datasets import treebank_paths
from neuralparse.io import Sentence, read_conllu
from neuralparse.io.sentence import UNSPECIFIED
from neuralparse.model.parser import ParserModel
from neuralparse.model.vocab import vocabularies_for
from neuralparse.runtime.checkpoint import LoadedParser, checkpoint_data, save_checkpoint
from neuralparse.systems import TransitionSystem, get_system, run_oracle
from neuralparse.training.transforms import prepare_trees

ROOT = Path(__file__).resolve().parents[1]
"""The checkout (where ``outputs/``, ``docs/`` and ``predict.py`` are)."""
LABEL_SAMPLE = 3000
"""Training sentences read for an untrained model's label inventory (labels only size the
output layer; a sample finds nearly all of them)."""


def synchronize(device: torch.device | str) -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@dataclass
class Timers:
    """Accumulated seconds per named part, synchronised on CUDA so that the GPU work is counted
    where it is issued: the ``timer`` hook of
    :func:`~neuralparse.search.greedy.greedy_decode_counted`, and a timer of its own."""

    device: torch.device
    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def __call__(self, part: str) -> Iterator[None]:
        synchronize(self.device)
        start = time.perf_counter()
        try:
            yield
        finally:
            synchronize(self.device)
            self.seconds[part] = self.seconds.get(part, 0.0) + time.perf_counter() - start


# -- data ------------------------------------------------------------------------------------


def shared_split(treebank: str, split: str) -> Path:
    """The file of ``split`` of ``treebank`` (a path to a treebank directory, or a name under
    :func:`neuralparse.datasets.data_root`); never downloads."""
    directory = Path(treebank)
    if directory.is_dir():
        return directory / f"{split}.conllu"
    return treebank_paths(treebank, splits=(split,), download=False)[split]


def save_json(result: dict[str, Any], path: Path) -> None:
    """Write ``result`` as indented JSON into ``path`` (folders made) and say so."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"saved {path}")


def blank(sentence: Sentence) -> Sentence:
    """``sentence`` as input for prediction: no tags, no tree, no enhanced graph."""
    untagged = sentence.without_tags().without_deps()
    return dataclasses.replace(untagged, heads=None, deprels=[UNSPECIFIED] * len(sentence))


def spread(size: int, count: int) -> Iterator[int]:
    """Indices of ``count`` sentences of a file of ``size``: the whole file as many times as it
    fits, then sentences spread evenly over it, so that every count has the file's mix of
    sentence lengths (a prefix would leave out the long sentences of the file's end, and peak
    memory follows the longest batches)."""
    whole, rest = divmod(count, size)
    for _ in range(whole):
        yield from range(size)
    yield from (k * size // rest for k in range(rest))


def write_blanked(source: Path, path: Path, count: int, *, evenly: bool = False) -> int:
    """Write ``count`` blanked sentences of ``source`` into ``path``: the file over and over,
    or with ``evenly`` the file's mix (:func:`spread`); returns the number of words."""
    blocks = [(blank(s).to_conllu(), len(s)) for s in read_conllu(source)]
    if evenly:
        indices: Iterable[int] = spread(len(blocks), count)
    else:
        indices = (k % len(blocks) for k in range(count))
    words = 0
    with path.open("w", encoding="utf-8", newline="") as out:
        for index in indices:
            block, length = blocks[index]
            out.write(block)
            words += length
    return words


# -- the static oracle over a corpus -----------------------------------------------------------


def training_trees(
    name: str, sentences: Sequence[Sentence], **options: Any
) -> tuple[TransitionSystem, list[tuple[list[int], list[str]]]]:
    """The trees system ``name`` is trained to derive for the ``sentences`` (lifted or encoded
    as the trainer prepares them), and the system labelled with their label inventory."""
    unlabeled = get_system(name, (), **options)
    gold = [(s.heads, s.deprels) for s in sentences if s.heads is not None]
    trees, _ = prepare_trees(unlabeled, gold)
    labels = sorted({label for _, deprels in trees for label in deprels})
    return get_system(name, labels, **options), trees


def oracle_derivations(
    system: TransitionSystem,
    trees: Sequence[tuple[Sequence[int], Sequence[str] | None]],
    *,
    batch_size: int = 256,
    device: torch.device | str = "cpu",
) -> list[tuple[list[int], bool]]:
    """``(actions, reproduced)`` of the static oracle's derivation of each tree, in order, run
    on the engine ``batch_size`` trees at a time (trees sorted by length run fastest)."""
    derivations: list[tuple[list[int], bool]] = []
    for lo in range(0, len(trees), batch_size):
        result = run_oracle(system, trees[lo : lo + batch_size], device)
        derivations.extend(zip(result.actions, result.reproduced, strict=True))
    return derivations


# -- untrained parsers -------------------------------------------------------------------------


def untrained_parser(
    system_name: str,
    vocab_sentences: Sequence[Sentence],
    device: torch.device | str,
    config: ModelConfig | None = None,
) -> LoadedParser:
    """A randomly initialised parser of ``config``'s size (default: the default preset) for
    ``system_name``, with the vocabularies of ``vocab_sentences`` and the label inventory of
    their first :data:`LABEL_SAMPLE` (for speed and memory measurements only)."""
    config = config or preset_model_config("default")
    system, _ = training_trees(system_name, vocab_sentences[:LABEL_SAMPLE])
    vocabs = vocabularies_for(vocab_sentences, config)
    torch.manual_seed(0)
    model = ParserModel.for_system(vocabs, config, system).to(device).eval()
    return LoadedParser(model, system, vocabs, {"config": {"model": asdict(config)}})


def with_graph_rule(loaded: LoadedParser, rule: str) -> LoadedParser:
    """``loaded`` with its two-registers system rebuilt with ``graph_rule=rule`` (the rest of
    its options as the checkpoint has them)."""
    options = {**loaded.checkpoint.get("system_options", {}), "graph_rule": rule}
    system = get_system(loaded.system.name, loaded.system.labels, **options)
    return dataclasses.replace(loaded, system=system)


def predict_command(
    checkpoint: Path, source: Path, output: Path, threads: int, *options: str
) -> list[str]:
    """The command line of ``predict.py`` parsing ``source`` into ``output`` on the CPU with
    ``threads`` torch threads and no progress bar, plus ``options`` (``key=value``)."""
    return [
        sys.executable, str(ROOT / "predict.py"), f"checkpoint={checkpoint}",
        f"input={source}", f"output={output}", "device=cpu", "progress=false",
        f"threads={threads}", *options,
    ]  # fmt: skip


def untrained_checkpoint(vocab_source: Path, path: Path, system: str = "arc_eager") -> Path:
    """The untrained default model of ``system`` with ``vocab_source``'s vocabularies, saved."""
    loaded = untrained_parser(system, read_conllu(vocab_source), "cpu")
    data = checkpoint_data(
        model=loaded.model, system=loaded.system, system_options={}, vocabs=loaded.vocabs,
        config=loaded.checkpoint["config"],
    )  # fmt: skip
    save_checkpoint(path, data)
    return path
