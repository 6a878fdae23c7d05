"""Where things live on disk: the real annotation files (tests only) and the workbench's own data folder."""

from __future__ import annotations

import os
from pathlib import Path

REALDATA_ENV = "FOILBENCH_REALDATA"
HOME_ENV = "FOILBENCH_HOME"
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def realdata_dir() -> Path:
    """The folder of the benchmarks' real annotation files: ``$FOILBENCH_REALDATA`` or ``../shared/realdata``."""
    env = os.environ.get(REALDATA_ENV)
    return Path(env) if env else PROJECT_ROOT.parent / "shared" / "realdata"


def data_home() -> Path:
    """The workbench's data folder (sample suite, runs, reports): ``$FOILBENCH_HOME`` or ``./foilbench-data``."""
    return Path(os.environ.get(HOME_ENV, "foilbench-data")).resolve()
