"""Every number the report writes is the engine's number for the same run: each metric row of every CSV against
``run_table`` (what ``foilbench metrics`` prints) for the same run, metric, breakdown and subset (value, n, interval,
missing items), each "Avg." against the mean of its own parts, the by-length rows against the run's overall row, and
the pooled foil-type table against ``foilbench metrics --by foil_type`` of each run. The runs differ in size: full
runs, Video-LLM runs scored with ``--limit`` and an import of answers for part of VITATECS, so a table pooling them
over the union of their items would count the items a run was not asked as failures, and this test would see it."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.config import DataSource, ScoreConfig
from bench.metrics import Settings, run_table
from bench.metrics.aggregate import mean_of_means_row
from bench.metrics.breakdowns import by_length, item_duration, length_edges
from bench.metrics.dispatch import benchmark_outcomes, run_items
from bench.registry import spec
from bench.store import read_run
from fixtures_widgets import TINY_RUNS

pytestmark = pytest.mark.slow

N_BOOT = 50
SETTINGS = Settings(n_boot=N_BOOT)
# (protocol, tiny model, benchmark, limit): the text-only model on every benchmark, CLIP on VITATECS, and Qwen2-VL on
# part of each benchmark (as the demo scores its Video-LLMs on a subset)
RUNS = [("loglik", "gpt2", b, None) for b in ("vilma", "vitatecs", "velociti", "videocon", "vinoground")] + [
    ("similarity", "clip", "vitatecs", None), ("entail", "qwen2vl", "vitatecs", 3), ("entail", "qwen2vl", "vilma", 9),
    ("entail", "qwen2vl", "velociti", 5), ("mc", "qwen2vl", "velociti", 4), ("entail", "qwen2vl", "videocon", 7),
    ("mc", "qwen2vl", "vinoground", 2), ("loglik", "gpt2", "mvp", None), ("mc", "qwen2vl", "mvp", 5),
    ("similarity", "clip", "temporalbench", None), ("mc", "qwen2vl", "temporalbench", 7)]
IMPORTED = "closed (imported)"
# the subsets each paper's "Avg." averages: the breakdown they are rows of, and those left out
AVERAGE_PARTS = {"vitatecs": ("subset", ()), "velociti": ("subset", ("control",)), "vilma": ("test", ()),
                 "mvp": ("subset", ())}
REPORTED = ("vilma", "vitatecs", "velociti", "videocon", "vinoground", "mvp", "temporalbench")
KEY = ["metric", "by", "subset"]


@pytest.fixture(scope="module")
def built(sample, tiny, tmp_path_factory):
    from bench.importers.common import import_run
    from bench.loaders import load
    from bench.report.build import build_report
    from bench.scoring.runner import score

    home = tmp_path_factory.mktemp("runs")
    paths = []
    for protocol, model, benchmark, limit in RUNS:
        s = sample[benchmark]
        paths.append(score(ScoreConfig(DataSource.of(benchmark, s.data_path, s.video_root, s.loader_options),
                                       tiny(model), family=TINY_RUNS[model][0], protocol=protocol, limit=limit,
                                       out=home / f"{benchmark}-{protocol}-{model}", name=f"{protocol} tiny-{model}",
                                       progress=False)))
    s = sample["vitatecs"]
    items = [it for it in load("vitatecs", s.data_path).items if it.role == "main"]
    answers = home / "answers.csv"
    answers.write_text("item_id,text,answer\n" + "".join(
        f"{it.item_id},{it.truth[0][0]},Yes\n{it.item_id},{1 - it.truth[0][0]},{'Yes' if n % 2 else 'No'}\n"
        for n, it in enumerate(items[:3])))
    paths.append(import_run("answers", [answers], DataSource.of("vitatecs", s.data_path, s.video_root), home / "imp",
                            IMPORTED))
    out = tmp_path_factory.mktemp("report")
    build_report(paths, out, n_boot=N_BOOT, progress=False, jobs=2, pool_by=["foil_type"])
    return [read_run(p) for p in paths], out


def _runs_of(runs, benchmark: str) -> dict[str, object]:
    return {r.label: r for r in runs if r.manifest.benchmark == benchmark}


def _run_of(label: str, names) -> str:
    """The run a table row belongs to: its label, or a label a table extended (``"<run> (8 frames)"``)."""
    if label in names:
        return label
    found = [name for name in names if label.startswith(f"{name} (")]
    assert found, f"row of unknown run {label!r} (runs: {sorted(names)})"
    return max(found, key=len)


def _same(ours: float, theirs: float) -> bool:
    if pd.isna(ours) or pd.isna(theirs):
        return pd.isna(ours) and pd.isna(theirs)
    return math.isclose(float(ours), float(theirs), rel_tol=1e-9, abs_tol=1e-12)


class Engine:
    """The engine's rows for one run, by breakdown: ``run_table``, with any other label breakdown asked for, and
    per video-length bin with the report's bins."""

    def __init__(self, run, edges, seconds):
        self.run, self.edges, self.seconds = run, edges, seconds
        self.tables = {None: run_table(run, SETTINGS)}

    def rows(self, by: str) -> pd.DataFrame:
        table = self.tables[None]
        if by in set(table["by"]):
            return table
        if by not in self.tables:
            if by == "length":
                items = run_items(self.run)
                outcomes = benchmark_outcomes(items, self.run.pair, self.run.choice, self.run.manifest.benchmark)
                self.tables[by] = by_length(outcomes, items, self.edges, self.seconds, SETTINGS)
            else:
                self.tables[by] = run_table(self.run, SETTINGS, by=[by])
        return self.tables[by]

    def average(self, name: str) -> pd.DataFrame:
        """The papers' average a report adds to a table (VITATECS' "Avg. accuracy"): the engine's mean of the run's
        per-subset rates."""
        metric = name.removeprefix("Avg. ")
        outcomes = benchmark_outcomes(run_items(self.run), self.run.pair, self.run.choice,
                                      self.run.manifest.benchmark)
        subsets = sorted(set(outcomes.loc[outcomes["metric"] == metric, "subset"]))
        return pd.DataFrame([mean_of_means_row(outcomes, metric, {s: [s] for s in subsets}, name, SETTINGS)])

    def row(self, metric: str, by: str, subset: str) -> pd.Series:
        rows = self.rows(by)
        if metric.startswith("Avg. ") and by == "all" and metric not in set(rows["metric"]):
            rows = self.average(metric)
        hit = rows[(rows["metric"] == metric) & (rows["by"] == by) & (rows["subset"].astype(str) == str(subset))]
        assert len(hit) == 1, f"{self.run.label}: the engine has {len(hit)} rows for {(metric, by, subset)}"
        return hit.iloc[0]


