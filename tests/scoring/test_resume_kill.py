"""A scoring run killed partway (a real SIGKILL) resumes to the uninterrupted result, bit for bit: chunks sit at fixed
positions of the item order, so the resumed run forms the same batches."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from bench.store import read_run


def _many_items(sample, folder, n=240):
    """A VITATECS file of ``n`` items over the sample's videos (enough chunks to kill the run between two)."""
    source = sample["vitatecs"]
    lines = [json.loads(line) for f in sorted(source.data_path.glob("*.jsonl")) for line in f.read_text().splitlines()]
    rows = [dict(lines[i % len(lines)], caption=f"{lines[i % len(lines)]['caption']} number {i}", aspect="Direction")
            for i in range(n)]
    path = folder / "Direction.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _command(data, videos, model, out, chunk_size=6):
    return [sys.executable, "-m", "bench", "score", "vitatecs", str(data), "--video-root", str(videos), "--model",
            model, "--family", "textlm", "--chunk-size", str(chunk_size), "--batch-size", "4", "--out", str(out),
            "--quiet"]


def _table(path):
    pair = read_run(path).pair
    return pair.sort_values(["item_id", "clip", "text"]).reset_index(drop=True)


@pytest.mark.slow
def test_killed_run_resumes_without_loss_or_duplicates(sample, tiny, tmp_path):
    data = _many_items(sample, tmp_path)
    videos = sample["vitatecs"].video_root
    model = tiny("gpt2")
    killed = tmp_path / "killed"
    proc = subprocess.Popen(_command(data, videos, model, killed), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((killed / "scored").glob("part-*.parquet"))) < 5:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = read_run(killed)
    assert partial.manifest.status == "running"
    assert 0 < len(partial.pair) < 2 * 240, "the run should have been killed partway"

    resumed = subprocess.run(_command(data, videos, model, killed, chunk_size=5), capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0 and "keeping the run's chunk size 6" in resumed.stderr
    whole = tmp_path / "whole"
    assert subprocess.run(_command(data, videos, model, whole), capture_output=True, timeout=300).returncode == 0
    resumed, reference = _table(killed), _table(whole)
    assert read_run(killed).manifest.status == "complete"
    assert len(resumed) == 2 * 240 and not resumed.duplicated(["item_id", "clip", "text"]).any()
    pd.testing.assert_frame_equal(resumed, reference, check_exact=True)
    assert not [p for p in killed.rglob("*") if p.name.startswith(".") or p.name.startswith("part-")]
