"""The demo's second scoring process: the set-ups it is handed are stored with the scores the demo's own process
stores (bit for bit, one torch thread in both), every benchmark's runs are reported complete once, and the order the
demo scores in completes one benchmark after another in the last models' set-ups."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from bench.devkit import lane
from bench.devkit.demo import DEMO_RUNS, _stage, scoring_order, score_world
from bench.devkit.threads import torch_threads
from bench.devkit.world import ensure_sample
from bench.store import read_run


def test_the_last_models_set_ups_are_scored_benchmark_by_benchmark():
    benchmarks = ["vilma", "vitatecs", "velociti"]
    order = scoring_order(benchmarks)
    assert sorted(order) == sorted((run, b) for run in DEMO_RUNS for b in benchmarks)
    stages = [_stage(run) for run, _ in order]
    assert stages == sorted(stages) and len(set(stages)) > 1
    last = [b for run, b in order if _stage(run) == stages[-1]]
    assert last == sorted(last, key=benchmarks.index)  # each benchmark's runs together, in the benchmarks' order
    assert {DEMO_RUNS[run].model for run, _ in order if _stage(run) == stages[-1]} == {"qwen2vl-world",
                                                                                       "qwen2vl-world-biased"}


def _rows(run) -> pd.DataFrame:
    parts = [table.assign(part=name) for name, table in (("pair", run.pair), ("choice", run.choice))
             if table is not None and len(table)]
    return pd.concat(parts, ignore_index=True).astype(str).sort_values(["part", "item_id"], kind="stable")


@pytest.mark.slow
def test_a_second_process_stores_the_scores_the_demo_stores(trained_world, tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(trained_world[0] / "models", home / "models")
    world = home / "sample-small"
    samples = ensure_sample(world, size="small")
    started = []

    class Recorded(lane.Lane):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            started.append(self)

    monkeypatch.setattr(lane, "Lane", Recorded)
    complete = []
    with torch_threads(1):
        alone = score_world(tmp_path / "alone", samples, home, progress=False)
        shared = score_world(tmp_path / "shared", samples, home, progress=False, lane=(world, "small"),
                             finished=lambda benchmark, paths: complete.append((benchmark, len(paths))))
    assert len(started) == 1 and started[0].taken and started[0].process.returncode == 0  # it scored a share
    assert sorted(complete) == sorted((b, len(DEMO_RUNS)) for b in samples)  # each benchmark once, all its runs
    assert [p.name for p in shared] == [p.name for p in alone] and len(alone) == len(DEMO_RUNS) * len(samples)
    for one, other in zip(alone, shared):
        pd.testing.assert_frame_equal(_rows(read_run(one)), _rows(read_run(other)), check_exact=True)