def _engines(runs, benchmark: str) -> dict[str, Engine]:
    from bench.frames import durations

    mine = _runs_of(runs, benchmark)
    union = list({it.item_id: it for r in mine.values() for it in r.items()}.values())  # what the report reads
    seconds = durations([c.path for it in union for c in it.clips])
    edges = length_edges(union, durations=seconds)
    return {label: Engine(run, edges, seconds) for label, run in mine.items()}


def _metric_csvs(out: Path, benchmark: str) -> list[tuple[Path, pd.DataFrame]]:
    found = []
    for path in sorted((out / benchmark).glob("*.csv")):
        frame = pd.read_csv(path, keep_default_na=True)
        if {"run", "metric", "by", "subset", "value"} <= set(frame.columns):
            if "source" in frame.columns:  # a published table: our cells only
                frame = frame[frame["source"] == "ours"]
            found.append((path, frame.dropna(subset=["metric"])))
    return found


@pytest.mark.parametrize("benchmark", REPORTED)
def test_every_metric_row_of_the_report_is_the_engines(built, benchmark):
    runs, out = built
    engines = _engines(runs, benchmark)
    checked = 0
    for path, frame in _metric_csvs(out, benchmark):
        for r in frame.to_dict("records"):
            if path.name == "headline.csv" and pd.isna(r["value"]):
                assert engines[r["run"]].tables[None].empty, f"{path.name}: no headline for a run with numbers"
                continue
            engine = engines[_run_of(r["run"], engines)]
            expected = engine.row(r["metric"], r["by"], r["subset"])
            where = f"{path.name}: {r['run']} {r['metric']} {r['by']}={r['subset']}"
            assert _same(r["value"], expected["value"]), f"{where}: value {r['value']} != {expected['value']}"
            for column in ("n", "n_missing", "n_dropped"):
                if column in r:
                    assert int(r[column]) == int(expected[column]), f"{where}: {column} {r[column]} != " \
                                                                    f"{expected[column]}"
            for column in ("ci_low", "ci_high", "strict"):
                if column in r:
                    assert _same(r[column], expected[column]), f"{where}: {column} {r[column]} != {expected[column]}"
            checked += 1
    assert checked > 0


def test_the_report_counts_no_item_a_run_was_not_asked(built):
    """The runs scored every item they were asked: no report row may show a missing item."""
    runs, out = built
    assert not any(len(r.failures) for r in runs)
    sizes = {len(r.items()) for r in runs if r.manifest.benchmark == "vitatecs"}
    assert len(sizes) > 1  # runs of different sizes share the VITATECS tables
    for benchmark in REPORTED:
        for path, frame in _metric_csvs(out, benchmark):
            if "n_missing" in frame:
                assert (frame["n_missing"].fillna(0) == 0).all(), f"{path.name}: missing items in a complete run"


def _average_parts(benchmark: str, table: pd.DataFrame, metric: str) -> pd.DataFrame:
    by, left_out = AVERAGE_PARTS[benchmark]
    parts = table[(table["metric"] == metric) & (table["by"] == by) & ~table["subset"].isin(left_out)]
    return parts[parts["n"] > 0]


