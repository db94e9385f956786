"""neuralparse: neural transition-based dependency parsing, including non-projective systems.

``from neuralparse import Parser`` loads a trained parser for notebooks and scripts
(:mod:`neuralparse.api`); it is imported lazily so that ``import neuralparse`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Parser", "__version__"]

if TYPE_CHECKING:
    from neuralparse.api import Parser


def __getattr__(name: str) -> Any:
    # Lazy: the API pulls in torch and the model, and the checkpoint module itself imports
    # neuralparse for __version__ (an eager import here would be circular).
    if name == "Parser":
        from neuralparse.api import Parser

        return Parser
    raise AttributeError(f"module 'neuralparse' has no attribute {name!r}")
