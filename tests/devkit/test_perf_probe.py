"""``foilbench perf probe`` prints its time: one probe of one order item against every model, once loaded (here the
tiny models stand in for the demo's trained ones)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from bench.cli import main

TINY = {"clip": "contrastive", "xclip": "xclip", "qwen2vl": "videollm", "gpt2": "textlm"}


@pytest.mark.slow
def test_the_probe_benchmark_prints_its_time(sample, tiny, tmp_path, monkeypatch, capsys):
    import bench.devkit.train.build as build
    import bench.devkit.world as world

    monkeypatch.setattr(build, "MODELS", {name: SimpleNamespace(family=f) for name, f in TINY.items()})
    monkeypatch.setattr(build, "trained_model", lambda name, home: tiny(name))
    monkeypatch.setattr(world, "ensure_sample", lambda out, size: sample)
    assert main(["perf", "probe", "--home", str(tmp_path), "--size", "small"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^4 models loaded in \d+\.\d\d s \(clip, xclip, qwen2vl, gpt2, cpu\)$", out, re.M), out
    assert re.search(r"^item \S+ of vitatecs \(order\): 2 texts$", out, re.M), out
    for attempt in ("first \\(frames decoded\\)", "again \\(frames cached\\)"):
        assert re.search(rf"^one probe against 4 models, {attempt}: \d+\.\d\d s \(clip \d+\.\d\d s, .*\); target "
                         r"under 2 s$", out, re.M), out
