"""What a run says before its model loads: videos it cannot find (the path it tried, and whether ``--video-root``
was given), how much of a stored run is already scored (``resuming: 224 of 800 items already scored``), and whether
it is already complete (then no model is loaded)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from bench.items import Item
from bench.store import read_run
from bench.store.run import MANIFEST


def missing_videos(items: Sequence[Item], video_root: str | None) -> str | None:
    """One line on the clips of ``items`` not found on disk (how many, the first path tried, made absolute, and
    where paths are taken from), or None when every clip is there."""
    paths = list(dict.fromkeys(c.path for it in items for c in it.clips))
    missing = [p for p in paths if not os.path.isfile(p)]
    if not missing:
        return None
    where = (f"under --video-root {video_root}" if video_root else
             f"no --video-root was given, so the paths are taken as the annotation names them, from {os.getcwd()}")
    return (f"{len(missing)} of {len(paths)} videos not found (first tried: {os.path.abspath(missing[0])}; {where}); "
            "their items will fail")


@dataclass(frozen=True)
class Stored:
    """What a run folder already holds of ``items``: ``done`` items stored (less the failed ones when they are to
    be retried), and whether the run is complete (every item stored, status complete, nothing to retry)."""

    done: int
    items: int
    complete: bool

    def line(self, out: Path) -> str | None:
        """What to say about it: complete, resuming, or nothing for a new run."""
        if self.complete:
            return (f"{out}: already complete ({self.items} items); nothing to score (--retry-failures scores its "
                    "failed items again, another --out scores anew)")
        if self.done:
            return f"resuming: {self.done} of {self.items} items already scored"
        return None


def stored_state(out: Path, items: Sequence[Item], retry_failures: bool = False) -> Stored:
    """The :class:`Stored` state of ``out`` for ``items`` (nothing done when no run is stored there)."""
    ids = {it.item_id for it in items}
    if not (Path(out) / MANIFEST).is_file():
        return Stored(0, len(ids), False)
    run = read_run(out)
    stored = set(run.scored["item_id"]) if run.scored is not None and len(run.scored) else set()
    failed = set(run.failures["item_id"]) if len(run.failures) else set()
    done = (stored - failed if retry_failures else stored) & ids
    complete = run.manifest.status == "complete" and done == ids and not (retry_failures and failed & ids)
    return Stored(len(done), len(ids), complete)
