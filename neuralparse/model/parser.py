"""The parser network: :class:`Encoder` (BiLSTM) + :class:`Scorer` (MLP) for one system."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from torch import Tensor, nn

from neuralparse.config import ModelConfig
from neuralparse.model.encoder import Encoder
from neuralparse.model.inputs import ModelInput
from neuralparse.model.scorer import Scorer, TokenTable
from neuralparse.model.vocab import Vocabularies
from neuralparse.systems import State, TransitionSystem


def summary_feature_size(system: TransitionSystem) -> int:
    """Width of a system's per-configuration summary features: the three-step system's
    valency summary (which labels θ holds, Table 6), 0 for systems without one."""
    if not hasattr(system, "valency_features"):
        return 0
    return int(system.valency_features(system.initial([1])).shape[1])


def summary_features(system: TransitionSystem, state: State) -> Tensor | None:
    """``[B, E]`` float summary features of the configurations (None when the system has
    none)."""
    if not hasattr(system, "valency_features"):
        return None
    return system.valency_features(state).float()


class ParserModel(nn.Module):
    """Scores a system's actions: encode a batch once (:meth:`encode`), then score any number
    of configurations of it (:meth:`score`), or both at once (:meth:`forward`)."""

    def __init__(
        self,
        vocabs: Vocabularies,
        config: ModelConfig,
        n_features: int,
        n_actions: int,
        n_summary: int = 0,
    ) -> None:
        super().__init__()
        self.config = ModelConfig.coerce(config)
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
        )

    def encode(self, batch: ModelInput) -> TokenTable:
        return self.scorer.project(self.encoder(batch))

    def score(
        self, table: TokenTable, sentence: Tensor, tokens: Tensor, summary: Tensor | None = None
    ) -> Tensor:
        return self.scorer(table, sentence, tokens, summary)

    def forward(
        self,
        batch: ModelInput,
        sentence: Tensor,
        tokens: Tensor,
        summary: Tensor | None = None,
    ) -> Tensor:
        return self.score(self.encode(batch), sentence, tokens, summary)

    def describe(self) -> dict[str, Any]:
        """Plain-data description (for checkpoints and logs)."""
        return {
            "config": asdict(self.config),
            "n_features": self.n_features,
            "n_actions": self.n_actions,
            "n_summary": self.n_summary,
            "parameters": sum(p.numel() for p in self.parameters()),
        }
