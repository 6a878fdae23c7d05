"""``foilbench perf score`` runs both pipelines on the same requests and prints their ratio."""

from __future__ import annotations

import re

import pytest

from bench.cli import main


@pytest.mark.slow
def test_perf_score_prints_ratios(capsys):
    assert main(["perf", "score", "--frames", "2", "--batch-size", "8"]) == 0
    out = capsys.readouterr().out
    ratios = re.findall(r"ratio\s+([\d.]+)x", out)
    assert len(ratios) == 2 and all(float(r) > 0 for r in ratios)
    assert "similarity" in out and "entail" in out
