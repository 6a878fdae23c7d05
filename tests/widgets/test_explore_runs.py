"""The explore notebook's browser over runs of different sizes, as the demo leaves them: every item some chosen run
scored is listed (the same whatever the order of the runs), an item a run was not asked shows "not scored" and is
never wrong, the count line and the marks agree with the engine (``run_table``), and every default (the metric, the
scatter, the bars) comes from a plain model before the biased copies and controls."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest

from bench.config import DataSource, Manifest, ScoreConfig
from bench.metrics.aggregate import ALL
from bench.metrics.dispatch import run_table
from bench.scoring.runner import score
from bench.store import read_run
from tests.metrics.test_tie_claims import TIED, _items, _pair, _run
from widgets import ItemBrowser
from widgets.browser import TIE
from widgets.linking import chart_runs, linked_charts
from widgets.runs import is_control, plain_first, union_items
from widgets.viewer import NOT_SCORED

# run name -> (tiny model, protocol, limit, frame policy): a plain model over all items, plain and biased
# Video-LLMs over spread subsets of different sizes, and a blind control (no frames)
RUNS = {
    "biased Yes/No": ("qwen2vl", "entail", 3, "uniform:k=8"),
    "Qwen2-VL blind": ("qwen2vl", "entail", 2, "none"),
    "CLIP": ("clip", "similarity", None, "uniform:k=8"),
    "Qwen2-VL Yes/No": ("qwen2vl", "entail", 4, "uniform:k=8"),
    "Qwen2-VL A/B": ("qwen2vl", "mc", 5, "uniform:k=8"),
}
FAMILIES = {"clip": "contrastive", "qwen2vl": "videollm"}


@pytest.fixture(scope="module")
def runs(sample, tiny, tmp_path_factory):
    s = sample["velociti"]
    source = DataSource.of("velociti", s.data_path, s.video_root, s.loader_options)
    out = tmp_path_factory.mktemp("explore")
    folders = []
    for name, (model, protocol, limit, frames) in RUNS.items():
        folder = out / name.lower().replace(" ", "-").replace("/", "-")
        score(ScoreConfig(source, tiny(model), family=FAMILIES[model], protocol=protocol, frame_policy=frames,
                          out=folder, limit=limit, spread=limit is not None, name=name, progress=False))
        folders.append(folder)
    return [read_run(f) for f in folders]


@pytest.fixture()
def browser(runs, tmp_path):
    widget = ItemBrowser(runs, serve=False, proxy_folder=tmp_path / "proxies")
    return widget


def _column(browser, key: str) -> list[str]:
    keys = [c["key"] for c in browser.list.columns]
    return [r["cells"][keys.index(key)] for r in browser.list.rows]


def test_plain_models_before_biased_copies_and_controls(runs):
    kinds = {r.label: is_control(r.manifest) for r in runs}
    assert kinds == {"biased Yes/No": True, "Qwen2-VL blind": True, "CLIP": False, "Qwen2-VL Yes/No": False,
                     "Qwen2-VL A/B": False}
    manifest = Manifest.from_dict
    # the demo's name, a reversed policy, a biased model's folder; a text-only model reads no frames and is plain
    assert is_control(manifest({"name": "X-CLIP reversed", "frame_policy": {"name": "uniform", "k": 8}}))
    assert is_control(manifest({"name": "mine", "frame_policy": {"name": "uniform", "k": 8, "order": "reverse"}}))
    assert is_control(manifest({"name": "mine", "model": "/models/qwen2vl-world-biased"}))
    assert not is_control(manifest({"name": "gpt2", "family": "textlm", "frame_policy": {"name": "none"}}))
    # every shortcut control, by its manifest's control or by the frame policy it amounts to
    assert is_control(manifest({"name": "CLIP shuffled", "frame_policy": {"name": "uniform", "k": 8,
                                                                          "order": "shuffle", "seed": 0}}))
    assert is_control(manifest({"name": "mine", "frame_policy": {"name": "single", "mode": "middle", "repeat": 8}}))
    assert is_control(manifest({"name": "mine", "control": "one-frame"}))
    # a word that contains a control's name is not that name
    assert not is_control(manifest({"name": "unbiased-v2", "model": "/models/deblinded",
                                    "frame_policy": {"name": "uniform", "k": 8}}))
    assert [r.label for r in plain_first(runs)] == ["CLIP", "Qwen2-VL Yes/No", "Qwen2-VL A/B", "biased Yes/No",
                                                    "Qwen2-VL blind"]


@pytest.mark.slow
def test_every_item_some_run_scored_is_listed_whatever_the_order(runs, tmp_path):
    asked = {r.label: [it.item_id for it in r.items() if it.role == "main"] for r in runs}
    union = set().union(*asked.values())
    assert len(union) > max(len(v) for k, v in asked.items() if k != "CLIP") and len(asked["Qwen2-VL A/B"]) == 5
    lists = []
    for order in [runs, runs[::-1], list(itertools.permutations(runs))[7]]:
        browser = ItemBrowser(order, serve=False, proxy_folder=tmp_path)
        assert set(browser.table["item_id"]) == union and len(browser.ids()) == len(union)
        lists.append(browser.ids())
    assert lists[0] == lists[1] == lists[2]
    file_order = [it.item_id for it in runs[2].items() if it.role == "main"]  # CLIP scored every item
    assert lists[0] == file_order
    assert [it.item_id for it in union_items(runs)] == [it.item_id for it in union_items(runs[::-1])]


def test_a_run_not_asked_an_item_shows_not_scored_never_wrong(browser, runs):
    browser.flag.value = "all items"
    for run in browser.chosen:
        asked = {it.item_id for it in run.items()}
        cells = dict(zip(browser.ids(), _column(browser, f"correct:{run.label}")))
        assert {c for i, c in cells.items() if i not in asked} <= {NOT_SCORED}
        assert {c for i, c in cells.items() if i in asked} <= {"✓", "✗", TIE}
        assert sum(c != NOT_SCORED for c in cells.values()) == len([i for i in asked if i in cells])
    browser.flag.value = "wrong in some run"
    wrong = set(browser.ids())
    outcomes = browser.outcomes
    for run in runs:  # every outcome judged is of an item its run was asked
        asked = {it.item_id for it in run.items()}
        assert set(outcomes.loc[outcomes["run"] == run.label, "item_id"]) <= asked
    # wrong: not right outright (a tie is not told apart, whatever the official value)
    assert wrong == set(outcomes.loc[outcomes["strict"] == 0, "item_id"]) & set(browser.table["item_id"])
    browser.flag.value = "all items"
    small = next(r for r in runs if r.label == "Qwen2-VL blind")
    other = next(i for i in browser.ids() if i not in {it.item_id for it in small.items()})
    browser.list.selected = other
    shown = next(r for r in browser.viewer.runs if r["run"] == small.label)
    assert shown["correct"] == [] and NOT_SCORED in shown["lines"][0]


def test_the_count_line_and_marks_are_the_engines_numbers(browser, runs):
    line = browser.count.value
    assert line.startswith(f"{len(browser.table)} of {len(browser.table)} items · ")
    for run in browser.chosen:
        metric = browser.headline[run.label]
        table = run_table(run)
        row = table[(table["metric"] == metric) & (table["by"] == ALL)].iloc[0]
        mains = [it for it in run.items() if it.role == "main"]
        ties = f", {int(row['n_tie'])} tied: strict {100 * row['strict']:.1f} %" if row["n_tie"] else ""
        assert f"{run.label}: {len(mains)} scored, {metric} {100 * row['value']:.1f} % (n {int(row['n'])}{ties})" \
            in line
        marks = _column(browser, f"correct:{run.label}")
        assert marks.count("✓") / len(mains) == pytest.approx(row["strict"])  # a tie is marked apart, not right
        assert marks.count(TIE) == row["n_tie"]


def test_defaults_come_from_plain_runs_and_charts_follow_the_choice(browser):
    first = browser.chosen[0]
    assert first.label == "CLIP" and browser.metric.value == browser.headline["CLIP"]
    assert chart_runs(browser) == ("Qwen2-VL Yes/No", "CLIP")
    charts = linked_charts(browser)
    assert [type(c).__name__ for c in charts.children] == ["JupyterChart", "JupyterChart"]  # scatter and bars
    assert "Qwen2-VL Yes/No" in charts.children[0].chart.to_dict()["title"]["text"]
    browser.picker.value = ("biased Yes/No", "Qwen2-VL A/B")
    assert [r.label for r in browser.chosen] == ["Qwen2-VL A/B", "biased Yes/No"]
    assert chart_runs(browser) == ("biased Yes/No", "Qwen2-VL A/B")
    assert browser.metric.value.startswith("MC")
    groups = [c["group"] for c in browser.list.columns if c["group"]]
    assert list(dict.fromkeys(groups)) == ["Qwen2-VL A/B", "biased Yes/No"]
    asked = {it.item_id for r in browser.chosen for it in r.items() if it.role == "main"}
    assert set(browser.ids()) == asked  # the list holds the items the chosen runs scored
    assert "CLIP" not in browser.count.value
    assert "biased Yes/No" in charts.children[0].chart.to_dict()["title"]["text"]


def test_an_item_asked_but_failed_shows_failed_and_counts_wrong(sample, tiny, runs, tmp_path):
    s = sample["velociti"]
    root = tmp_path / "videos"
    shutil.copytree(s.video_root, root)
    source = DataSource.of("velociti", s.data_path, root, s.loader_options)
    first = next(it for it in source.load().items if it.role == "main")
    for clip in first.clips:
        Path(clip.path).unlink()
    folder = score(ScoreConfig(source, tiny("clip"), family="contrastive", protocol="similarity",
                               out=tmp_path / "run", limit=3, name="CLIP some videos", progress=False))
    failing = read_run(folder)
    assert len(failing.failures)
    browser = ItemBrowser([failing, runs[2]], serve=False, proxy_folder=tmp_path / "proxies")
    cells = dict(zip(browser.ids(), _column(browser, f"correct:{failing.label}")))
    failed = set(failing.failures["item_id"])
    assert {cells[i] for i in failed} == {"failed"}
    assert {c for i, c in cells.items() if i not in failed} <= {"✓", "✗", NOT_SCORED}
    assert len(cells) == len(browser.table) and NOT_SCORED in cells.values()
    browser.flag.value = "wrong in some run"
    assert failed <= set(browser.ids())  # counted wrong, as the metrics count it


def test_a_tied_item_is_marked_tie_and_counted_apart(tmp_path):
    items = _items("vitatecs")
    runs = [_run("seeing", items, _pair(items, tied=0)), _run("tied", items, _pair(items))]
    browser = ItemBrowser(runs, serve=False, proxy_folder=tmp_path / "proxies")
    marks = dict(zip(browser.ids(), _column(browser, "correct:tied")))
    assert [i for i, m in marks.items() if m == TIE] == [it.item_id for it in items[:TIED]]
    assert set(_column(browser, "correct:seeing")) == {"✓"}
    assert f"tied: 12 scored, accuracy 66.7 % (n 12, {TIED} tied: strict 66.7 %)" in browser.count.value
    browser.list.selected = items[0].item_id
    shown = next(r for r in browser.viewer.runs if r["run"] == "tied")
    assert shown["correct"] == [{"metric": "accuracy", "value": 0, "tie": True, "status": "ok"}]
    browser.flag.value = "wrong in some run"
    assert browser.ids() == [it.item_id for it in items[:TIED]]
