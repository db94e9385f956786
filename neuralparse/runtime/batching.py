"""Batches by token count with length buckets.

Sentences of similar length go together (little padding in the BiLSTM, and a batch's
sentences need about as many transitions), each batch holds about ``batch_tokens`` words, and
the batch order is shuffled.  Jittering the lengths before sorting varies the batches from
epoch to epoch; everything is drawn from the given generator, so a seed fixes the batches.
"""

from __future__ import annotations

import torch
from torch import Tensor


def token_batches(
    lengths: Tensor,
    batch_tokens: int,
    *,
    generator: torch.Generator | None = None,
    shuffle: bool = True,
    jitter: float = 0.1,
) -> list[Tensor]:
    """Partition the sentence ids ``0..len(lengths)-1`` into batches of at most
    ``batch_tokens`` words (a longer sentence is a batch on its own).

    With ``shuffle`` the lengths are jittered by a random factor in ``1 ± jitter`` before
    sorting and the batch order is random; without it batches follow increasing length.
    """
    if batch_tokens < 1:
        raise ValueError(f"batch_tokens must be positive, got {batch_tokens}")
    lengths = lengths.long()
    if lengths.numel() == 0:
        return []
    keys = lengths.double()
    if shuffle:
        noise = torch.rand(lengths.shape, generator=generator, dtype=torch.double)
        keys = keys * (1 + jitter * (2 * noise - 1))
    order = torch.argsort(keys, stable=True)
    sorted_lengths = lengths[order].tolist()
    batches: list[Tensor] = []
    start, tokens = 0, 0
    for i, length in enumerate(sorted_lengths):
        if tokens and tokens + length > batch_tokens:
            batches.append(order[start:i])
            start, tokens = i, 0
        tokens += length
    batches.append(order[start:])
    if shuffle:
        permutation = torch.randperm(len(batches), generator=generator).tolist()
        batches = [batches[i] for i in permutation]
    return batches
