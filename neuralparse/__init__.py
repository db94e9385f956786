"""neuralparse: neural transition-based dependency parsing, including non-projective systems.

``from neuralparse import Parser`` loads a trained parser for notebooks and scripts
(:mod:`neuralparse.api`); it is imported lazily so that ``import neuralparse`` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from neuralparse.version import __version__

__all__ = ["Parser", "__version__"]

if TYPE_CHECKING:
    from neuralparse.api import Parser


def __getattr__(name: str) -> Any:
    # Lazy: the API pulls in torch and the model; `import neuralparse` alone stays light.
    if name == "Parser":
        from neuralparse.api import Parser

        return Parser
    raise AttributeError(f"module 'neuralparse' has no attribute {name!r}")
