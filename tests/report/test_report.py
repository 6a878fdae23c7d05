"""The paper notebooks executed with papermill on a few of the sample suite's runs, the report they build, how it shows
in a browser, and the report command's mistakes as one line."""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from bench.config import DataSource, ScoreConfig
from bench.metrics import Settings, run_table
from bench.report.build import NOTEBOOK_DIR, build_report, notebooks
from bench.store import read_run
from conftest import CHROMIUM_FLAGS
from fixtures_widgets import TINY_RUNS

N_BOOT = 50
# The runs the report tests need (protocol, tiny model, benchmark): the cheap text-only model on seven benchmarks,
# Qwen2-VL's entailment and multiple choice where the figures need them (VELOCITI's scatter and choice bias), and its
# multiple choice on TVBench, whose items the text-only model cannot rank (their options are answers to a question).
RUNS = [("loglik", "gpt2", b) for b in ("vilma", "vitatecs", "velociti", "vinoground", "mvp", "temporalbench",
                                        "tempcompass")] + [
    ("entail", "qwen2vl", "velociti"), ("mc", "qwen2vl", "velociti"), ("mc", "qwen2vl", "vinoground"),
    ("mc", "qwen2vl", "tvbench")]
ANNOTATION_ONLY = "videocon"  # reported from its annotation files alone, in the same build
LABEL = "foil_type"  # the label the sample world's labels.csv gives every item


@pytest.fixture(scope="module")
def scored(sample, tiny, tmp_path_factory):
    from bench.scoring.runner import score

    home = tmp_path_factory.mktemp("runs")
    runs = []
    for protocol, model, benchmark in RUNS:
        s = sample[benchmark]
        runs.append(score(ScoreConfig(DataSource.of(benchmark, s.data_path, s.video_root, s.loader_options),
                                      tiny(model), family=TINY_RUNS[model][0], protocol=protocol,
                                      out=home / f"{benchmark}-{protocol}-{model}", name=f"{protocol} tiny-{model}",
                                      progress=False)))
    return runs


