"""CPU time of the default model's training step: the library's dropout and Adam step against
torch's plain ones, in the same process and on the same batches.

neuralparse's :class:`~neuralparse.model.dropout.Dropout` draws its CPU masks 64 bits at a
time, and the trainer's Adam runs fused (one kernel per step).  This script builds the
default model of one system on one treebank twice with the same weights, gives one copy
``nn.Dropout`` and a plain ``torch.optim.Adam`` (what the trainer used before), and times the
same training batches with each, alternating the two ``--repeats`` times so that a busy
machine slows both alike.  It prints the CPU seconds of each round and the ratio of the
fastest rounds (library / torch), and saves them as JSON (``--out``).

    python -m benchmarks.training_step [--treebank UD_Greek-GDT] [--system arc_eager]
        [--batches 40] [--repeats 3] [--threads 1] [--data-root DIR] [--out PATH]
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import torch
from omegaconf import OmegaConf

from benchmarks.common import ROOT, save_json
from neuralparse.config import TrainConfig, preset_model_config
from neuralparse.datasets import treebank_paths
from neuralparse.errors import InputError
from neuralparse.model.dropout import Dropout
from neuralparse.model.parser import ParserModel
from neuralparse.runtime.batching import token_batches
from neuralparse.runtime.devices import describe_machine
from neuralparse.training.preparation import Prepared, prepare
from neuralparse.training.trainer import loss_on_batch

DEFAULT_JSON = ROOT / "outputs" / "benchmarks" / "training_step.json"


def with_torch_dropout(model: ParserModel) -> ParserModel:
    """A copy of ``model`` whose dropout layers are plain ``nn.Dropout`` (same weights)."""
    twin = copy.deepcopy(model)
    for module in twin.modules():
        if isinstance(module, Dropout):
            module.__class__ = torch.nn.Dropout
    return twin


def cpu_seconds(
    model: ParserModel, optimizer: torch.optim.Optimizer, data: Prepared, batches: list
) -> float:
    """Process CPU seconds of one training step (loss, backward, clipping, update) per batch."""
    device = torch.device("cpu")
    start = time.process_time()
    for ids in batches:
        loss, _ = loss_on_batch(model, data.train_corpus, data.examples, ids, device)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
    return time.process_time() - start


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--treebank", default="UD_Greek-GDT")
    parser.add_argument("--system", default="arc_eager")
    parser.add_argument("--batches", type=int, default=40, help="timed batches per round")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--data-root", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_JSON)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    try:
        files = treebank_paths(args.treebank, args.data_root, ("train", "dev"), download=False)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    cfg = OmegaConf.structured(TrainConfig)
    cfg.data.treebank = None
    cfg.data.train, cfg.data.dev = str(files["train"]), str(files["dev"])
    cfg.system.name = args.system
    cfg.model = OmegaConf.structured(preset_model_config("default"))
    data = prepare(cfg, torch.device("cpu"))
    torch.manual_seed(1)
    library = ParserModel.for_system(data.vocabs, cfg.model, data.system).train()
    plain = with_torch_dropout(library).train()
    lr, betas = cfg.trainer.lr, tuple(cfg.trainer.betas)
    variants = {
        "library": (library, torch.optim.Adam(library.parameters(), lr, betas, fused=True)),
        "torch": (plain, torch.optim.Adam(plain.parameters(), lr, betas)),
    }
    usable = data.examples.usable()
    generator = torch.Generator().manual_seed(1)
    lengths = data.train_corpus.lengths[usable]
    batches = [usable[b] for b in token_batches(lengths, 1000, generator=generator)]
    timed = [batches[i % len(batches)] for i in range(args.batches)]  # small treebanks repeat
    for model, optimizer in variants.values():  # warm-up: allocations, kernel choices
        cpu_seconds(model, optimizer, data, timed[:2])
    rounds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):
        for name, (model, optimizer) in variants.items():
            rounds[name].append(cpu_seconds(model, optimizer, data, timed))
    steps = len(timed)
    ratio = min(rounds["library"]) / min(rounds["torch"])
    for name, seconds in rounds.items():
        per_step = ", ".join(f"{1000 * s / steps:.1f}" for s in seconds)
        print(f"{name:8s} ms CPU per step: {per_step}")
    print(f"library / torch (fastest rounds): {ratio:.3f}")
    save_json(
        {
            "command": " ".join(["python -m benchmarks.training_step", *(argv or sys.argv[1:])]),
            "machine": describe_machine(torch.device("cpu")),
            "treebank": args.treebank,
            "system": args.system,
            "threads": args.threads,
            "steps_per_round": steps,
            "cpu_seconds": rounds,
            "ratio_library_to_torch": ratio,
        },
        args.out,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
