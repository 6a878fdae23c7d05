"""The lessons script: each lesson's value read from a seed's pooled table, answer bias and both-orders table, and the
Markdown table of the default seed's value beside the range over seeds; end to end on tiny builds (slow)."""

import re

import pandas as pd
import pytest

from bench.devkit import lessons
from bench.devkit.lessons import BOTH, END, LESSONS, START, into_readme, lessons_table, seed_values
from bench.devkit.train.build import DEFAULT_SEED


def _seed(order: float, share_a: float, both: tuple[float, float]) -> dict[str, float]:
    pooled = pd.DataFrame([{"run": "X-CLIP", "value": "order", "accuracy": order},
                           {"run": "CLIP", "value": "order", "accuracy": 50.0}])
    bias = pd.DataFrame([{"run": "Qwen2-VL A/B", "measure": "share A", "value": share_a, "n": 10}])
    right = pd.DataFrame([{"run": "Qwen2-VL A/B", "benchmark": "vitatecs", "value": both[0], "n": 30},
                          {"run": "Qwen2-VL A/B", "benchmark": "velociti", "value": both[1], "n": 10}])
    return seed_values(pooled, bias, right)


def test_a_seeds_lessons_are_read_from_its_tables_and_both_orders_pool_the_benchmarks_by_items():
    found = _seed(96.0, 48.0, (60.0, 40.0))
    text = {(l.run, l.foil or l.measure): l.text for l in LESSONS}
    assert found[text["X-CLIP", "order"]] == 96.0 and found[text["CLIP", "order"]] == 50.0
    assert found[text["Qwen2-VL A/B", "share A"]] == 48.0
    assert found[text["Qwen2-VL A/B", BOTH]] == pytest.approx(55.0)  # (60 * 30 + 40 * 10) / 40
    assert found[text["Qwen2-VL A/B", f"{BOTH} vitatecs"]] == 60.0
    assert found[text["Qwen2-VL A/B", f"{BOTH} velociti"]] == 40.0
    assert text["X-CLIP reversed", "order"] not in found  # no such run: left out, not zero


def test_the_table_gives_the_default_seeds_value_beside_the_range_over_seeds():
    values = {0: _seed(96.0, 48.0, (60.0, 40.0)), 1: _seed(85.0, 55.0, (52.0, 52.0)), 2: _seed(90.0, 41.0, (70, 70))}
    table = lessons_table(values, default=0)
    assert table.splitlines()[0] == "| lesson | seed 0 | range over seeds 0, 1, 2 |"
    xclip = next(line for line in table.splitlines() if line.startswith("| X-CLIP, accuracy on `order`"))
    assert xclip == "| X-CLIP, accuracy on `order` | 96 % | 85-96 % |"
    assert "| CLIP, accuracy on `order` | 50 % | 50-50 % |" in table
    assert len(table.splitlines()) == 2 + len(values[0])


@pytest.mark.slow
def test_the_script_trains_several_seeds_and_writes_the_page(tmp_path, capsys):
    out = tmp_path / "lessons.md"
    other = 1 if DEFAULT_SEED != 1 else 0
    seeds = sorted({DEFAULT_SEED, other})
    lessons.main(["--seeds", f"{seeds[0]},{seeds[1]}", "--size", "small", "--scale", "0.02", "--home",
                  str(tmp_path / "home"), "--out", str(out), "--quiet"])
    page = out.read_text()
    assert f"| lesson | seed {DEFAULT_SEED} | range over seeds {seeds[0]}, {seeds[1]} |" in page
    assert f"--seeds {seeds[0]},{seeds[1]}" in page
    rows = [line for line in page.splitlines() if re.match(r"\| .* \| \d+ % \| \d+-\d+ % \|$", line)]
    assert any(r.startswith("| X-CLIP, accuracy on `order`") for r in rows) and any("both orders" in r for r in rows)
    for row in rows:
        own, low, high = map(int, re.search(r"\| (\d+) % \| (\d+)-(\d+) % \|$", row).groups())
        assert low <= own <= high, row
    assert (tmp_path / "home" / "seeds" / str(other) / "models" / "qwen2vl-world").is_dir()


def test_the_script_refuses_a_single_seed_in_one_line(capsys):
    with pytest.raises(SystemExit):
        lessons.main(["--seeds", "3"])
    assert f"--seeds needs at least two seeds, {DEFAULT_SEED} among them" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        lessons.main(["--scale", "3"])
    assert "a build's scale is a share in (0, 1], got 3.0" in capsys.readouterr().err


def test_the_table_replaces_what_stands_between_the_readme_markers_and_nothing_else():
    text = f"# Title\n\nbefore\n{START}\n| old | table |\n{END}\nafter\n"
    done = into_readme(text, "| new | table |")
    assert done == f"# Title\n\nbefore\n{START}\n| new | table |\n{END}\nafter\n"
    assert into_readme(done, "| new | table |") == done
    with pytest.raises(ValueError, match="one <!-- lessons: start --> line"):
        into_readme("no markers here", "| t |")
