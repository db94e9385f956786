"""Training on the parser's own configurations: a dynamic oracle with error exploration.

Static-oracle training sees only the configurations of gold derivations, so a greedy parser
that makes one mistake at test time goes on from configurations it never learned from.
Goldberg & Nivre (2012; 2013) train instead on the configurations the parser
reaches itself: at each step the system's dynamic oracle
(:meth:`~neuralparse.systems.TransitionSystem.action_costs`) names the actions that lose the
fewest gold arcs, those are the targets, and the parser goes on with its own prediction even
when that is not a target, with probability ``exploration`` (otherwise with its best-scored
target).

Each batch is encoded once, as the training step encodes it (dropout included), and parsed
with that encoding, without gradients (:func:`explore`: tensor operations over the whole batch
per transition, as in greedy decoding; the action scorer without its dropout, so that the
model's choice is its best guess); the configurations the parse went through are then
scored from the same encoding with gradients, like the static oracle's, and the loss is the
negative log of the probability the model gives to the targets (:meth:`Explorer.loss`).
Kiperwasser & Goldberg (2016) train their BiLSTM parser with this oracle the same way: the
sentence is encoded once and the parse reads the encoding it trains.  Parsing with a
separate encoding in evaluation mode instead costs a second pass of the BiLSTM for every
batch, for no better accuracy (docs/results.md, "Training on the parser's own mistakes").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from neuralparse.model.inputs import ModelInput
from neuralparse.model.parser import ModelScores, ParserModel, Positions, summary_features
from neuralparse.model.scorer import NEG_INF, TokenTable, mask_illegal
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
    table: TokenTable,
    lengths: Tensor,
    trees: Sequence[Tree],
    exploration: float,
    generator: torch.Generator,
) -> ExploredConfigurations:
    """Parse the batch encoded in ``table`` (sentence lengths ``lengths``, on the model's
    device; ``trees`` its gold trees in the system's class) with the model, following its
    prediction when it is among the cheapest actions, or otherwise with probability
    ``exploration`` (``generator``: a CPU generator for those draws), and record every
    configuration on the way."""
    scorer_was_training = model.scorer.training
    model.scorer.eval()
    try:
        state = system.initial(lengths, lengths.device)
        gold = system.gold(trees, state.device)
        rows = torch.arange(state.batch_size, device=state.device)
        # Every step's tensors are kept whole and the finished rows dropped once at the end:
        # selecting the live rows at each step would wait for the device four more times.
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
            recorded.append((active, features, legal, targets))
            if summary is not None:
                summaries.append(summary)
            system.follow(state, gold, actions)
            system.apply(state, actions)
    finally:
        model.scorer.train(scorer_was_training)
    active, tokens, legal, targets = (torch.stack(parts) for parts in zip(*recorded, strict=True))
    steps, position = torch.nonzero(active, as_tuple=True)  # step-major, as parsed
    heads, _ = state.heads_and_labels()
    return ExploredConfigurations(
        position,
        tokens[steps, position],
        legal[steps, position],
        targets[steps, position],
        heads,
        torch.stack(summaries)[steps, position] if summaries else None,
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
    ) -> tuple[Tensor, ModelScores]:
        """The mean transition loss over the configurations an exploring parse of ``batch``
        (the sentences ``ids``, on the model's device) went through, and the model's scores
        (``model``: a :class:`ParserModel`, possibly wrapped for data-parallel training)."""
        parser: ParserModel = getattr(model, "module", model)
        trees = [self.trees[i] for i in ids.tolist()]
        seen: ExploredConfigurations | None = None

        def parse(table: TokenTable) -> Positions:
            nonlocal seen
            seen = explore(
                parser, self.system, table, batch.lengths, trees, self.exploration, self.generator
            )
            return Positions(seen.position, seen.tokens, seen.summary)

        model_scores = model(batch, parse)
        assert seen is not None  # parse() ran inside the forward pass
        scores = mask_illegal(model_scores.actions, seen.legal)
        on_targets = torch.logsumexp(scores.masked_fill(~seen.targets, NEG_INF), 1)
        return (torch.logsumexp(scores, 1) - on_targets).mean(), model_scores
