"""The pinned build's child process (started by :func:`bench.devkit.train.pinned.start` with the pinned environment):
build the requested models here, oneDNN off, transformers' own bars (and its stale sliding-window warning) hidden as in
the parent.

    python -m bench.devkit.train.child '{"names": [...], "home": DIR, "seed": 0, "scale": {...}, "progress": true}'
"""

from __future__ import annotations

import json
import sys

from bench.devkit.train import pinned
from bench.devkit.train.build import Scale, trained_models
from bench.devkit.train.models import quiet_window_warning
from bench.scoring.console import quiet_library_bars


def main(argv: list[str] | None = None) -> None:
    """Build the models a JSON request names (``names``, ``home``, ``seed``, ``scale``, ``progress``)."""
    quiet_library_bars()
    quiet_window_warning()
    pinned.no_onednn()
    request = json.loads((argv if argv is not None else sys.argv[1:])[0])
    trained_models(request["names"], request["home"], seed=request["seed"], scale=Scale(**request["scale"]),
                   progress=request["progress"])


if __name__ == "__main__":
    main()
