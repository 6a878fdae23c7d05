"""How well the trained models do on the generated world: every model scored through the runner
(:func:`bench.scoring.runner.score`); the runs are pooled over benchmarks by foil type with
:func:`bench.metrics.pooled.pool_runs` (as ``foilbench metrics --pool foil_type`` does), and the Video-LLM runs'
answer bias is measured here.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from bench.config import DataSource, ScoreConfig


@dataclass(frozen=True)
class Model:
    """A model as the runner scores it: its folder, family, protocol and frame policy, and how many items per
    benchmark (``limit``: the first ones, or with ``spread`` an even spread over the file; None: all)."""

    path: str
    family: str
    protocol: str
    frame_policy: str = "uniform:k=8"
    limit: int | None = None
    spread: bool = False


def folder_name(run: str) -> str:
    """A run name as a folder name: ``X-CLIP reversed`` -> ``x-clip-reversed``."""
    return re.sub(r"[^a-z0-9]+", "-", run.lower()).strip("-")


def world_configs(models: Mapping[str, Model], suite: Mapping, out: str | Path, *,
                  benchmarks: Sequence[str] | None = None, progress: bool = False) -> list[ScoreConfig]:
    """One run per model and benchmark of ``suite`` (:func:`bench.devkit.world.ensure_sample`'s sets), run-major:
    named after its run, into ``out/<benchmark>-<folder name of the run>``."""
    configs = []
    for run, model in models.items():
        for name in benchmarks or list(suite):
            s = suite[name]
            source = DataSource.of(name, s.data_path, s.video_root, s.loader_options)
            configs.append(ScoreConfig(source, model.path, family=model.family, protocol=model.protocol,
                                       frame_policy=model.frame_policy, out=Path(out) / f"{name}-{folder_name(run)}",
                                       limit=model.limit, spread=model.spread, name=run, progress=progress))
    return configs


def score_world(models: Mapping[str, Model], suite: Mapping, out: str | Path, *,
                benchmarks: Sequence[str] | None = None, progress: bool = False, bar: bool = False,
                log: Path | None = None, before: Callable[[str], object] | None = None) -> list[Path]:
    """Score :func:`world_configs` with :func:`score_configs` (``bar``: one bar over the runs); the run folders, in
    that order."""
    from bench.scoring.console import progress_bar

    configs = world_configs(models, suite, out, benchmarks=benchmarks, progress=progress)
    with progress_bar(total=len(configs), desc="scoring", unit="run", disable=not bar) as shown:
        return score_configs(configs, bar=shown, log=log, before=before)


def score_configs(configs: Iterable[ScoreConfig], *, bar=None, log: Path | None = None,
                  before: Callable[[str], object] | None = None,
                  after: Callable[[ScoreConfig, Path], object] | None = None) -> list[Path]:
    """Score ``configs`` one after another, as they come (runs already stored are resumed, and scored again when they
    cannot be: scored before the world's models or files were rebuilt; each clip decoded, model loaded and file read
    once for all of them); the run folders, in that order. ``bar``: a progress bar told of each run; ``log``: a file
    the runner's messages are appended to instead of stderr; ``before``: called with each run's model path before the
    run is scored (the demo waits there for a model still being built); ``after``: called with each run's config and
    folder once it is stored."""
    from bench.scoring.runner import score
    from bench.scoring.shared import Shared
    from bench.store import RunMismatch

    shared = Shared()
    paths = []
    with contextlib.ExitStack() as stack:
        if log is not None:
            stack.enter_context(contextlib.redirect_stderr(stack.enter_context(open(log, "a"))))
        for config in configs:
            if before is not None:
                before(config.model)
            if bar is not None:
                bar.set_postfix_str(f"{config.name} on {config.source.benchmark}")
            try:
                paths.append(Path(score(config, shared)))
            except RunMismatch as stale:
                print(f"{stale}: scoring it again", file=sys.stderr)
                shutil.rmtree(config.out)
                paths.append(Path(score(config, shared)))
            if bar is not None:
                bar.update()
            if after is not None:
                after(config, paths[-1])
    return paths


def answer_bias(paths: Sequence[str | Path]) -> pd.DataFrame:
    """How much each Video-LLM run leans to an answer, over every question it was asked (all benchmarks pooled): for
    entail runs the mean P(Yes) (``score``) and the share of "Yes" (P(Yes) > 1/2); for mc runs the share of "A"
    answers. A tied answer (P(Yes) exactly 1/2, letters tied at the top) is neither
    (:mod:`bench.metrics.answers`): the shares are over the answers that chose, NaN when every answer tied. One row
    per run and measure: ``run``, ``protocol``, ``measure``, ``value`` (%), ``n`` (answers), ``tied``."""
    from bench.metrics.answers import Leaning, first_letter_answers, yes_answers
    from bench.store import read_run

    scores: dict[str, list[np.ndarray]] = {}
    leaning: dict[tuple[str, str], Leaning] = {}
    for path in paths:
        stored = read_run(path)
        protocol = stored.manifest.protocol
        if protocol == "entail":
            score = stored.pair["score"].dropna().to_numpy(float)
            scores.setdefault(stored.label, []).append(score)
            key, found = (stored.label, "share Yes"), yes_answers(score)
        elif protocol == "mc":
            key, found = (stored.label, "share A"), first_letter_answers(stored.choice)
        else:
            continue
        leaning[key] = leaning.get(key, Leaning(0, 0, 0)) + found
    table = []
    for (run, measure), found in leaning.items():
        if run in scores:
            values = np.concatenate(scores[run])
            table.append({"run": run, "measure": "P(Yes)", "value": 100 * float(values.mean()), "n": len(values),
                          "tied": found.tied})
        table.append({"run": run, "measure": measure, "value": 100 * found.share, "n": found.n, "tied": found.tied})
    return pd.DataFrame(table, columns=["run", "measure", "value", "n", "tied"])


BOTH_ORDERS = {"vitatecs": "accuracy (both orders)", "velociti": "MC A∧B"}  # A/B right with the caption at A and B


def both_orders(paths: Sequence[str | Path]) -> pd.DataFrame:
    """How often each multiple-choice run on VITATECS or VELOCITI picks the caption in both option orders (the
    benchmark's own metric, chance 1/4, an order decided by tied letters counted as not picked: a tie is not told
    apart): one row per run and benchmark, ``run``, ``benchmark``, ``value`` (%), ``n``."""
    from bench.metrics.dispatch import benchmark_outcomes
    from bench.store import read_run

    table = []
    for path in paths:
        run = read_run(path)
        benchmark = run.manifest.benchmark
        if run.manifest.protocol != "mc" or benchmark not in BOTH_ORDERS:
            continue
        outcomes = benchmark_outcomes(list(run.items()), run.pair, run.choice, benchmark=benchmark)
        right = outcomes.loc[outcomes["metric"] == BOTH_ORDERS[benchmark], "strict"]
        table.append({"run": run.label, "benchmark": benchmark, "value": 100 * float(right.mean()), "n": len(right)})
    return pd.DataFrame(table, columns=["run", "benchmark", "value", "n"])
