"""The demo's second scoring process: the set-ups it is handed are stored with the scores the demo's own process
stores (bit for bit, one torch thread in both), every benchmark's runs are reported complete once, the order the demo
scores in completes one benchmark after another in the last models' set-ups; a second process that dies costs one
line and no run (the demo scores its share), and a demo interrupted while both score resumes what they stored."""

from __future__ import annotations

import shutil
import time

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


def test_a_second_process_that_fails_is_one_line_naming_its_log(tmp_path):
    log = tmp_path / "demo.log"
    request = {"out": str(tmp_path / "runs"), "home": str(tmp_path), "world": str(tmp_path / "no-world"),
               "size": "small", "models": {"CLIP": {"no_such_field": 1}}}
    second = lane.Lane(request, lambda: "vitatecs", lambda path: pytest.fail(f"nothing is stored: {path}"), log)
    try:
        failed = second.wait()
    finally:
        second.close()
    assert failed and "\n" not in failed and str(log) in failed and f"exit {second.process.returncode}" in failed
    assert second.process.returncode != 0 and "no_such_field" in log.read_text()  # its traceback went to the log
    assert not (tmp_path / "no-world").exists() and not (tmp_path / "runs").exists()  # the request checked first


def _rows(run) -> pd.DataFrame:
    parts = [table.assign(part=name) for name, table in (("pair", run.pair), ("choice", run.choice))
             if table is not None and len(table)]
    return pd.concat(parts, ignore_index=True).astype(str).sort_values(["part", "item_id"], kind="stable")


def _chunks(path) -> set[tuple[int, str]]:
    """Each stored chunk of a run and the launch that scored it."""
    scored = read_run(path).scored
    return set(zip(scored["chunk"], scored["launch"]))


@pytest.fixture(scope="module")
def world(trained_world, tmp_path_factory):
    """A home with the trained models and the small world, and the runs the demo's process stores alone."""
    home = tmp_path_factory.mktemp("lane") / "home"
    shutil.copytree(trained_world[0] / "models", home / "models")
    samples = ensure_sample(home / "sample-small", size="small")
    with torch_threads(1):
        alone = score_world(home / "alone", samples, home, progress=False)
    assert len(alone) == len(DEMO_RUNS) * len(samples)
    return home, samples, alone


def _same_scores(runs, alone) -> None:
    assert [p.name for p in runs] == [p.name for p in alone]
    for one, other in zip(alone, runs):
        pd.testing.assert_frame_equal(_rows(read_run(one)), _rows(read_run(other)), check_exact=True)


def _recorded(monkeypatch, kill_after: int | None = None) -> list[lane.Lane]:
    """Every second process the demo starts; with ``kill_after``, each killed (as the OOM killer would) once it has
    stored that many runs."""
    started = []

    class Recorded(lane.Lane):
        def __init__(self, request, take, stored, log):
            self.count = 0  # the runs it stored

            def told(path):
                stored(path)
                self.count += 1
                if self.count == kill_after:
                    self.process.kill()

            super().__init__(request, take, told, log)
            started.append(self)

    monkeypatch.setattr(lane, "Lane", Recorded)
    return started


@pytest.mark.slow
def test_a_second_process_stores_the_scores_the_demo_stores(world, tmp_path, monkeypatch):
    home, samples, alone = world
    started = _recorded(monkeypatch)
    complete = []
    with torch_threads(1):
        shared = score_world(tmp_path / "shared", samples, home, progress=False, lane=(home / "sample-small", "small"),
                             finished=lambda benchmark, paths: complete.append((benchmark, len(paths))))
    assert len(started) == 1 and started[0].taken and started[0].process.returncode == 0  # it scored a share
    assert sorted(complete) == sorted((b, len(DEMO_RUNS)) for b in samples)  # each benchmark once, all its runs
    _same_scores(shared, alone)


@pytest.mark.slow
def test_a_second_process_killed_mid_share_costs_one_line_and_no_run(world, tmp_path, monkeypatch, capsys):
    home, samples, alone = world
    started = _recorded(monkeypatch, kill_after=1)
    complete = []
    with torch_threads(1):
        shared = score_world(tmp_path / "shared", samples, home, progress=False, lane=(home / "sample-small", "small"),
                             finished=lambda benchmark, paths: complete.append((benchmark, len(paths))))
    assert len(started) == 1 and started[0].process.returncode == -9
    said = capsys.readouterr()
    failed = [line for line in said.err.splitlines() if "second scoring process failed" in line]
    assert len(failed) == 1 and "exit -9" in failed[0] and str(tmp_path / "shared" / "demo.log") in failed[0]
    assert "Traceback" not in said.out + said.err
    assert sorted(complete) == sorted((b, len(DEMO_RUNS)) for b in samples)  # each benchmark once, all its runs
    _same_scores(shared, alone)


@pytest.mark.slow
def test_a_demo_interrupted_while_both_processes_score_resumes_what_they_stored(world, tmp_path, monkeypatch):
    home, samples, alone = world
    started = _recorded(monkeypatch)
    out = tmp_path / "shared"

    def interrupted(name: str) -> None:  # Ctrl-C once the second process has stored a run of its share
        if name == "qwen2vl-world-biased":
            since = time.monotonic()
            while not started[0].count:
                assert time.monotonic() - since < 120, "the second process stored nothing"
                time.sleep(0.1)
            raise KeyboardInterrupt

    with torch_threads(1), pytest.raises(KeyboardInterrupt):
        score_world(out, samples, home, progress=False, lane=(home / "sample-small", "small"), ready=interrupted)
    assert len(started) == 1 and started[0].taken and started[0].process.returncode is not None  # stopped with it
    before = {p.parent: _chunks(p.parent) for p in out.glob("*/manifest.json")}
    assert 0 < len(before) < len(alone)
    with torch_threads(1):
        resumed = score_world(out, samples, home, progress=False, lane=(home / "sample-small", "small"))
    assert all(chunks <= _chunks(path) for path, chunks in before.items())  # every stored chunk kept, none redone
    _same_scores(resumed, alone)
