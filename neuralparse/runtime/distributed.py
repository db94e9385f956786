"""Data-parallel training with ``torchrun`` (PyTorch DistributedDataParallel).

``torchrun --nproc_per_node=N train.py ...`` starts N processes with ``RANK``, ``WORLD_SIZE``
and ``LOCAL_RANK`` set.  Every rank prepares the same data and draws the same batches from the
same seeded generator; rank ``r`` trains on batches ``r, r + N, ...`` (the list cut to a
multiple of N so that every rank takes the same number of steps), DDP averages the gradients,
and rank 0 alone evaluates, logs and saves, then tells the others whether to stop.  The
backend is gloo on CPU and nccl on CUDA.  Without ``WORLD_SIZE`` (> 1) nothing here does
anything: a single process trains alone.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TypeVar

import torch
import torch.distributed as dist

T = TypeVar("T")


@dataclass(frozen=True)
class Distributed:
    """This process's place in the job."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def active(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, batches: list[T]) -> list[T]:
        """This rank's batches: every ``world_size``-th, equally many on every rank."""
        usable = len(batches) - len(batches) % self.world_size if self.active else len(batches)
        return batches[self.rank : usable : self.world_size]

    def sum(self, value: float) -> float:
        """Sum a number over all ranks."""
        if not self.active:
            return value
        tensor = torch.tensor([value], dtype=torch.float64, device=self._device())
        dist.all_reduce(tensor)
        return float(tensor.item())

    def broadcast_flag(self, flag: bool) -> bool:
        """Rank 0's ``flag`` on every rank."""
        if not self.active:
            return flag
        tensor = torch.tensor([int(flag)], device=self._device())
        dist.broadcast(tensor, 0)
        return bool(tensor.item())

    def barrier(self) -> None:
        if self.active:
            dist.barrier()

    def _device(self) -> torch.device:
        return (
            torch.device("cuda", self.local_rank)
            if dist.get_backend() == "nccl"
            else torch.device("cpu")
        )


def setup(device: torch.device) -> tuple[Distributed, torch.device]:
    """Join the ``torchrun`` job described by the environment, if any; returns the context and
    this rank's device (``cuda:LOCAL_RANK`` when training on CUDA)."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size <= 1:
        return Distributed(), device
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if device.type == "cuda":
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    return Distributed(rank, world_size, local_rank), device


def teardown(context: Distributed) -> None:
    if context.active and dist.is_initialized():
        dist.destroy_process_group()
