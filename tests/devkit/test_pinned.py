"""What a pinned build child runs (MKL's branch as MKL reports it, torch's kernels) and the demo's comparison of its
models with the fingerprints the README's lessons were measured with."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.devkit.demo import reference_line
from bench.devkit.train import build, crosscheck, pinned
from fixtures_pinned import pinned_mkl_branch

REPORT = ("import torch\nfrom bench.devkit.train import pinned\ntorch.ones(4, 4) @ torch.ones(4, 4)\n"
          "print(pinned.mkl_branch(), torch.backends.cpu.get_cpu_capability())")


def _child(env: dict) -> list[str]:
    done = subprocess.run([sys.executable, "-c", REPORT], env={**os.environ, **env}, capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


@pytest.mark.skipif(pinned.mkl_branch() is None, reason="this torch carries no MKL")
def test_mkl_runs_the_branch_the_pinned_environment_names_and_reports_another_when_asked():
    # MKL: "settings other than AUTO or COMPATIBLE are available only for Intel processors", and AUTO is the CPU's own
    assert pinned.PINNED["MKL_CBWR"] == pinned.MKL_BRANCH == "AVX2"
    branch, capability = _child(pinned.PINNED)
    assert branch == pinned_mkl_branch()
    if "avx2" in Path("/proc/cpuinfo").read_text().split():
        assert capability == pinned.CAPABILITY
    assert _child({**pinned.PINNED, "MKL_CBWR": "COMPATIBLE"})[0] == "COMPATIBLE"  # MKL says what it was asked


def test_no_onednn_switches_torchs_use_of_it_off():
    import torch

    before = torch.backends.mkldnn.enabled
    try:
        torch.backends.mkldnn.enabled = True
        pinned.no_onednn()
        assert torch.backends.mkldnn.enabled is False
    finally:
        torch.backends.mkldnn.enabled = before


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    """A data home with two 'built' models (weights files only) and the reference file pointed at a scratch copy."""
    monkeypatch.setattr(build, "REFERENCE", tmp_path / "reference.json")
    monkeypatch.setattr(crosscheck, "RECORDS", tmp_path / "crosscheck.json")
    home = tmp_path / "home"
    for name, weights in (("clip-world", b"clip"), ("xclip-world", b"xclip")):
        (home / "models" / name).mkdir(parents=True)
        (home / "models" / name / "model.safetensors").write_bytes(weights)
    return home


def test_the_demo_says_when_its_models_are_the_readmes_bytes_and_when_not(recorded):
    names = ["clip-world", "xclip-world"]
    assert reference_line(names, recorded).startswith("no fingerprints of build")
    written = build.write_reference(names, recorded)
    assert json.loads(written.read_text())["version"] == build.VERSION
    assert build.reference() == {n: build.fingerprint(recorded / "models" / n) for n in names}
    assert reference_line(names, recorded).startswith("the same bytes as the models the README's lessons")
    (recorded / "models" / "xclip-world" / "model.safetensors").write_bytes(b"other weights")
    assert reference_line(names, recorded).startswith("not the bytes the README's lessons were measured with")
    assert "recorded on" not in reference_line(names, recorded)
    assert reference_line(["clip-world"], recorded).startswith("the same bytes")  # only the models asked about
    theirs = {n: build.fingerprint(recorded / "models" / n) for n in names}
    crosscheck.RECORDS.write_text(json.dumps({"Another CPU": {"version": build.VERSION, "models": theirs}}))
    assert "; the bytes recorded on Another CPU)" in reference_line(names, recorded)


def test_fingerprints_of_another_build_version_are_not_compared(recorded):
    build.write_reference(["clip-world"], recorded)
    build.REFERENCE.write_text(json.dumps({**json.loads(build.REFERENCE.read_text()), "version": "0"}))
    assert build.reference() == {}
    assert reference_line(["clip-world"], recorded).startswith("no fingerprints of build")
