"""The shipped notebooks/explore.ipynb in a real JupyterLab driven by headless Chromium, as a user runs it (Run All,
kernel in notebooks/, runs found under the data home): what the widgets show, what clicks do, and no console error
or failed request. Screenshots are kept under $FOILBENCH_ARTIFACTS when set."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.metrics.flags import RunScores, run_margins
from bench.paths import HOME_ENV
from bench.store import read_run
from conftest import CHROMIUM_FLAGS
from fixtures_widgets import BENCHMARK, demo_home
from widgets.describe import number
from widgets.diff import item_diff
from widgets.runs import find_runs

pytestmark = [pytest.mark.browser, pytest.mark.slow]
FLAGS = CHROMIUM_FLAGS + ["--autoplay-policy=no-user-gesture-required"]
REPO = Path(__file__).resolve().parents[2]
PROBABILITY_ONLY = ("StrictVLE", "pos acc", "neg acc | pos")
CHOICE = re.compile(r"chose [AB] \((caption|foil)\) in order A=(caption|foil), B=(caption|foil) · logits A \S+, B \S+")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def home(sample, tiny, tmp_path_factory):
    return demo_home(tmp_path_factory.mktemp("home"), sample, tiny)


@pytest.fixture()
def jupyterlab(tmp_path, home):
    """JupyterLab serving a copy of the shipped notebook at notebooks/explore.ipynb, with the data home ``home``."""
    port = _free_port()
    (tmp_path / "notebooks").mkdir()
    shutil.copyfile(REPO / "notebooks" / "explore.ipynb", tmp_path / "notebooks" / "explore.ipynb")
    env = {**os.environ, HOME_ENV: str(home), "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}  # this checkout
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         "--ServerApp.token=", "--ServerApp.password=", "--ServerApp.disable_check_xsrf=True",
         f"--ServerApp.root_dir={tmp_path}", f"--LabApp.workspaces_dir={tmp_path / 'ws'}", "--LabApp.news_url=None"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + 90
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                if time.time() > deadline or server.poll() is not None:
                    pytest.fail("JupyterLab did not start")
                time.sleep(0.5)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def _column(page, index: int) -> list[str]:
    return page.eval_on_selector_all(".fb-items tr.fb-row", f"rows => rows.map(r => r.cells[{index}].innerText)")


def _until(page, what: str, predicate: str, arg=None) -> None:
    """Wait (30 s at most) until the JavaScript ``predicate(arg)`` holds (the kernel answers clicks
    asynchronously); fail saying ``what`` was expected."""
    from playwright.sync_api import TimeoutError

    try:
        page.wait_for_function(predicate, arg=arg, timeout=30_000)
    except TimeoutError:
        pytest.fail(f"within 30 s, expected {what}")


ROWS = "[...document.querySelectorAll('.fb-items tr.fb-row')]"
TITLE = "document.querySelector('.fb-title').innerText"


def _media_load_cancelled(request) -> bool:
    """A video element that changes source, or has buffered enough, cancels its range request: not a failure."""
    return request.resource_type == "media" and request.failure == "net::ERR_ABORTED"


def test_explore_notebook_as_shipped(home, tmp_path, jupyterlab, chromium):
    from playwright.sync_api import sync_playwright

    runs = [read_run(f) for f in find_runs(BENCHMARK, under=home / "runs")]
    items = {it.item_id: it for it in runs[0].items()}
    margins = run_margins(list(items.values()), {r.label: RunScores.of(r) for r in runs}).set_index(
        ["run", "item_id"])["margin"]
    artifacts = Path(os.environ.get("FOILBENCH_ARTIFACTS", tmp_path / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 2400})
        try:
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.on("requestfailed", lambda r: None if _media_load_cancelled(r) else problems.append(
                f"request failed: {r.url} {r.failure}"))
            page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None)
            page.goto(f"{jupyterlab}/lab/tree/notebooks/explore.ipynb")
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            page.wait_for_timeout(3000)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()
            page.wait_for_selector(".fb-viewer video", timeout=180_000)
            page.wait_for_selector(".vega-embed svg .role-title-text", timeout=120_000)
            page.wait_for_timeout(1500)
            page.screenshot(path=str(artifacts / "explore.png"), full_page=True)
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0

            # the item list: one column group per run, a correct and a margin column each, sortable by both
            groups = page.eval_on_selector_all(".fb-items tr.fb-groups th", "c => c.map(x => x.innerText)")
            assert [g for g in groups if g] == [r.label for r in runs]
            titles = page.eval_on_selector_all(".fb-items th.fb-sortable", "c => c.map(x => x.dataset.key)")
            for run in runs:
                assert f"correct:{run.label}" in titles and f"margin:{run.label}" in titles
            entail = next(r for r in runs if r.manifest.protocol == "entail")
            index = titles.index(f"margin:{entail.label}")
            page.locator(f".fb-items th[data-key='margin:{entail.label}']").click()
            _until(page, "the rows sorted by the entail run's margin, smallest first",
                   f"i => {{ const m = {ROWS}.map(r => Number(r.cells[i].innerText));"
                   " return m.length > 1 && m.every((v, k) => k === 0 || m[k - 1] <= v); }", index)
            listed = [float(m) for m in _column(page, index)]
            assert listed == sorted(listed) and len(listed) == len(items)
            assert listed != sorted(listed, reverse=True)  # the margins differ: the order says something
            page.screenshot(path=str(artifacts / "sorted_by_margin.png"), full_page=True)
            correct = titles.index(f"correct:{entail.label}")
            page.locator(f".fb-items th[data-key='correct:{entail.label}']").click()
            _until(page, "the rows sorted by the entail run's correctness, wrong first",
                   f"i => {{ const m = {ROWS}.map(r => r.cells[i].innerText); return m.length > 1 &&"
                   " m.indexOf('✓') >= 0 && m.lastIndexOf('✗') < m.indexOf('✓'); }", correct)
            marks = _column(page, correct)
            assert marks == sorted(marks, key="✗✓".index) and set(marks) == {"✗", "✓"}

            # the viewer: the first listed item, its changed words, every run's metrics, scores and answers
            page.locator(".fb-items tr.fb-row").nth(1).click()
            item_id = page.eval_on_selector_all(".fb-items tr.fb-row", "r => r[1].dataset.id")
            page.wait_for_function("id => document.querySelector('.fb-title').innerText.endsWith(id)", arg=item_id,
                                   timeout=30_000)
            page.wait_for_timeout(1000)
            item = items[item_id]
            shown_marks = page.eval_on_selector_all(
                ".fb-texts li", "lis => lis.map(li => [...li.querySelectorAll('mark.fb-diff')].map(m => m.innerText))")
            assert shown_marks[:len(item.texts)] == [[w for w, c in words if c] for words in item_diff(item.texts)]
            for run in runs:
                row = page.locator(f"tr.fb-run[data-run='{run.label}']")
                metrics = row.locator(".fb-verdict").evaluate_all("b => b.map(x => x.dataset.metric)")
                lines = row.locator(".fb-line").all_inner_texts()
                protocol = run.manifest.protocol
                assert metrics, f"no metric shown for {run.label}"
                if protocol == "mc":
                    assert all(m.startswith("MC") for m in metrics)
                    assert lines and all(CHOICE.fullmatch(line) for line in lines), lines
                else:
                    assert not any(m.startswith("MC") for m in metrics) and "ClassicVLE" in metrics
                    assert any(m in PROBABILITY_ONLY for m in metrics) == (protocol == "entail"), (run.label, metrics)
                    assert re.search(r"caption -?\d\.\d{3}|caption -?\d+\.\d+", lines[0]), lines
                assert row.locator(".fb-margin").inner_text() == number(margins[run.label, item_id], signed=True)

            # the video plays, from the proxy server by token
            src = page.eval_on_selector(".fb-video", "v => v.src")
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{32}", src), src
            page.locator(".fb-play").click()
            _until(page, "the video playing (its currentTime past 0.2 s)",
                   "() => document.querySelector('.fb-video').currentTime > 0.2")

            # keyboard: j moves to the next listed item
            ids = page.eval_on_selector_all(".fb-items tr.fb-row", "r => r.map(x => x.dataset.id)")
            page.locator(".fb-viewer").focus()
            page.keyboard.press("j")
            page.wait_for_function("id => document.querySelector('.fb-title').innerText.endsWith(id)", arg=ids[2],
                                   timeout=30_000)

            # the charts: titles, percent axes, chance line; clicking lists the items
            texts = " | ".join(page.eval_on_selector_all(".vega-embed svg text", "t => t.map(x => x.textContent)"))
            assert f"Entailment scores of {entail.label}" in texts and "P(Yes | positive caption) (%)" in texts
            assert f"ClassicVLE by subset of {entail.label}" in texts and "ClassicVLE (%)" in texts
            assert re.search(r"chance \d+(\.\d+)?%", texts), texts
            charts = page.locator(".vega-embed")
            scatter, bars = charts.nth(0), charts.nth(1)
            scatter.scroll_into_view_if_needed()
            scatter.locator("g.mark-symbol.role-mark path").last.click()  # the topmost of overlapping points
            _until(page, "one item listed, selected in the plot, and shown in the viewer",
                   f"() => {{ const r = {ROWS}; return r.length === 1 && {TITLE}.endsWith(r[0].dataset.id); }}")
            assert "(selected in a plot)" in page.inner_text(".jp-Notebook")
            page.screenshot(path=str(artifacts / "after_scatter.png"), full_page=True)
            bars.scroll_into_view_if_needed()
            bars.locator("g.mark-rect.role-mark").last.locator("path").last.click()  # a column (bars at 0% too)
            last = max(it.subset for it in items.values())  # the columns are in subset order
            expected = [i for i, it in items.items() if it.subset == last and it.role == "main"]
            _until(page, f"the items of {last} listed and the first shown",
                   f"ids => {{ const r = {ROWS}.map(x => x.dataset.id); return r.length === ids.length &&"
                   f" r.every(i => ids.includes(i)) && {TITLE}.endsWith(r[0]); }}", expected)
            page.screenshot(path=str(artifacts / "after_bars.png"), full_page=True)
        except Exception:
            page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    assert sorted(p.name for p in (tmp_path / "notebooks").iterdir() if p.name != ".ipynb_checkpoints") == [
        "explore.ipynb"]  # nothing written beside the notebook: the proxies went to the data home
    assert list((home / "proxies").glob("*.mp4"))
