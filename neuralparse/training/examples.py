"""Static-oracle training examples, extracted once per run on the engine, batched.

For every training tree the static oracle's transition sequence is run on the engine
(:func:`neuralparse.systems.run_oracle`, many sentences at a time) and then replayed, batched,
to record each configuration's feature tokens, legal-action mask and gold action.  The result
is a flat table of all configurations of the corpus (sentence-contiguous) that the training
step slices with tensor indexing only: no Python loop over sentences or transitions.

Legal masks are stored bit-packed (8 actions per byte): with labeled actions there are
hundreds of actions per configuration and about two configurations per word.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from neuralparse.model.parser import summary_feature_size, summary_features
from neuralparse.systems import TransitionSystem, run_oracle

Tree = tuple[Sequence[int], Sequence[str] | None]
_BIT_WEIGHTS = torch.tensor([128, 64, 32, 16, 8, 4, 2, 1], dtype=torch.uint8)


def pack_mask(mask: Tensor) -> Tensor:
    """``[N, A]`` bool -> ``[N, ceil(A / 8)]`` uint8, most significant bit first."""
    n, width = mask.shape
    padded = torch.zeros((n, -(-width // 8) * 8), dtype=torch.uint8, device=mask.device)
    padded[:, :width] = mask.to(torch.uint8)
    weights = _BIT_WEIGHTS.to(mask.device)
    return (padded.view(n, -1, 8) * weights).sum(2, dtype=torch.uint8)


def unpack_mask(packed: Tensor, width: int) -> Tensor:
    """Inverse of :func:`pack_mask`."""
    weights = _BIT_WEIGHTS.to(packed.device)
    bits = (packed[:, :, None] & weights) != 0
    return bits.view(packed.shape[0], -1)[:, :width]


@dataclass
class Configurations:
    """Oracle configurations of a batch of sentences, as training tensors."""

    position: Tensor
    """``[S]`` batch position of each configuration's sentence."""
    tokens: Tensor
    """``[S, F]`` feature tokens (-1 null)."""
    legal: Tensor
    """``[S, A]`` legal actions."""
    actions: Tensor
    """``[S]`` the oracle's actions."""
    summary: Tensor | None = None
    """``[S, E]`` float summary features (three-step's valency summary), if any."""


@dataclass
class OracleExamples:
    """All oracle configurations of a corpus.

    Sentence ``i`` owns rows ``starts[i] : starts[i] + counts[i]`` of ``features [N, F]``
    (token indices, -1 null), ``legal [N, ceil(A / 8)]`` (packed), ``actions [N]`` and,
    for systems with summary features, ``summary [N, ceil(E / 8)]`` (packed booleans);
    ``counts[i] == 0`` for a sentence whose oracle did not reproduce its tree (excluded).
    """

    starts: Tensor
    counts: Tensor
    features: Tensor
    legal: Tensor
    actions: Tensor
    n_actions: int
    summary: Tensor | None = None
    n_summary: int = 0

    @property
    def n_configurations(self) -> int:
        return self.actions.shape[0]

    def usable(self) -> Tensor:
        """Ids of the sentences with at least one configuration."""
        return torch.nonzero(self.counts > 0)[:, 0]

    def gather(self, ids: Tensor) -> Configurations:
        """All configurations of the sentences ``ids``, sentence after sentence in batch
        order, by tensor indexing only."""
        counts = self.counts[ids]
        position = torch.repeat_interleave(torch.arange(len(ids)), counts)
        first = torch.repeat_interleave(self.starts[ids], counts)
        within = torch.arange(position.shape[0]) - torch.repeat_interleave(
            torch.cumsum(counts, 0) - counts, counts
        )
        rows = first + within
        summary = None
        if self.summary is not None:
            summary = unpack_mask(self.summary[rows], self.n_summary).float()
        return Configurations(
            position=position,
            tokens=self.features[rows].long(),
            legal=unpack_mask(self.legal[rows], self.n_actions),
            actions=self.actions[rows],
            summary=summary,
        )


