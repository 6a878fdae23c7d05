"""A live process holding a run folder, and a model folder that cannot load, for the lock tests."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HOLD = """
import sys, time
from bench.store.lock import RankHold, RunLock
held = {hold}
print("held", flush=True)
time.sleep(120)
"""


def holder(folder: Path, hold: str = "RunLock.acquire(sys.argv[1])") -> subprocess.Popen:
    """A live process holding ``folder``: the writer lock, or (``RankHold(sys.argv[1])``) a rank's hold."""
    folder.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen([sys.executable, "-c", HOLD.format(hold=hold), str(folder)], stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def weightless(model: str | Path, folder: Path) -> Path:
    """``folder`` with ``model``'s config.json and no weights: it passes every check made before loading, and loading
    it fails with an error of its own."""
    folder.mkdir(parents=True)
    shutil.copy(Path(model) / "config.json", folder)
    return folder
