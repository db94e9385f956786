"""Moved to :mod:`neuralparse.systems.three_step.reference`; this alias keeps
``experiments/three_step_oracle_coverage.py`` importing until it imports from there."""

from __future__ import annotations

from neuralparse.systems.three_step.reference import three_step_target, valency_oracle

__all__ = ["three_step_target", "valency_oracle"]
