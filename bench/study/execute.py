"""Scoring a checked study: the generated world first when it asks for it, then every run through the runner
(:func:`bench.scoring.runner.score`), runs already complete skipped without loading their model, partial ones
resumed; then the report of all of them."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path

from bench.study.plan import WORLD_MODEL, Study, StudyError

LOG = "study.log"


def with_world(study: Study, home: Path) -> Study:
    """``study`` with its ``world:`` models resolved to their folders (built on first use) and, when it names a
    world size, the generated world made first; a benchmark path that still does not exist is a one-line error."""
    if study.world:
        from bench.devkit.world import ensure_sample

        ensure_sample(home / f"sample-{study.world}", size=study.world)
    missing = [(b.name, p) for b in study.benchmarks for p in (b.source.data_path, b.source.video_root)
               if p and not Path(p).exists()]
    if missing:
        raise StudyError(f"[[benchmarks]] {missing[0][0]}: {missing[0][1]} does not exist")
    models = {}
    configs = []
    for config in study.configs:
        if isinstance(config.model, str) and config.model.startswith(WORLD_MODEL):
            from bench.devkit.train.build import trained_model

            name = config.model[len(WORLD_MODEL):]
            if name not in models:
                models[name] = str(trained_model(name, home))
            config = dataclasses.replace(config, model=models[name])
        configs.append(config)
    return dataclasses.replace(study, configs=configs)


def complete(config) -> bool:
    """Whether ``config``'s run folder holds a complete run scored with these settings (a stored run scored with
    others is a one-line error naming the folder: the study does not overwrite it)."""
    import json

    from bench.scoring.plan import check_stored_run
    from bench.store.run import MANIFEST

    manifest = Path(config.out) / MANIFEST
    if not manifest.is_file():
        return False
    check_stored_run(config)
    return json.loads(manifest.read_text()).get("status") == "complete"


def run_study(study: Study, *, progress: bool = True) -> list[Path]:
    """Score every run of ``study`` (resolved by :func:`with_world`) into its runs folder; the run folders, in the
    study's order. One line per run on stdout; the runner's own messages go to ``<runs>/study.log``."""
    from tqdm.auto import tqdm

    from bench.frames import FrameCache
    from bench.scoring.runner import score

    study.runs.mkdir(parents=True, exist_ok=True)
    frames = FrameCache()
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
                    score(dataclasses.replace(config, progress=progress), frames)
            paths.append(Path(config.out))
    return paths

