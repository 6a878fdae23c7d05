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
    """The workbench's data folder (sample suite, runs, reports, video proxies), the same from any working directory
    (a notebook's kernel runs in ``notebooks/``): ``$FOILBENCH_HOME`` (a relative one from the working directory),
    else ``foilbench-data`` in the project checkout (beside ``bench/``), else ``~/foilbench-data`` for an install that
    is not a checkout."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser().resolve()
    if (PROJECT_ROOT / "pyproject.toml").is_file():
        return PROJECT_ROOT / "foilbench-data"
    return Path.home() / "foilbench-data"
