"""What a pinned build child runs (MKL's branch as MKL reports it, torch's kernels)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.devkit.train import pinned

REPORT = ("import torch\nfrom bench.devkit.train import pinned\ntorch.ones(4, 4) @ torch.ones(4, 4)\n"
          "print(pinned.mkl_branch(), torch.backends.cpu.get_cpu_capability())")


def _child(env: dict) -> list[str]:
    done = subprocess.run([sys.executable, "-c", REPORT], env={**os.environ, **env}, capture_output=True, text=True,
                          check=True)
    return done.stdout.split()


@pytest.mark.skipif(pinned.mkl_branch() is None, reason="this torch carries no MKL")
def test_mkl_runs_the_branch_the_pinned_environment_names_and_reports_another_when_asked():
    # MKL: "settings other than AUTO or COMPATIBLE are available only for Intel processors", and AUTO is the CPU's own
    assert pinned.PINNED["MKL_CBWR"] == pinned.MKL_BRANCH == "COMPATIBLE"
    branch, capability = _child(pinned.PINNED)
    assert branch == pinned.MKL_BRANCH
    if "avx2" in Path("/proc/cpuinfo").read_text().split():
        assert capability == pinned.CAPABILITY
    assert _child({**pinned.PINNED, "MKL_CBWR": "AUTO"})[0] == "AUTO"  # what MKL says follows what it was asked


def test_no_onednn_switches_torchs_use_of_it_off():
    import torch

    before = torch.backends.mkldnn.enabled
    try:
        torch.backends.mkldnn.enabled = True
        pinned.no_onednn()
        assert torch.backends.mkldnn.enabled is False
    finally:
        torch.backends.mkldnn.enabled = before
