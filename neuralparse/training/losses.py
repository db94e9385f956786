"""The loss of one training batch: the transition scorer's cross-entropy on the static
oracle's configurations (extracted once, :mod:`.examples`) or on those an exploring parse
reached (the dynamic oracle, :mod:`.exploration`), plus the tagging heads' cross-entropies and
the auxiliary arc scorer's (:mod:`neuralparse.model.arcs`)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from neuralparse.model.arcs import ArcScores, only_sentence_heads
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


def arc_loss(scores: ArcScores, batch: ModelInput) -> torch.Tensor:
    """The mean cross-entropies of the gold heads and of the gold relations over the words of
    ``batch`` (the auxiliary arc scorer's loss)."""
    if batch.heads is None or batch.relations is None:
        raise ValueError("the auxiliary arc loss needs the batch's gold heads and relations")
    arcs = only_sentence_heads(scores.arcs, batch.lengths)
    positions = torch.arange(arcs.shape[2], device=arcs.device)
    words = positions[None, 1:] <= batch.lengths[:, None]
    heads = batch.heads.masked_fill(~words, -1)
    head_loss = F.cross_entropy(arcs.flatten(0, 1), heads.flatten(), ignore_index=-1)
    relations = batch.relations.masked_fill(~words, PAD_INDEX)
    relation_loss = F.cross_entropy(
        scores.relations.flatten(0, 1), relations.flatten(), ignore_index=PAD_INDEX
    )
    return head_loss + relation_loss


def loss_on_batch(
    model: torch.nn.Module,
    corpus: EncodedCorpus,
    examples: OracleExamples,
    ids: torch.Tensor,
    device: torch.device,
    explorer: Explorer | None = None,
) -> tuple[torch.Tensor, int]:
    """Mean cross-entropy over the legal actions of every oracle configuration of the
    sentences ``ids``, in one tensor batch, plus the weighted tagging and arc losses; also
    returns the number of words.  ``model`` is a :class:`ParserModel`, possibly wrapped for
    data-parallel training.  Nothing here waits for the device (the words are counted on the
    host, the batch is copied from pinned memory), so on a GPU the host prepares the next
    steps while this one runs.  With an ``explorer`` the configurations are those the model
    reaches itself and the targets the dynamic oracle's (:mod:`.exploration`), which waits
    for the device at every transition."""
    inputs = corpus.batch(ids)
    words = int(inputs.lengths.sum())
    inputs = batch_to_device(inputs, device)
    if explorer is not None:
        loss, scores = explorer.loss(model, inputs, ids)
    else:
        batch = batch_to_device(examples.gather(ids), device)
        scores = model(inputs, Positions(batch.position, batch.tokens, batch.summary))
        loss = F.cross_entropy(mask_illegal(scores.actions, batch.legal), batch.actions)
    parser = getattr(model, "module", model)
    loss = loss + tag_loss(scores.tags, inputs, parser.tag_loss_weights)
    if scores.arcs is not None:
        loss = loss + parser.config.arc_loss_weight * arc_loss(scores.arcs, inputs)
    return loss, words