@pytest.fixture(scope="module")
def report(scored, sample, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    index = build_report(scored, out, data={ANNOTATION_ONLY: str(sample[ANNOTATION_ONLY].data_path)}, n_boot=N_BOOT,
                         progress=False, jobs=2, pool_by=[LABEL])
    return scored, index.parent


def contents(out: Path, name: str) -> list[dict]:
    return json.loads((out / name / "contents.json").read_text())["entries"]


@pytest.mark.slow
def test_every_notebook_ran_and_every_table_and_figure_is_in_the_index(report):
    _, out = report
    index = (out / "index.html").read_text()
    figures = 0
    for name in notebooks():
        assert f"notebooks/{name}.html" in index
        entries = contents(out, name)
        assert entries and all(e["title"] and e["caption"] for e in entries)
        for entry in entries:
            for file in entry["files"]:
                assert (out / name / file).is_file()
            if entry["name"] != "headline":
                assert f"{name}/{entry['files'][0]}" in index and html.escape(entry["title"]) in index
        figures += sum(e["kind"] == "figure" for e in entries)
    assert index.count("<img ") == figures + 1 and figures > 0  # and the pooled label's figure
    assert "<h1>Foilbench report</h1>" in index and index.index("id='headline'") < index.index(f"id='by-{LABEL}'") < \
        index.index("id='runs'") < index.index("id='vilma'")


@pytest.mark.slow
def test_a_label_asked_for_pools_each_runs_items_over_benchmarks(report):
    from bench.metrics.pooled import pool_runs
    from bench.report.index import pooled_section

    runs, out = report
    shown = pd.read_csv(out / f"by-{LABEL}.csv")
    expected = pool_runs([read_run(r) for r in runs], LABEL)
    assert len(shown) == len(expected) > 0
    assert shown["accuracy"].tolist() == pytest.approx(expected["accuracy"].tolist())
    index = (out / "index.html").read_text()
    assert (out / f"by-{LABEL}.png").is_file() and f"src='by-{LABEL}.png'" in index
    assert pooled_section(out, [read_run(r) for r in runs], "no_such_label") == ""  # no item carries it: no section
    for row in expected.itertuples():
        assert f"{row.accuracy:.1f}{'*' if row.above else ''}<span class='ci'>[{row.low:.1f}, {row.high:.1f}]</span>" \
            in index


@pytest.mark.slow
def test_headline_holds_each_runs_main_score_and_failures(report):
    runs, out = report
    headline = pd.read_csv(out / "headline.csv")
    assert len(headline) == len(runs)
    for path in runs:
        run = read_run(path)
        row = headline[headline["path"] == str(path)].iloc[0]
        table = run_table(run, Settings(n_boot=N_BOOT))
        expected = table[(table.metric == row["metric"]) & (table.by == row["by"]) & (table.subset == row["subset"])]
        assert row["value"] == pytest.approx(expected["value"].iloc[0])
        assert row["failures"] == run.failures["item_id"].nunique()
    main = {"vilma": ("Avg. P+T", "all"), "vinoground": ("group", "all"), "mvp": ("paired accuracy", "average"),
            "temporalbench": ("MBA", "all")}
    for benchmark, (metric, by) in main.items():
        mine = headline[(headline.benchmark_name == benchmark) & (headline.protocol == "loglik")]
        assert len(mine) and (mine.metric == metric).all() and (mine.by == by).all(), benchmark
    listed = pd.read_csv(out / "runs.csv")
    assert sorted(listed["path"]) == sorted(map(str, runs))
    assert {"model", "family", "protocol", "frames", "prompt", "commit", "date"} <= set(listed.columns)


@pytest.mark.slow
def test_tables_hold_the_values_bench_computes(report):
    runs, out = report
    vilma = read_run(next(r for r in runs if r.name.startswith("vilma")))
    expected = run_table(vilma, Settings(n_boot=N_BOOT))
    table = pd.read_csv(out / "vilma" / "main_table.csv")
    for metric in ("P", "T", "P+T"):
        mine = expected[(expected.metric == metric) & (expected.by == "test")].set_index("subset")["value"]
        theirs = table[(table.metric == metric) & (table.by == "test")].set_index("subset")["value"]
        pd.testing.assert_series_equal(theirs.sort_index(), mine.sort_index(), check_names=False)
    ours = pd.read_csv(out / "vilma" / "main_table_published.csv")
    assert {"published", "ours"} <= set(ours["source"])
    items = [it for it in read_run(next(r for r in runs if r.name.startswith("vitatecs"))).items() if it.role == "main"]
    stats = pd.read_csv(out / "vitatecs" / "statistics.csv")
    assert stats["items"].sum() == len(items) and set(stats["aspect"]) == {it.subset for it in items}
    from bench.metrics import velociti

    entail = read_run(next(r for r in runs if r.name == "velociti-entail-qwen2vl"))
    points = velociti.entailment_points(entail.items(), entail.pair)
    quadrants = pd.read_csv(out / "velociti" / "scatter_quadrants.csv").set_index("quadrant")
    assert quadrants.loc["all", entail.label] == len(points)
    mc = pd.read_csv(out / "velociti" / "multiple_choice_per_test.csv")
    assert {"MC A", "MC B", "MC A∧B", "MC bias (B-A)"} <= set(mc["metric"])


@pytest.mark.slow
def test_vinoground_categories_chart_shows_its_csv(report):
    _, out = report
    table = pd.read_csv(out / "vinoground" / "categories.csv")
    svg = (out / "vinoground" / "categories.svg").read_text()
    bars = {m[0]: int(m[1]) for m in re.findall(r'aria-label="Category: ([^;"]+); Pairs: (\d+);', svg)}
    assert bars == dict(zip(table["category"], table["pairs"]))


@pytest.mark.slow
def test_the_annotation_only_notebook_shows_its_statistics(report):
    _, out = report
    entries = {e["name"] for e in contents(out, ANNOTATION_ONLY)}
    assert {"statistics", "misalignments"} <= entries and "headline" not in entries


@pytest.mark.slow
def test_notebooks_display_every_table_and_figure_uncut(report):
    _, out = report
    for name in notebooks():
        book = json.loads((out / "notebooks" / f"{name}.ipynb").read_text())
        shown = [o for c in book["cells"] for o in c.get("outputs", [])]
        assert not [o for o in shown if o["output_type"] == "error"]
        html = ["".join(o.get("data", {}).get("text/html", "")) for o in shown]
        entries = contents(out, name)
        assert sum("class='fb-table" in h for h in html) == sum(e["kind"] == "table" for e in entries)
        assert sum("class='fb-figure'" in h for h in html) == sum(e["kind"] == "figure" for e in entries)
        text = "".join(html) + "".join("".join(o.get("text", "")) for o in shown)
        assert not re.search(r"\d+ rows × \d+ columns", text)
        assert "application/vnd.jupyter.widget-view+json" not in json.dumps(book)


def _page(browser, path: Path, shots: Path | None) -> dict:
    """Open a page as a user would and report what it showed: outside requests, failures, console errors, images."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    seen = {"outside": [], "failed": [], "errors": []}
    page.on("request", lambda r: seen["outside"].append(r.url) if not r.url.startswith(("file:", "data:")) else None)
    page.on("requestfailed", lambda r: seen["failed"].append(r.url))
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    seen["images"] = page.eval_on_selector_all("img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0)")
    seen["tables"] = page.eval_on_selector_all("figure.fb-table", "f => f.length")
    seen["headline"] = page.eval_on_selector_all(
        "figure.headline table thead th", "ths => ths.map(t => t.textContent.trim())")
    seen["headline_rows"] = page.eval_on_selector_all("figure.headline table tbody tr", "rows => rows.length")
    if shots is not None:
        page.screenshot(path=str(shots / f"{path.stem}.png"), full_page=True)
    page.close()
    return seen


@pytest.mark.slow
@pytest.mark.browser
def test_the_report_shows_offline_in_a_browser(report, chromium, tmp_path):
    from playwright.sync_api import sync_playwright

    runs, out = report
    shots = Path(os.environ["FOILBENCH_ARTIFACTS"]) / "report" if os.environ.get("FOILBENCH_ARTIFACTS") else None
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
    pages = [out / "index.html"] + [out / "notebooks" / f"{n}.html" for n in notebooks()]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            seen = {page.name: _page(browser, page, shots) for page in pages}
        finally:
            browser.close()
    for name, page in seen.items():
        assert page["outside"] == [] and page["failed"] == [] and page["errors"] == [], name
        assert page["images"] and all(page["images"]), name
        assert page["tables"] > 0, name
    benchmarks = {read_run(r).manifest.benchmark for r in runs}
    index = seen["index.html"]
    from bench.registry import spec

    assert set(index["headline"]) - {""} == {spec(b).title for b in benchmarks}
    assert index["headline_rows"] == len({(p.split("-")[1], p.split("-")[2]) for p in (r.name for r in runs)})
    figures = sum(e["kind"] == "figure" for n in notebooks() for e in contents(out, n))
    assert len(index["images"]) == figures + 1  # and the pooled label's figure


FIGURES_JS = """imgs => imgs.map(i => ({src: i.getAttribute('src'), natural: i.naturalWidth,
    shown: i.getBoundingClientRect().width, room: i.closest('figure').clientWidth,
    link: i.closest('a') ? i.closest('a').getAttribute('href') : null}))"""
TABLE_JS = """t => ({collapse: getComputedStyle(t).borderCollapse, font: getComputedStyle(document.body).fontFamily,
    width: getComputedStyle(document.body).maxWidth})"""


@pytest.mark.slow
@pytest.mark.browser
def test_every_figure_is_shown_where_its_labels_are_readable(report, chromium):
    """Each figure's axis labels (the size the chart sets, times its render scale, times the width shown over the
    image's natural width) are at least 10 px on a laptop-wide window, the figure fits the page and links to its
    full-size file; a table's own page has the index's style."""
    from playwright.sync_api import sync_playwright

    from bench.report.outputs import LABEL_SIZE, RENDER_SCALE

    _, out = report
    table_page = next(out / n / f"{e['name']}.html" for n in notebooks() for e in contents(out, n)
                      if e["kind"] == "table")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1440, "height": 900})
            page.goto((out / "index.html").as_uri())
            page.wait_for_load_state("load")
            shown = page.eval_on_selector_all(".fb-figure img", FIGURES_JS)
            index_style = page.eval_on_selector(".fb-table table", TABLE_JS)
            page.goto(table_page.as_uri())
            page.wait_for_load_state("load")
            table_style = page.eval_on_selector(".fb-table table", TABLE_JS)
        finally:
            browser.close()
    figures = sum(e["kind"] == "figure" for n in notebooks() for e in contents(out, n))
    assert len(shown) == figures + 1  # and the foil-type figure
    for figure in shown:
        label = LABEL_SIZE * RENDER_SCALE * figure["shown"] / figure["natural"]
        assert label >= 10, f"{figure['src']}: labels {label:.1f} px"
        assert figure["shown"] <= figure["room"] + 1, f"{figure['src']} is wider than the page"
        assert figure["link"] == figure["src"], f"{figure['src']} is not linked to its full-size file"
    assert table_style == index_style and table_style["collapse"] == "collapse"


def _cli(capfd, *args: str) -> str:
    """Run ``foilbench report ARGS`` and return its one line of error (asserting it is one line, no traceback)."""
    from bench.cli import main

    code = main(["report", *args])
    err = capfd.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("foilbench report: error: ")
    return lines[0]


def test_notebooks_against_the_runs_benchmarks_is_one_line(scored, tmp_path, capfd):
    velociti = [str(r) for r in scored if r.name.startswith("velociti")]
    line = _cli(capfd, *velociti, "--notebooks", "vilma", "--out", str(tmp_path / "out"))
    assert "--notebooks vilma" in line and "no run of vilma" in line and "velociti" in line
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("args, words", [
    (["--notebooks", "vbench", "--data", "vilma=."], ["--notebooks", "vbench", "vinoground"]),
    (["--data", "vilma"], ["--data", "BENCHMARK=PATH"]),
    (["--data", "nope=."], ["--data nope=.", "no paper notebook"]),
    (["--data", "vilma=/absent/file"], ["/absent/file", "no such file"]),
    (["--data", "vilma=.", "--format", "gif"], ["png, svg", "gif"]),
    (["--data", "vilma=.", "--bootstrap", "0"], ["--bootstrap"]),
    (["--data", "vilma=.", "--jobs", "0"], ["--jobs"]),
    (["/absent/run"], ["/absent/run"]),
    ([], ["no notebook to run"]),
])
def test_report_mistakes_are_one_line(args, words, tmp_path, capfd):
    line = _cli(capfd, *args, "--out", str(tmp_path / "out"))
    for word in words:
        assert word in line


@pytest.mark.slow
def test_a_failing_notebook_names_the_notebook_cell_and_error(tmp_path, capfd):
    broken = tmp_path / "broken.csv"
    broken.write_text("not,a,velociti,file\n1,2,3,4\n")
    line = _cli(capfd, "--data", f"velociti={broken}", "--out", str(tmp_path / "out"))
    assert re.search(r"notebook velociti\.ipynb failed in cell \d+ \(line \d+: rep = open_report\(.*\): "
                     r"LoaderError: .*broken\.csv.*missing column", line), line
    assert str(tmp_path / "out" / "notebooks" / "velociti.ipynb") in line


def test_committed_notebooks_have_no_outputs_and_a_parameters_cell():
    for name in notebooks().values():
        book = json.loads((NOTEBOOK_DIR / name).read_text())
        assert all(not c.get("outputs") and not c.get("execution_count") for c in book["cells"]
                   if c["cell_type"] == "code")
        assert any("parameters" in c["metadata"].get("tags", []) for c in book["cells"])


def _fake_notebooks(monkeypatch) -> list[tuple[str, list[str]]]:
    """Notebook runs recorded instead of executed (name, the runs given), each writing a page."""
    from bench.report import build

    calls = []

    def run(name: str, out: Path, parameters: dict) -> Path:
        calls.append((name, sorted(parameters["runs"])))
        page = out / "notebooks" / f"{name}.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(name)
        return page

    monkeypatch.setattr(build, "run_notebook", run)
    return calls


def _of(runs, benchmark: str) -> list[str]:
    return sorted(str(Path(r).resolve()) for r in runs if read_run(r).manifest.benchmark == benchmark)


def test_each_notebook_gets_its_own_benchmarks_runs_and_one_started_early_runs_once(scored, tmp_path, monkeypatch):
    from bench.report.build import ReportBuilder

    calls = _fake_notebooks(monkeypatch)
    report = ReportBuilder(tmp_path / "out", progress=False, jobs=2, n_boot=N_BOOT, pool_by=[LABEL])
    try:
        assert report.start("velociti", _of(scored, "velociti")) and not report.start("no-such-paper", scored)
        index = report.finish(scored)
    finally:
        report.close()
    benchmarks = sorted({read_run(r).manifest.benchmark for r in scored})
    assert sorted(name for name, _ in calls) == benchmarks  # velociti's notebook once, though started before
    assert all(runs == _of(scored, name) for name, runs in calls)
    assert sorted(report.done()) == benchmarks and list(report.pages) == [b for b in notebooks() if b in benchmarks]
    page = index.read_text()
    assert "id='by-foil_type'" in page and "id='runs'" in page and all(f"id='{b}'" in page for b in benchmarks)


def test_a_notebook_started_on_other_runs_of_its_benchmark_runs_again_on_those_given_at_the_end(scored, tmp_path,
                                                                                                monkeypatch):
    from bench.report.build import ReportBuilder

    calls = _fake_notebooks(monkeypatch)
    report = ReportBuilder(tmp_path / "out", progress=False, jobs=2, n_boot=N_BOOT)
    velociti = _of(scored, "velociti")
    try:
        report.start("velociti", velociti[:1])
        report.finish([r for r in scored if str(Path(r).resolve()) in velociti])
    finally:
        report.close()
    assert calls == [("velociti", velociti[:1]), ("velociti", velociti)]