def _record_chunk(
    system: TransitionSystem,
    trees: Sequence[Tree],
    sequences: Sequence[Sequence[int]],
    device: torch.device,
) -> tuple[Tensor, Tensor, Tensor, Tensor | None]:
    """Replay the oracle sequences of one chunk, batched, recording every configuration
    (computed on ``device``, returned on the CPU)."""
    lengths = [len(heads) for heads, _ in trees]
    state = system.initial(lengths, device)
    steps = max(len(s) for s in sequences)
    actions = torch.zeros((len(trees), steps), dtype=torch.long)
    for b, sequence in enumerate(sequences):
        actions[b, : len(sequence)] = torch.tensor(list(sequence), dtype=torch.long)
    actions = actions.to(device)
    features, legal, summaries = [], [], []
    for t in range(steps):
        features.append(system.features(state))
        legal.append(system.legal(state))
        summary = summary_features(system, state)
        if summary is not None:
            summaries.append(summary.bool())
        # Sequences end exactly at the terminal configuration, which `apply` leaves alone.
        system.apply(state, actions[:, t])
    seq_len = torch.tensor([len(s) for s in sequences], device=device)
    taken = torch.arange(steps, device=device)[None, :] < seq_len[:, None]  # row-major order
    feature_rows = torch.stack(features, 1)[taken]
    legal_rows = torch.stack(legal, 1)[taken]
    action_rows = actions[taken]
    rows = torch.arange(action_rows.shape[0], device=device)
    if not bool(legal_rows[rows, action_rows].all()):
        raise RuntimeError(f"{system.name}: a replayed oracle action is illegal")
    summary_rows = pack_mask(torch.stack(summaries, 1)[taken]).cpu() if summaries else None
    return feature_rows.cpu(), pack_mask(legal_rows).cpu(), action_rows.cpu(), summary_rows


def extract_oracle_examples(
    system: TransitionSystem,
    trees: Sequence[Tree],
    *,
    chunk_size: int = 512,
    device: torch.device | str = "cpu",
) -> tuple[OracleExamples, list[bool]]:
    """Oracle configurations of every tree, and per tree whether the oracle reproduced it.

    Trees are processed ``chunk_size`` at a time in length order (so a chunk's sentences need
    about as many transitions each), on ``device`` (a GPU runs large chunks at the cost of
    small ones); the examples are kept on the CPU.  Trees whose oracle fails get no
    configurations.
    """
    device = torch.device(device)
    order = sorted(range(len(trees)), key=lambda i: len(trees[i][0]))
    counts = torch.zeros(len(trees), dtype=torch.long)
    starts = torch.zeros(len(trees), dtype=torch.long)
    reproduced = [False] * len(trees)
    features, legal, actions, summaries = [], [], [], []
    offset = 0
    for begin in range(0, len(order), chunk_size):
        ids = order[begin : begin + chunk_size]
        chunk = [trees[i] for i in ids]
        result = run_oracle(system, chunk, device)
        kept = [k for k, ok in enumerate(result.reproduced) if ok and result.actions[k]]
        for k, ok in zip(ids, result.reproduced, strict=True):
            reproduced[k] = ok
        if not kept:
            continue
        sequences = [result.actions[k] for k in kept]
        rows = _record_chunk(system, [chunk[k] for k in kept], sequences, device)
        features.append(rows[0].to(torch.int32))
        legal.append(rows[1])
        actions.append(rows[2])
        if rows[3] is not None:
            summaries.append(rows[3])
        lengths = torch.tensor([len(s) for s in sequences])
        kept_ids = torch.tensor([ids[k] for k in kept])
        counts[kept_ids] = lengths
        starts[kept_ids] = offset + torch.cumsum(lengths, 0) - lengths
        offset += int(lengths.sum())
    n_features = len(system.feature_names)
    n_actions = system.num_actions
    n_summary = summary_feature_size(system)
    return (
        OracleExamples(
            starts=starts,
            counts=counts,
            features=torch.cat(features) if features else torch.zeros((0, n_features)),
            legal=(
                torch.cat(legal)
                if legal
                else torch.zeros((0, -(-n_actions // 8)), dtype=torch.uint8)
            ),
            actions=torch.cat(actions) if actions else torch.zeros(0, dtype=torch.long),
            n_actions=n_actions,
            summary=torch.cat(summaries) if summaries else None,
            n_summary=n_summary,
        ),
        reproduced,
    )
