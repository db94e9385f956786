"""The loss of one training batch: the transition scorer's cross-entropy on the static
oracle's configurations (extracted once, :mod:`.examples`) or on those an exploring parse
reached (the dynamic oracle, :mod:`.exploration`), plus the tagging heads' cross-entropies."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from neuralparse.model.encoder import gold_tags
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.parser import Positions
from neuralparse.model.scorer import mask_illegal
from neuralparse.model.vocab import PAD_INDEX, UNK_INDEX
from neuralparse.runtime.devices import batch_to_device
from neuralparse.training.examples import OracleExamples
from neuralparse.training.exploration import Explorer


def tag_loss(
    tag_scores: dict[str, torch.Tensor], batch: ModelInput, weights: dict[str, float]
) -> torch.Tensor:
    """The weighted sum of the tagging heads' mean cross-entropies over the words of
    ``batch`` (zero for a model without heads)."""
    total = torch.zeros((), device=batch.lengths.device)
    for column, scores in tag_scores.items():
        gold = gold_tags(batch, column)
        if gold is None:
            raise ValueError(f"the model predicts {column} but the batch has no gold {column}")
        # The root row, padding and (impossible in training data) unknown tags score nothing.
        target = torch.where(gold == UNK_INDEX, PAD_INDEX, gold)
        loss = F.cross_entropy(scores.flatten(0, 1), target.flatten(), ignore_index=PAD_INDEX)
        total = total + weights[column] * loss
    return total


def loss_on_batch(
    model: torch.nn.Module,
    corpus: EncodedCorpus,
    examples: OracleExamples,
    ids: torch.Tensor,
    device: torch.device,
    explorer: Explorer | None = None,
) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over the legal actions of every oracle configuration of the
    sentences ``ids``, in one tensor batch, plus the weighted tagging losses; also returns the
    number of words.  ``model`` is a :class:`ParserModel`, possibly wrapped for
    data-parallel training.  Nothing here waits for the device (the words are counted on the
    host, the batch is copied from pinned memory), so on a GPU the host prepares the next
    steps while this one runs.  With an ``explorer`` the configurations are those the model
    reaches itself and the targets the dynamic oracle's (:mod:`.exploration`), which waits
    for the device at every transition."""
    inputs = corpus.batch(ids)
    words = int(inputs.lengths.sum())
    inputs = batch_to_device(inputs, device)
    if explorer is not None:
        loss, tag_scores = explorer.loss(model, inputs, ids)
    else:
        batch = batch_to_device(examples.gather(ids), device)
        scores, tag_scores = model(inputs, Positions(batch.position, batch.tokens, batch.summary))
        loss = F.cross_entropy(mask_illegal(scores, batch.legal), batch.actions)
    weights = getattr(model, "module", model).tag_loss_weights
    return loss + tag_loss(tag_scores, inputs, weights), words
