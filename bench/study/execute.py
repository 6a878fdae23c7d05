"""Scoring a checked study: the generated world first when it asks for it, then every run through the runner
(:func:`bench.scoring.runner.score`), runs already complete skipped without loading their model, partial ones
resumed; then the report of all of them."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

from bench.study.plan import Study

LOG = "study.log"


def complete(config) -> bool:
    """Whether ``config``'s run folder holds a complete run scored with these settings (a stored run scored with
    others is a one-line error naming the folder: the study does not overwrite it)."""
    from bench.scoring.plan import check_stored_run
    from bench.store.run import MANIFEST, read_manifest

    if not (Path(config.out) / MANIFEST).is_file():
        return False
    check_stored_run(config)
    return read_manifest(config.out).status == "complete"


def run_study(study: Study, *, progress: bool = True) -> list[Path]:
    """Score every run of ``study`` (its ``world:`` models resolved) into its runs folder; the run folders, in the
    study's order. One line per run on stdout; the runner's own messages go to ``<runs>/study.log``."""
    from bench.scoring.runner import score
    from bench.scoring.shared import Shared

    study.runs.mkdir(parents=True, exist_ok=True)
    shared = Shared()
    paths = []
    total = len(study.configs)
    with open(study.runs / LOG, "a") as log:
        for n, config in enumerate(study.configs, 1):
            where = f"[{n}/{total}] {config.source.benchmark} {config.name}"
            if complete(config):
                print(f"{where}: complete, skipped")
            else:
                resumed = (Path(config.out) / "manifest.json").is_file()
                print(f"{where}: {'resuming' if resumed else 'scoring'} into {config.out}", flush=True)
                with contextlib.redirect_stderr(log if not progress else sys.stderr):
                    score(dataclasses.replace(config, progress=progress), shared)
            paths.append(Path(config.out))
    return paths

