"""``foilbench perf build`` builds a world model idle and beside a busy torch job and prints both times, their ratio
and whether the weights are identical (they must be: the build is pinned)."""

import re

import pytest

from bench.cli import main


@pytest.mark.slow
def test_perf_build_prints_both_times_their_ratio_and_identical_weights(capsys):
    assert main(["perf", "build", "--scale", "0.02"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"idle ([\d.]+) s, beside a 2-thread torch job ([\d.]+) s, ratio ([\d.]+)x \(target <= 2.2x: "
                      r"(met|missed)\); weights identical: (yes|NO)", out)
    assert found, out
    idle, busy, ratio = (float(found[i]) for i in (1, 2, 3))
    assert ratio == pytest.approx(busy / idle, abs=0.01)
    assert found[4] == ("met" if ratio <= 2.2 else "missed")
    assert found[5] == "yes"


def test_perf_build_refuses_an_unknown_model_in_one_line(capsys):
    assert main(["perf", "build", "--model", "gpt"]) != 0
    assert "--model must be one of clip-world" in capsys.readouterr().err
