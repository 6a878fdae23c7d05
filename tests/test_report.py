"""The paper notebooks executed with papermill on the sample suite's runs, and the report they build."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from bench.devkit.demo import score_sample
from bench.metrics import Settings, run_table
from bench.report.build import NOTEBOOK_DIR, NotebookFailed, build_report, notebooks
from bench.store import read_run
from conftest import CHROMIUM_FLAGS


@pytest.fixture(scope="module")
def report(sample, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    runs = score_sample(home, sample, progress=False)
    index = build_report(runs, home / "report", n_boot=50, progress=False)
    return runs, index.parent


def test_every_notebook_ran_and_is_linked(report):
    _, out = report
    index = (out / "index.html").read_text()
    for name in notebooks():
        assert (out / "notebooks" / f"{name}.html").is_file()
        assert f"notebooks/{name}.html" in index
    assert index.count("<img ") == len(list(out.glob("*/*.png")))


def test_tables_hold_the_values_bench_computes(report):
    runs, out = report
    vilma_run = next(r for r in runs if "vilma-similarity" in str(r))
    expected = run_table(read_run(vilma_run), Settings(n_boot=50))
    table = pd.read_csv(out / "vilma" / "main_table.csv").set_index("run")
    row = expected[(expected.metric == "P+T") & (expected.by == "test")].iloc[0]
    cell = table.loc[row["run"], f"P+T {row['subset']}"]
    assert cell.startswith(f"{100 * row['value']:.1f}")
    assert float(table.loc["chance", f"P+T {row['subset']}"]) == pytest.approx(100 * row["chance"], abs=0.05)
    velociti = pd.read_csv(out / "velociti" / "multiple_choice.csv")
    assert {"MC A agent_bind", "MC B agent_bind", "MC bias (B-A) agent_bind"} <= set(velociti.columns)
    stats = pd.read_csv(out / "vitatecs" / "statistics.csv")
    assert stats["n"].sum() == 7 and set(stats.columns) == {"subset", "source", "n"}
    quadrants = pd.read_csv(out / "velociti" / "scatter_quadrants.csv")
    assert quadrants[quadrants.quadrant == "all"]["n"].tolist() == [6]
    published = pd.read_csv(out / "vilma" / "main_table_published.csv")
    assert {"published", "ours"} <= set(published["source"])


def test_figures_are_valid_images(report):
    _, out = report
    pngs, svgs = list(out.glob("*/*.png")), list(out.glob("*/*.svg"))
    assert len(pngs) >= 10 and len(svgs) == len(pngs)
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 2000
    for svg in svgs:
        assert "<svg" in svg.read_text()[:500]
    for name in ("vilma/length_distribution", "velociti/entailment_scatter", "velociti/choice_bias",
                 "vinoground/categories", "vitatecs/changed_words", "videocon/misalignments"):
        assert (out / f"{name}.png").is_file(), name


def test_committed_notebooks_have_no_outputs_and_a_parameters_cell():
    for name in notebooks().values():
        book = json.loads((NOTEBOOK_DIR / name).read_text())
        assert all(not c.get("outputs") and not c.get("execution_count") for c in book["cells"] if c["cell_type"] == "code")
        assert any("parameters" in c["metadata"].get("tags", []) for c in book["cells"])


def test_bad_parameters_give_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="unknown notebook"):
        build_report([], tmp_path, ["vbench"], data={"vilma": "x"}, progress=False)
    with pytest.raises(ValueError, match="no notebook to run"):
        build_report([], tmp_path, progress=False)
    with pytest.raises(NotebookFailed, match=r"notebook vitatecs\.ipynb, cell \d+: FileNotFoundError"):
        build_report([], tmp_path, ["vitatecs"], data={"vitatecs": str(tmp_path / "absent")}, progress=False)


def test_index_shows_the_charts_in_headless_chromium(report, tmp_path, chromium):
    from playwright.sync_api import sync_playwright

    _, out = report
    shot = Path(tmp_path) / "index.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1600})
            page.goto((out / "index.html").as_uri())
            page.wait_for_load_state("load")
            loaded = page.eval_on_selector_all("img", "imgs => imgs.filter(i => i.complete && i.naturalWidth > 0).length")
            total = page.eval_on_selector_all("img", "imgs => imgs.length")
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert total >= 10 and loaded == total
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("L"))
    assert len(np.unique(pixels)) > 20 and pixels.std() > 10  # not a blank page
