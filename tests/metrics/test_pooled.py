"""Runs pooled over benchmarks by an item label: one judgement per item, accuracy per label value with its exact
interval, through `foilbench metrics --pool`."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from bench.cli import main
from bench.metrics.dispatch import benchmark_outcomes
from bench.metrics.intervals import binomial_p_value, clopper_pearson
from bench.metrics.pooled import item_scores, pooled_table
from bench.metrics.ties import DEFAULT_TIES
from bench.registry import spec
from bench.store import read_run

BENCHMARKS = ("vitatecs", "velociti")  # 1 clip x 2 texts: the caption wins when it scores above its foil


@pytest.fixture(scope="module")
def runs(sample, tiny, tmp_path_factory):
    out = tmp_path_factory.mktemp("pooled")
    paths = []
    for name in BENCHMARKS:
        s = sample[name]
        assert main(["score", name, str(s.data_path), "--video-root", str(s.video_root), "--model", tiny("clip"),
                     "--family", "contrastive", "--name", "tiny clip", "--out", str(out / name), "--quiet"]) == 0
        paths.append(out / name)
    return paths


def _caption_won(run) -> pd.Series:
    pair = run.pair.pivot_table(index="item_id", columns="text", values="score")
    return (pair[0] > pair[1]).astype(float)


def test_every_item_is_judged_by_its_benchmarks_own_score(runs):
    for path in runs:
        run = read_run(path)
        rows = item_scores(run).set_index("item_id")
        assert set(rows.index) == {it.item_id for it in run.items() if it.role == "main"}
        assert rows["value"].to_dict() == _caption_won(run).reindex(rows.index).to_dict()
        assert set(rows["chance"]) == {0.5} and set(rows["run"]) == {"tiny clip"}


def test_a_run_holding_items_of_several_kinds_judges_each_by_its_own_score(sample, tiny, tmp_path):
    s = sample["videocon"]  # caption pairs (caption > contrast) and ATP-Hard questions (accuracy over 5 options)
    options = [x for k, v in s.loader_options.items() for x in ("-o", f"{k}={v}")]
    assert main(["score", "videocon", str(s.data_path), "--video-root", str(s.video_root), *options, "--model",
                 tiny("clip"), "--family", "contrastive", "--out", str(tmp_path / "run"), "--quiet"]) == 0
    run = read_run(tmp_path / "run")
    outcomes = benchmark_outcomes([it for it in run.items() if it.role == "main"], run.pair, run.choice,
                                  benchmark="videocon", ties=DEFAULT_TIES).set_index(["item_id", "metric"])
    rows = item_scores(run)
    assert {"caption > contrast", "accuracy"} <= set(rows["metric"])
    judged = {item for item, metric in outcomes.index if metric in spec("videocon").item_score}
    assert set(rows["item_id"]) == judged  # SSv2-Temporal, judged by AP over all its captions, is left out
    assert {it.item_id for it in run.items() if it.role == "main"} - judged == {"ssv2_temporal"}
    for row in rows.itertuples():
        has = set(outcomes.loc[row.item_id].index)
        assert row.metric == next(m for m in spec("videocon").item_score if m in has)
        expected = outcomes.loc[(row.item_id, row.metric)]
        assert (row.value, row.chance) == (expected["value"], expected["chance"])
    assert rows["value"].notna().all()
    assert set(rows.loc[rows["metric"] == "accuracy", "chance"]) == {0.2}


def test_pool_command_prints_accuracy_per_label_value_over_benchmarks(runs, capsys):
    assert main(["metrics", *map(str, runs), "--pool", "subset", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    won = pd.concat([_caption_won(read_run(p)) for p in runs])
    subsets = {it.item_id: it.subset for p in runs for it in read_run(p).items()}
    expected = won.groupby(won.index.map(subsets)).agg(["sum", "count"])
    assert {r["value"] for r in rows} == set(expected.index)
    for r in rows:
        right, n = expected.loc[r["value"]]
        low, high = clopper_pearson(right, int(n))
        assert (r["run"], r["n"], r["chance"]) == ("tiny clip", n, 50.0)
        assert r["accuracy"] == pytest.approx(100 * right / n)
        assert (r["low"], r["high"]) == pytest.approx((100 * low, 100 * high))
        assert r["p"] == pytest.approx(binomial_p_value(right, int(n), 0.5)) and r["above"] == (low > 0.5)
    assert main(["metrics", *map(str, runs), "--pool", "subset"]) == 0
    text = capsys.readouterr().out
    assert "pooled by subset over 2 run(s) of vitatecs, velociti" in text and "tiny clip" in text


def test_a_folder_of_runs_stands_for_its_runs(runs, capsys):
    parent = runs[0].parent
    (parent / "demo.log").write_text("a file beside the runs\n")
    assert main(["metrics", *map(str, runs), "--pool", "subset", "--json"]) == 0
    named = sorted(json.loads(capsys.readouterr().out)["rows"], key=lambda r: r["value"])
    assert main(["metrics", str(parent), "--pool", "subset", "--json"]) == 0
    assert sorted(json.loads(capsys.readouterr().out)["rows"], key=lambda r: r["value"]) == named and named
    assert main(["metrics", str(parent), "--json", "--bootstrap", "20"]) == 0
    assert {r["path"] for r in json.loads(capsys.readouterr().out)["runs"]} == set(map(str, runs))


def test_failed_items_count_as_wrong_and_unlabelled_items_are_left_out():
    rows = pd.DataFrame({"run": "r", "benchmark": "b", "item_id": list("abcd"), "subset": "s", "metric": "m",
                         "value": [1.0, float("nan"), 1.0, 0.0], "chance": 0.5, "foil_type": ["x", "x", "x", ""]})
    table = pooled_table(rows, "foil_type")
    assert table[["value", "n"]].values.tolist() == [["x", 3]]
    assert table["accuracy"].iloc[0] == pytest.approx(200 / 3)


def test_an_unknown_label_is_one_line(runs, capsys):
    assert main(["metrics", str(runs[0]), "--pool", "foil_kind"]) == 2
    err = capsys.readouterr().err
    assert "no item carries the label 'foil_kind'" in err and err.count("\n") == 1
