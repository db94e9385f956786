"""The library version, recorded in every checkpoint (kept apart so that importing it is cheap)."""

__version__ = "0.1.0"