@pytest.mark.parametrize("benchmark", sorted(AVERAGE_PARTS))
def test_every_average_is_the_mean_of_its_own_parts(built, benchmark):
    runs, out = built
    engines = _engines(runs, benchmark)
    seen = 0
    for path, frame in _metric_csvs(out, benchmark):
        if "n" not in frame:  # a published table: its cells are checked against the engine's rows above
            continue
        averages = frame[frame["metric"].str.startswith("Avg. ") | (frame["by"] == "average")]
        for r in averages.to_dict("records"):
            metric = r["metric"].removeprefix("Avg. ")
            parts = _average_parts(benchmark, engines[_run_of(r["run"], engines)].tables[None], metric)
            assert len(parts), f"{path.name}: {r['run']} {r['metric']} averages nothing"
            assert r["value"] == pytest.approx(parts["value"].mean()), f"{path.name}: {r['run']} {r['metric']}"
            assert int(r["n"]) == int(parts["n"].sum())
            own = _average_parts(benchmark, frame[frame["run"] == r["run"]], metric)
            if len(own):  # the table shows the parts too: its average is theirs
                assert len(own) == len(parts) and r["value"] == pytest.approx(own["value"].mean())
            seen += 1
    assert seen > 0


@pytest.mark.parametrize("benchmark", ["vilma", "vitatecs", "videocon", "vinoground"])
def test_the_length_bins_follow_the_data_and_add_up_to_each_runs_numbers(built, benchmark):
    runs, out = built
    engines = _engines(runs, benchmark)
    frames = [f for p, f in _metric_csvs(out, benchmark) if p.name.endswith("_by_length.csv")]
    assert len(frames) == 1
    frame = frames[0]
    engine = next(iter(engines.values()))
    lengths = pd.Series([item_duration(it, engine.seconds) for r in runs if r.manifest.benchmark == benchmark
                         for it in r.items() if it.role == "main"]).dropna()
    edges = engine.edges
    assert edges[0] <= lengths.min() and lengths.max() < edges[-1]  # the bins cover the data, no more
    for low, high in zip(edges[:-1], edges[1:]):
        assert ((lengths >= low) & (lengths < high)).any(), f"empty bin [{low}, {high})"
    assert len(edges) > 2 or lengths.nunique() == 1  # several bins where the lengths differ
    assert set(frame["subset"]) <= {f"[{lo:g}, {hi:g}) s" for lo, hi in zip(edges[:-1], edges[1:])}
    for (label, metric), rows in frame.groupby(["run", "metric"]):
        overall = engines[label].row(metric, "all", "all")
        assert int(rows["n"].sum()) == int(overall["n"]), f"{label} {metric}: items over the bins"
        assert (rows["value"] * rows["n"]).sum() == pytest.approx(overall["value"] * overall["n"])
        assert int(rows["n_missing"].sum()) == int(overall["n_missing"])


def test_the_pooled_foil_type_table_is_each_runs_breakdown_by_foil_type(built):
    runs, out = built
    pooled = pd.read_csv(out / "by-foil_type.csv")
    assert len(pooled)
    for label, rows in pooled.groupby("run"):
        expected: dict[str, list[float]] = {}
        for run in (r for r in runs if r.label == label):
            table = run_table(run, SETTINGS, by=["foil_type"])
            judged = table[(table["by"] == "foil_type") & table["metric"].isin(spec(run.manifest.benchmark)
                                                                              .item_score)]
            first = [m for m in spec(run.manifest.benchmark).item_score if m in set(judged["metric"])]
            for r in judged.to_dict("records"):
                if r["metric"] in first[:1] or run.manifest.benchmark == "videocon":  # its two kinds of item
                    right, n = expected.setdefault(r["subset"], [0.0, 0])
                    expected[r["subset"]] = [right + r["strict"] * r["n"], n + int(r["n"])]  # a tie: not told apart
        assert set(rows["value"]) == set(expected), label
        for r in rows.to_dict("records"):
            right, n = expected[r["value"]]
            assert int(r["n"]) == n, f"{label} {r['value']}: n"
            assert r["accuracy"] == pytest.approx(100 * right / n), f"{label} {r['value']}: accuracy"


def test_an_import_of_part_of_a_benchmark_is_over_its_answers(built):
    runs, out = built
    imported = next(r for r in runs if r.label == IMPORTED)
    answered = set(imported.pair["item_id"])
    table = pd.read_csv(out / "vitatecs" / "accuracy.csv")
    overall = table[(table["run"] == IMPORTED) & (table["by"] == "all") & (table["metric"] == "accuracy")].iloc[0]
    right = imported.pair.pivot_table(index="item_id", columns="text", values="score")
    assert overall["n"] == len(answered) == 3 and overall["n_missing"] == 0
    truth = {it.item_id: it.truth[0][0] for it in imported.items()}
    wins = [row[truth[i]] > row[1 - truth[i]] for i, row in right.iterrows()]
    assert overall["value"] == pytest.approx(np.mean(wins))
