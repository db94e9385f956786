"""neuralparse: neural transition-based dependency parsing, including non-projective systems."""

__version__ = "0.1.0"
