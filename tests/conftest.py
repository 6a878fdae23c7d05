"""Shared fixtures: the real annotation files (skipped cleanly when absent)."""

from __future__ import annotations

import os
import shutil
import subprocess
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


@pytest.fixture(scope="session")
def sample(tmp_path_factory):
    """The embedded sample suite with every benchmark the world writes, generated once per test session."""
    from bench.devkit.world import generate_sample
    from bench.devkit.world.suite import WRITERS

    return generate_sample(tmp_path_factory.mktemp("sample") / "suite", benchmarks=list(WRITERS))


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """Folders of the tiny offline models, built once per test session: ``tiny("clip")``."""
    from bench.devkit.tiny_models import tiny_model

    root = tmp_path_factory.mktemp("tiny")
    return lambda name: str(tiny_model(name, root))


CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's chromium (installed with apt-get when missing; skip when that fails)."""
    found = shutil.which("chromium")
    if found is None:
        subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True, timeout=900)
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("chromium is not installed and apt-get could not install it")
    return found


@pytest.fixture(scope="session")
def trained_world(tmp_path_factory):
    """A data home holding the world's trained models and the full world, built once per session (a few minutes;
    ``$FOILBENCH_TEST_HOME`` names a home to keep them in between sessions): (home, the world's sample sets)."""
    from bench.devkit.train.build import MODELS, trained_models
    from bench.devkit.world import ensure_sample

    kept = os.environ.get("FOILBENCH_TEST_HOME")
    home = Path(kept) if kept else tmp_path_factory.mktemp("trained")
    trained_models(list(MODELS), home, progress=False)  # one pinned child: the training split decoded once
    return home, ensure_sample(home / "sample-full", size="full")


SLOW_FIXTURES = {"trained_world", "chromium"}  # the world's trained models (minutes to build); a browser


def pytest_collection_modifyitems(items):
    """Tests that need the trained world or a browser are ``slow``: ``pytest -m "not slow"`` leaves them out."""
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
