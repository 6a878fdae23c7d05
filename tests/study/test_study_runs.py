"""A study scored end to end with a tiny model on the sample suite: every run and control stored with its control in
the manifest, a second call skips them all, a killed study resumes; `foilbench compare` on its runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fixtures_study import world_benchmarks

from bench.cli import main
from bench.paths import PROJECT_ROOT
from bench.store import read_run

pytestmark = pytest.mark.slow
BENCHMARKS = ("vitatecs", "velociti")


def _study(tmp_path: Path, sample, tiny, controls: list[str]) -> Path:
    parts = ['[study]\nruns = "runs"\n']
    parts += world_benchmarks(sample, BENCHMARKS)
    parts.append(f'[[models]]\nname = "tiny"\nmodel = "{tiny("clip")}"\nfamily = "contrastive"\n'
                 f'frames = "uniform:k=4"\ncontrols = {json.dumps(controls)}\n')
    path = tmp_path / "study.toml"
    path.write_text("\n".join(parts))
    return path


def test_a_study_scores_every_run_and_control_once(sample, tiny, tmp_path, capsys):
    path = _study(tmp_path, sample, tiny, ["shuffled", "blind", "one-frame", "reversed"])
    assert main(["study", str(path), "--no-report", "--quiet"]) == 0
    runs = tmp_path / "runs"
    expected = {f"{b}-tiny{suffix}": control for b in BENCHMARKS for suffix, control in
                [("", None), ("-shuffled", "shuffled"), ("-blind", "blind"), ("-one-frame", "one-frame"),
                 ("-reversed", "reversed")]}
    for folder, control in expected.items():
        manifest = read_run(runs / folder).manifest
        assert manifest.status == "complete" and manifest.control == control
    assert read_run(runs / "vitatecs-tiny-shuffled").manifest.frame_policy == {"name": "uniform", "k": 4,
                                                                                 "order": "shuffle", "seed": 0}
    blind = read_run(runs / "vitatecs-tiny-blind").manifest.frame_policy
    assert {k: blind[k] for k in ("name", "mode", "blank")} == {"name": "single", "mode": "middle", "blank": True}
    capsys.readouterr()
    assert main(["study", str(path), "--no-report", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("complete, skipped") == len(expected)

    # CLIP averages its frames: shuffled frames change nothing it gets right, on any foil type
    assert main(["compare", str(runs / "vitatecs-tiny"), str(runs / "vitatecs-tiny-shuffled"), "--by", "foil_type",
                 "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert set(found) == {"pairs", "items", "ties"}
    assert all(set(p) == {"a", "b", "label", "value", "n", "agreement", "kappa", "kappa_ci", "mcnemar_p", "p_holm",
                          "tied_a", "tied_b"} for p in found["pairs"])
    overall = [p for p in found["pairs"] if p["label"] is None]
    assert overall[0]["a"] == str(runs / "vitatecs-tiny") and overall[0]["mcnemar_p"] == 1.0
    assert all(p["p_holm"] >= 0.05 for p in found["pairs"])
    n_items = len([it for it in read_run(runs / "vitatecs-tiny").items() if it.role == "main"])
    assert overall[0]["n"] == len(found["items"]) == n_items
    assert [(t["run"], t["scored"]) for t in found["ties"]] == [(overall[0]["a"], n_items), (overall[0]["b"], n_items)]
    assert [t["tied"] for t in found["ties"]] == [overall[0]["tied_a"], overall[0]["tied_b"]]
    assert {"item_id", "runs_right", "difficulty"} <= set(found["items"][0])

    assert main(["compare", str(runs / "vitatecs-tiny"), str(runs / "velociti-tiny")]) == 2
    assert "different benchmarks" in capsys.readouterr().err


def test_a_killed_study_resumes_where_it_stopped(sample, tiny, tmp_path):
    path = _study(tmp_path, sample, tiny, ["reversed"])
    command = [sys.executable, "-m", "bench", "study", str(path), "--no-report", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = tmp_path / "runs" / "vitatecs-tiny" / "manifest.json"
    deadline = time.time() + 300
    while time.time() < deadline and not (first.is_file() and json.loads(first.read_text())["status"] == "complete"):
        time.sleep(0.2)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    created = json.loads(first.read_text())["created"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout
    assert "[1/4] vitatecs tiny: complete, skipped" in done
    assert json.loads(first.read_text())["created"] == created
    for folder in ("vitatecs-tiny", "velociti-tiny", "vitatecs-tiny-reversed", "velociti-tiny-reversed"):
        assert read_run(tmp_path / "runs" / folder).manifest.status == "complete"
