"""``foilbench perf build`` builds a world model idle and beside a busy torch job and prints both times, their ratio
and whether the weights are identical (they must be: the build is pinned)."""

import re

import pytest

from bench.cli import main
from bench.devkit.perf.build import verdict


@pytest.mark.slow
def test_perf_build_prints_both_times_their_ratio_and_identical_weights(capsys):
    assert main(["perf", "build", "--scale", "0.02"]) == 0
    out = capsys.readouterr().out
    found = re.search(r"idle ([\d.]+) s, beside a 2-thread torch job ([\d.]+) s, ratio ([\d.]+)x \(target <= 2.2x: "
                      r"(met|missed|not judged, under 1 s idle)\); weights identical: (yes|NO)", out)
    assert found, out
    idle, busy, ratio = (float(found[i]) for i in (1, 2, 3))
    assert _within_printed_rounding(ratio, idle, busy)
    assert found[4] == verdict(idle, ratio)
    assert found[5] == "yes"


def _within_printed_rounding(ratio: float, idle: float, busy: float) -> bool:
    """Whether a ratio printed to 0.01 is busy / idle for some times that print as ``idle`` and ``busy`` (0.1 s)."""
    return (busy - 0.05) / (idle + 0.05) - 0.005 <= ratio <= (busy + 0.05) / (idle - 0.05) + 0.005


@pytest.mark.slow
def test_perf_build_of_a_model_that_needs_others_gives_each_its_own_times_and_identity(capsys):
    from bench.devkit.train.build import needed

    assert main(["perf", "build", "--model", "xclip-world", "--scale", "0.02"]) == 0
    out = capsys.readouterr().out
    line = r"idle ([\d.]+) s, beside a 2-thread torch job ([\d.]+) s, ratio ([\d.]+)x \(target <= 2.2x: ([^)]+)\); " \
           r"weights identical: (yes|NO)"
    each = {m[0]: m for m in re.findall(r"^  ([\w-]+): " + line, out, flags=re.M)}
    assert list(each) == needed(["xclip-world"]) == ["clip-world", "xclip-world"]
    whole = re.search(r"^xclip-world with the models it needs: " + line, out, flags=re.M)
    assert whole, out
    for name, idle, busy, ratio, judged, same in each.values():
        assert _within_printed_rounding(float(ratio), float(idle), float(busy)), name
        assert judged == verdict(float(idle), float(ratio)) and same == "yes", name
    # each model's stamp times its own build; the whole build adds the child process and the reading of the split
    assert sum(float(m[1]) for m in each.values()) <= float(whole[1])
    assert whole[5] == "yes"


def test_perf_build_refuses_an_unknown_model_in_one_line(capsys):
    assert main(["perf", "build", "--model", "gpt"]) != 0
    assert "--model must be one of clip-world" in capsys.readouterr().err


def test_a_ratio_is_judged_against_the_target_and_a_build_under_a_second_is_not():
    assert verdict(40.0, 2.2) == "met" and verdict(40.0, 2.3) == "missed"
    assert verdict(0.1, 6.0) == "not judged, under 1 s idle"
