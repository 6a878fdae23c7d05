"""Shared fixtures: the real annotation files (skipped cleanly when absent)."""

from __future__ import annotations

from pathlib import Path

import av  # noqa: F401  (PyAV's FFmpeg must load before decord's bundled one, or libvpx encoding fails)
import pytest

from bench.paths import REALDATA_ENV, realdata_dir


@pytest.fixture(scope="session")
def realdata() -> Path:
    """The real annotation files, or skip with the reason."""
    root = realdata_dir()
    if not root.is_dir():
        pytest.skip(f"real annotation files not found at {root} (set {REALDATA_ENV} to their folder)")
    return root
