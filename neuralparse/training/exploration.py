"""Training on the parser's own configurations: a dynamic oracle with error exploration.

Static-oracle training sees only the configurations of gold derivations, so a greedy parser
that makes one mistake at test time goes on from configurations it never learned from.
Goldberg & Nivre (2012; 2013) train instead on the configurations the parser
reaches itself: at each step the system's dynamic oracle
(:meth:`~neuralparse.systems.TransitionSystem.action_costs`) names the actions that lose the
fewest gold arcs, those are the targets, and the parser goes on with its own prediction even
when that is not a target, with probability ``exploration`` (otherwise with its best-scored
target).

Each batch is first parsed by the model, in evaluation mode and without gradients, on the
engine's state batch (:func:`explore`: tensor operations over the whole batch per
transition, as in greedy decoding); the configurations it went through are then scored in
one shot with gradients, like the static oracle's, and the loss is the negative log of the
probability the model gives to the targets (:meth:`Explorer.loss`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from neuralparse.model.inputs import ModelInput
from neuralparse.model.parser import ParserModel, summary_features
from neuralparse.model.scorer import NEG_INF, mask_illegal
from neuralparse.systems import TransitionSystem

Tree = tuple[Sequence[int], Sequence[str] | None]


@dataclass
class ExploredConfigurations:
    """The configurations one exploring parse of a batch went through, as training tensors."""

    position: Tensor
    """``[S]`` batch position of each configuration's sentence."""
    tokens: Tensor
    """``[S, F]`` feature tokens (-1 null)."""
    legal: Tensor
    """``[S, A]`` legal actions."""
    targets: Tensor
    """``[S, A]`` the cheapest legal actions (the dynamic oracle's)."""
    heads: Tensor
    """``[B, n_max + 1]`` the heads of the trees the exploring parse built (column 0 unused)."""
    summary: Tensor | None = None
    """``[S, E]`` float summary features, for systems that have them."""


@torch.no_grad()
def explore(
    model: ParserModel,
    system: TransitionSystem,
    batch: ModelInput,
    trees: Sequence[Tree],
    exploration: float,
    generator: torch.Generator,
) -> ExploredConfigurations:
    """Parse ``batch`` (on the model's device; ``trees`` its gold trees in the system's class)
    with the model, following its prediction when it is among the cheapest actions, or
    otherwise with probability ``exploration`` (``generator``: a CPU generator for those
    draws), and record every configuration on the way."""
    was_training = model.training
    model.eval()
    try:
        table = model.encode(batch)
        state = system.initial(batch.lengths, batch.lengths.device)
        gold = system.gold(trees, state.device)
        rows = torch.arange(state.batch_size, device=state.device)
        recorded: list[tuple[Tensor, ...]] = []
        summaries: list[Tensor] = []
        for _ in range(system.max_transitions(state.n_max)):
            active = ~system.terminal(state)
            if not bool(active.any()):
                break
            summary = summary_features(system, state) if model.n_summary else None
            features = system.features(state)
            legal = system.legal(state)
            scores = mask_illegal(model.score(table, rows, features, summary), legal)
            costs = system.action_costs(state, gold).masked_fill(
                ~legal, torch.iinfo(torch.long).max
            )
            targets = legal & (costs == costs.min(1, keepdim=True).values)
            predicted = scores.argmax(1)
            best_target = scores.masked_fill(~targets, NEG_INF).argmax(1)
            draws = torch.rand(state.batch_size, generator=generator).to(state.device)
            follow_model = targets.gather(1, predicted[:, None])[:, 0] | (draws < exploration)
            actions = torch.where(follow_model, predicted, best_target)
            recorded.append((rows[active], features[active], legal[active], targets[active]))
            if summary is not None:
                summaries.append(summary[active])
            system.follow(state, gold, actions)
            system.apply(state, actions)
    finally:
        model.train(was_training)
    position, tokens, legal, targets = (torch.cat(parts) for parts in zip(*recorded, strict=True))
    heads, _ = state.heads_and_labels()
    return ExploredConfigurations(
        position, tokens, legal, targets, heads, torch.cat(summaries) if summaries else None
    )


@dataclass
class Explorer:
    """Dynamic-oracle training of ``system`` on the gold ``trees`` of the training corpus
    (in the system's class, indexed like the corpus)."""

    system: TransitionSystem
    trees: Sequence[Tree]
    exploration: float
    """The probability of following the model's action when it is not one of the cheapest."""
    generator: torch.Generator
    """The CPU generator of the exploration draws (seeded per epoch by the trainer)."""

    def loss(
        self, model: torch.nn.Module, batch: ModelInput, ids: Tensor
    ) -> tuple[Tensor, dict[str, Tensor]]:
        """The mean transition loss over the configurations an exploring parse of ``batch``
        (the sentences ``ids``, on the model's device) went through, and the tagging heads'
        scores (``model``: a :class:`ParserModel`, possibly wrapped for data-parallel
        training)."""
        parser: ParserModel = getattr(model, "module", model)
        trees = [self.trees[i] for i in ids.tolist()]
        seen = explore(parser, self.system, batch, trees, self.exploration, self.generator)
        scores, tag_scores = model(batch, seen.position, seen.tokens, seen.summary)
        scores = mask_illegal(scores, seen.legal)
        on_targets = torch.logsumexp(scores.masked_fill(~seen.targets, NEG_INF), 1)
        return (torch.logsumexp(scores, 1) - on_targets).mean(), tag_scores
