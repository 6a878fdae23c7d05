"""Loud runs: the device at the start, a one-line summary at the end, a non-zero exit when all items (or more than
--max-failure-rate) fail, bad frame policies refused before anything loads, and the summary beside metrics."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bench.cli import main
from bench.loaders import load
from bench.store import read_run
from bench.store.summary import RunSummary, short, summarize


def score_args(sample, tiny, out, *extra, video_root=None):
    s = sample["vitatecs"]
    return ["score", "vitatecs", str(s.data_path), "--video-root", str(video_root or s.video_root),
            "--model", tiny("clip"), "--frames", "uniform:k=2", "--out", str(out), "--quiet", *extra]


def videos_without(sample, tmp_path, n_missing):
    """A copy of the VITATECS sample videos without the videos of the first ``n_missing`` items."""
    s = sample["vitatecs"]
    root = tmp_path / "videos"
    shutil.copytree(s.video_root, root)
    items = list(load("vitatecs", s.data_path, video_root=root))
    gone = {it.clips[0].path for it in items[:n_missing]}
    for path in gone:
        Path(path).unlink()
    return root, items, sum(1 for it in items if it.clips[0].path in gone)


def test_a_run_whose_items_all_fail_is_stored_and_exits_non_zero_with_its_reasons(sample, tiny, tmp_path, capsys):
    empty = tmp_path / "no-videos"
    empty.mkdir()
    code = main(score_args(sample, tiny, tmp_path / "run", video_root=empty))
    err = capsys.readouterr().err
    run = read_run(tmp_path / "run")
    n = run.manifest.n_items
    assert code == 1 and run.manifest.status == "complete" and run.manifest.extra["failed"] == n
    assert f"run: {n} items: 0 scored, {n} failed ({n} x no such file)" in err
    assert f"error: all of the {n} items failed; the run is stored in" in err
    assert f"{n:6d} x no such file" in err
    assert main(score_args(sample, tiny, tmp_path / "run", video_root=empty)) == 1, "re-running does not hide it"


def test_a_partly_failed_run_passes_unless_it_exceeds_the_allowed_failure_rate(sample, tiny, tmp_path, capsys):
    root, items, missing = videos_without(sample, tmp_path, 2)
    assert 0 < missing < len(items)
    assert main(score_args(sample, tiny, tmp_path / "ok", video_root=root)) == 0
    err = capsys.readouterr().err
    assert f"ok: {len(items)} items: {len(items) - missing} scored, {missing} failed ({missing} x no such file)" in err
    assert "on cpu (--device auto)" in err
    strict = score_args(sample, tiny, tmp_path / "strict", "--max-failure-rate", "0.05", video_root=root)
    assert main(strict) == 1
    assert "(more than 5.0%) of the" in capsys.readouterr().err
    assert summarize(read_run(tmp_path / "strict")).failed == missing


@pytest.mark.parametrize("frames, message", [("uniform:k=abc", "k must be a positive integer, got 'abc'"),
                                              ("uniform:k=0", "k must be a positive integer, got 0"),
                                              ("fps:fps=0", "fps must be a finite number > 0")])
def test_bad_frame_policies_are_refused_before_the_model_loads(sample, tmp_path, capsys, frames, message):
    s = sample["vitatecs"]
    code = main(["score", "vitatecs", str(s.data_path), "--model", str(tmp_path / "no-model"), "--family",
                 "contrastive", "--frames", frames, "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "frame policy" in err and err.count("\n") == 1
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("option, value, message", [("--workers", "none", "--workers must be auto or a number"),
                                                    ("--workers", "0", "at least 1"),
                                                    ("--size", "big", "--size must be auto, full or WIDTHxHEIGHT"),
                                                    ("--max-failure-rate", "2", "between 0 and 1")])
def test_bad_speed_options_are_one_line_errors(sample, tiny, tmp_path, capsys, option, value, message):
    assert main(score_args(sample, tiny, tmp_path / "run", option, value)) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_device_auto_resolves_and_is_recorded(sample, tiny, tmp_path, capsys, monkeypatch):
    import torch

    from bench.scoring.devices import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cpu") == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") in ("cpu", "mps") and resolve_device("cuda:1") == "cuda:1"
    assert main(score_args(sample, tiny, tmp_path / "run", "--limit", "2", "--workers", "auto")) == 0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["device"] == resolve_device("auto") and manifest["decode_workers"] >= 1
    assert f"on {manifest['device']} (--device auto)" in capsys.readouterr().err


def test_the_summary_counts_items_once_per_reason_and_shortens_long_reasons():
    summary = RunSummary(10, 6, 4, {"no such file": 3, "x" * 400: 1})
    assert summary.failure_rate == 0.4
    assert summary.line().startswith("10 items: 6 scored, 4 failed (3 x no such file; 1 x xxx")
    assert len(short("y " * 500)) == 160 and short("a\nb") == "a b"
    assert RunSummary(5, 2, 1).line() == "5 items: 2 scored, 1 failed, 2 not scored"
