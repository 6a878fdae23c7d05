"""The report's controls and models-compared sections: numbers from bench.analysis, each full run beside its own
controls, tables saved beside the index."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import bench.analysis.items as analysis_items
from bench.analysis.agreement import compare_pair
from bench.config import Manifest
from bench.items import Clip, Item
from bench.metrics.intervals import holm
from bench.report.compared import control_pairs, controls_section, controls_table, models_compared_section
from bench.store.run import Run
from bench.store.schema import choice_frame, failure_frame, pair_frame

KINDS = ("order", "action")
ITEMS = [Item("vitatecs", f"i{k:02d}", "Direction", (Clip(f"v{k}.mp4"),), (f"caption {k}", f"foil {k}"), ((0,),),
              {"foil_type": KINDS[k % 2]}) for k in range(40)]


def _run(name: str, right, model: str, frames: dict) -> Run:
    rows = [{"item_id": it.item_id, "clip": 0, "text": t, "score": 0.9 if (t == 0) == right(k) else 0.1}
            for k, it in enumerate(ITEMS) for t in (0, 1)]
    manifest = Manifest(benchmark="vitatecs", data_path=None, model=model, measure="similarity", name=name,
                        protocol="similarity", prompt={}, frame_policy=frames)
    run = Run(Path(name), manifest, pair_frame(rows), choice_frame([]), failure_frame([]))
    run._items = ITEMS
    return run


@pytest.fixture()
def runs():
    uniform = {"name": "uniform", "k": 8}
    return [_run("X", lambda k: k % 2 == 0 or k % 3 == 0, "x", uniform),
            _run("X reversed", lambda k: k % 2 == 1 or k % 3 == 0, "x", {**uniform, "order": "reverse"}),
            _run("C", lambda k: k % 5 != 0, "c", uniform),
            _run("C shuffled", lambda k: k % 5 != 0, "c", {**uniform, "order": "shuffle", "seed": 0})]


def test_each_control_is_matched_to_its_own_full_run(runs):
    assert [(f.label, c.label, name) for f, c, name in control_pairs(runs)] == [("X", "X reversed", "reversed"),
                                                                               ("C", "C shuffled", "shuffled")]


def test_the_controls_table_is_the_paired_comparison_per_foil_type(runs):
    table = controls_table(runs, ["foil_type"])
    mine = table[table["control run"] == "X reversed"].set_index("foil_type")
    full = [k % 2 == 0 or k % 3 == 0 for k in range(40)]
    control = [k % 2 == 1 or k % 3 == 0 for k in range(40)]
    raw = {}
    for kind in KINDS:
        idx = [k for k in range(40) if KINDS[k % 2] == kind]
        stats = compare_pair([full[k] for k in idx], [control[k] for k in idx])
        assert mine.loc[kind, "drop"] == pytest.approx(stats["accuracy_a"] - stats["accuracy_b"])
        raw[kind] = stats["mcnemar_p"]
    assert mine.loc[list(raw), "p_holm"].tolist() == pytest.approx(holm(list(raw.values())).tolist())
    assert mine.loc["all", "n"] == 40
    assert (table[table["control run"] == "C shuffled"]["mcnemar_p"] == 1.0).all()


def test_sections_are_written_with_their_tables(runs, tmp_path):
    controls = controls_section(tmp_path, runs, ["foil_type"])
    compared = models_compared_section(tmp_path, runs, ["foil_type"])
    assert "What can be solved without the video" in controls and "Models compared" in compared
    assert "caption 0 (true)" in compared or "(true)" in compared
    pairs = pd.read_csv(tmp_path / "compared" / "vitatecs-pairs.csv")
    assert set(pairs["a"]) | set(pairs["b"]) == {"X", "C"}  # controls are not among the models compared
    assert (tmp_path / "compared" / "vitatecs-controls.csv").is_file()


def test_no_controls_and_one_model_give_no_section(runs, tmp_path):
    assert controls_section(tmp_path, runs[:1]) == "" and models_compared_section(tmp_path, runs[:1]) == ""


def test_sections_sharing_judgements_judge_each_run_once_and_write_the_same_tables(runs, tmp_path, monkeypatch):
    alone = tmp_path / "alone"
    html = [controls_section(alone, runs, ["foil_type"]), models_compared_section(alone, runs, ["foil_type"])]
    judged, calls = analysis_items.Judgements(), []
    item_scores = analysis_items.item_scores
    monkeypatch.setattr(analysis_items, "item_scores", lambda run: calls.append(run.label) or item_scores(run))
    shared = tmp_path / "shared"
    assert [controls_section(shared, runs, ["foil_type"], judged),
            models_compared_section(shared, runs, ["foil_type"], judged)] == html
    assert sorted(calls) == sorted(r.label for r in runs)  # X and C are in a control pair and in the comparison
    written = sorted(p.name for p in (alone / "compared").iterdir())
    assert written and written == sorted(p.name for p in (shared / "compared").iterdir())
    for name in written:
        assert (alone / "compared" / name).read_bytes() == (shared / "compared" / name).read_bytes()
