"""Shared test fixtures: the shared UD data root and hypothesis profiles."""

import os
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

from neuralparse.runtime.devices import native_bfloat16

settings.register_profile(
    "ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", max_examples=200, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The engine's per-transition tensors are tiny: intra-op threads only add contention (measured
# about 10x slower replays on a loaded 2-core machine with torch's default thread count).
torch.set_num_threads(1)

SHARED_UD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ud"

needs_native_bfloat16 = pytest.mark.skipif(
    not native_bfloat16(torch.device("cpu")),
    reason="this CPU has no bfloat16 arithmetic: precision=bfloat16 encodes in float32",
)
"""For tests of encoding in bfloat16, which a CPU without AVX512-BF16 or AMX does not do."""


def shared_treebanks() -> list[Path]:
    """Directories of the shared UD treebanks, empty when the shared data is absent."""
    if not SHARED_UD.is_dir():
        return []
    return sorted(p for p in SHARED_UD.iterdir() if p.is_dir() and p.name.startswith("UD_"))


@pytest.fixture(scope="session")
def ud_root() -> Path:
    if not SHARED_UD.is_dir():
        pytest.skip(f"shared UD treebanks not found at {SHARED_UD}")
    return SHARED_UD


@pytest.fixture(scope="session")
def spacy_installed() -> None:
    """Skips a test of raw text without spaCy (the optional ``text`` extra)."""
    pytest.importorskip("spacy")
