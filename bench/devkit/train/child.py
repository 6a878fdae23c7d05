"""The pinned build's child process (started by :func:`bench.devkit.train.pinned.start` with the pinned environment):
build the requested models here, oneDNN off, transformers' own bars (and its stale sliding-window warning) hidden as in
the parent.

    python -m bench.devkit.train.child '{"names": [...], "home": DIR, "seed": 0, "scale": {...}, "progress": true}'
"""

from __future__ import annotations

import json
import signal
import sys


def _stopped(signum, frame) -> None:
    """A SIGTERM ends the build as Ctrl-C would."""
    raise KeyboardInterrupt


# The parent's close() (SIGTERM) and Ctrl-C (SIGINT) stop the build as KeyboardInterrupt, which removes the half-built
# folder. A shell starts a background job (`foilbench demo &`) with SIGINT ignored, which its children inherit, so the
# parent stops this process with SIGTERM, which no shell ignores; set before the heavy imports below, so that one
# arriving during them is not lost (one arriving earlier ends the process before it has built anything).
signal.signal(signal.SIGTERM, _stopped)
signal.signal(signal.SIGINT, signal.default_int_handler)

from bench.devkit.train import pinned  # noqa: E402
from bench.devkit.train.build import Scale, trained_models  # noqa: E402
from bench.devkit.train.models import quiet_window_warning  # noqa: E402
from bench.scoring.console import quiet_library_bars  # noqa: E402


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
