"""The parser network: :class:`Encoder` (BiLSTM and tagging heads) + :class:`Scorer` (MLP)
for one system, and in training the auxiliary :class:`ArcScorer`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from typing import Any, NamedTuple

import torch
from torch import Tensor, nn

from neuralparse.config import ModelConfig
from neuralparse.model.arcs import ArcScorer, ArcScores
from neuralparse.model.encoder import Encoder, best_tags
from neuralparse.model.inputs import EncodedCorpus, ModelInput
from neuralparse.model.scorer import Scorer, TokenTable
from neuralparse.model.vocab import Vocabularies
from neuralparse.systems import State, TransitionSystem


def summary_feature_size(system: TransitionSystem) -> int:
    """Width of a system's per-configuration summary features
    (:meth:`TransitionSystem.summary_features`; the three-step system's valency summary,
    Table 6), 0 for systems without one."""
    return system.summary_size


def summary_features(system: TransitionSystem, state: State) -> Tensor | None:
    """``[B, E]`` float summary features of the configurations (None when the system has
    none)."""
    return system.summary_features(state) if system.summary_size else None


class Positions(NamedTuple):
    """Configurations of a batch to score."""

    sentence: Tensor
    """``[S]`` batch position of each configuration's sentence."""
    tokens: Tensor
    """``[S, F]`` feature tokens (-1 null)."""
    summary: Tensor | None = None
    """``[S, E]`` summary features, for systems that have them."""


class ModelScores(NamedTuple):
    """What :meth:`ParserModel.forward` computes for training."""

    actions: Tensor
    """``[S, A]`` the action scores of the configurations."""
    tags: dict[str, Tensor]
    """``{column: [B, T + 1, classes]}`` the tagging heads' scores."""
    arcs: ArcScores | None
    """The auxiliary arc scorer's scores (a model with ``arc_loss_weight``, given a batch
    with gold ``heads``), else None."""


class ParserModel(nn.Module):
    """Scores a system's actions: encode a batch once (:meth:`encode`, or
    :meth:`encode_and_tag` for the tagging heads' scores too), then score any number of
    configurations of it (:meth:`score`), or both at once (:meth:`forward`)."""

    def __init__(
        self,
        vocabs: Vocabularies,
        config: ModelConfig,
        n_features: int,
        n_actions: int,
        n_summary: int = 0,
        arc_term: bool = True,
    ) -> None:
        super().__init__()
        self.config = ModelConfig.coerce(config)
        self.arc_term = arc_term
        """Whether decoding applies the config's ``arc_decoding_weight`` when the caller names
        no weight: the system's :attr:`TransitionSystem.arc_term_by_default`."""
        self.n_features = n_features
        self.n_actions = n_actions
        self.n_summary = n_summary
        self.encoder = Encoder(vocabs, self.config)
        self.scorer = Scorer(
            self.encoder.output_dim,
            n_features,
            self.config.mlp_hidden,
            n_actions,
            self.config.dropout,
            n_summary,
        )
        self.arcs = None
        if self.config.arc_loss_weight > 0:
            if vocabs.relations is None:
                raise ValueError("model.arc_loss_weight needs the relation vocabulary")
            self.arcs = ArcScorer(
                self.encoder.output_dim,
                len(vocabs.relations),
                self.config.dropout,
                self.config.arc_hidden,
            )

    @classmethod
    def for_system(
        cls, vocabs: Vocabularies, config: ModelConfig, system: TransitionSystem
    ) -> ParserModel:
        """A model sized for ``system``'s features, summary features and actions."""
        return cls(
            vocabs,
            config,
            len(system.feature_names),
            system.num_actions,
            summary_feature_size(system),
            system.arc_term_by_default,
        )

    @property
    def default_arc_weight(self) -> float:
        """The arc term's weight in decoding when the caller names none."""
        return self.config.arc_decoding_weight if self.arc_term else 0.0

    @property
    def tagged_columns(self) -> tuple[str, ...]:
        """The tag columns (``upos``, ``xpos``, ``feats``) that the model predicts."""
        return self.encoder.tagged_columns

    @property
    def tag_loss_weights(self) -> dict[str, float]:
        """``{column: weight}`` of each tagging head's loss in training."""
        return {c: float(getattr(self.config, f"{c}_loss_weight")) for c in self.tagged_columns}

    @property
    def reads_gold_tags(self) -> bool:
        """Whether the model reads the input's tag columns (a gold-tag model)."""
        return self.config.reads_gold_tags

    def char_vectors(self, corpus: EncodedCorpus, device: torch.device) -> Tensor | None:
        """``[U, char_out]`` the character vectors of the ``U`` distinct forms of ``corpus``
        on ``device``, for :meth:`EncodedCorpus.batch` (None without a character model)."""
        if self.encoder.chars is None or corpus.char_table is None:
            return None
        return self.encoder.chars(corpus.char_table.to(device))

    def encode(self, batch: ModelInput, arc_weight: float | None = None) -> TokenTable:
        return self.encode_and_tag(batch, arc_weight)[0]

    def encode_and_tag(
        self, batch: ModelInput, arc_weight: float | None = None
    ) -> tuple[TokenTable, dict[str, Tensor]]:
        """The projected token table and the tagging heads' scores
        ``{column: [B, T + 1, classes]}`` (row 0 is the root's).  With an arc scorer and an
        arc term's weight above 0 (``arc_weight``, default :attr:`default_arc_weight`), the
        table carries the arc log-probabilities and the weight that decoding gives them."""
        weight = self.default_arc_weight if arc_weight is None else arc_weight
        vectors, tag_scores = self.encoder(batch)
        table = self.scorer.project(vectors)
        if self.arcs is not None and weight > 0:
            table.arc_log_probs = self.arcs.head_log_probs(vectors, batch.lengths)
            table.arc_weight = weight
        return table, tag_scores

    @staticmethod
    def best_tags(tag_scores: dict[str, Tensor]) -> dict[str, Tensor]:
        """``{column: [B, T]}`` the best tag class of every word (the root row dropped)."""
        return {name: best_tags(scores[:, 1:]) for name, scores in tag_scores.items()}

    def score(
        self,
        table: TokenTable,
        sentence: Tensor,
        tokens: Tensor,
        summary: Tensor | None = None,
        actions: Tensor | None = None,
    ) -> Tensor:
        return self.scorer(table, sentence, tokens, summary, actions)

    def forward(
        self, batch: ModelInput, configurations: Positions | Callable[[TokenTable], Positions]
    ) -> ModelScores:
        """Action scores of the configurations, the tagging heads' scores of the batch and,
        when the model has the auxiliary arc scorer and the batch its gold heads, the arc
        scores.

        ``configurations`` may also be a function of the batch's token table that finds them
        (the dynamic oracle's exploring parse): the encoding it reads is then the one that is
        trained, computed once (and inside this call, which is what data-parallel training
        synchronises)."""
        vectors, tag_scores = self.encoder(batch)
        table = self.scorer.project(vectors)
        if callable(configurations):
            configurations = configurations(table)
        arcs = None
        if self.arcs is not None and batch.heads is not None:
            arcs = self.arcs(vectors, batch.heads)
        return ModelScores(self.score(table, *configurations), tag_scores, arcs)

    def describe(self) -> dict[str, Any]:
        """Plain-data description (for checkpoints and logs)."""
        return {
            "config": asdict(self.config),
            "n_features": self.n_features,
            "n_actions": self.n_actions,
            "n_summary": self.n_summary,
            "parameters": sum(p.numel() for p in self.parameters()),
        }
