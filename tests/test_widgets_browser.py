"""The widgets in a real JupyterLab driven by headless Chromium: the viewer renders, the video plays, the changed
words are highlighted, and clicking a point of the linked scatter changes the viewer's item."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from bench.devkit.demo import score_sample
from conftest import CHROMIUM_FLAGS

FLAGS = CHROMIUM_FLAGS + ["--autoplay-policy=no-user-gesture-required"]
REPO = Path(__file__).resolve().parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path: Path, runs: list[str], proxies: Path) -> None:
    cells = [
        "from widgets import ItemBrowser\nfrom widgets.linking import linked_scatter\n"
        f"browser = ItemBrowser({runs!r}, proxy_folder=__import__('pathlib').Path({str(proxies)!r}))\nbrowser",
        "p_yes = [i for i, r in enumerate(browser.run_list) if r.manifest['measure'] == 'p_yes'][0]\n"
        "linked_scatter(browser, p_yes)",
    ]
    book = {"cells": [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None}
                      for c in cells],
            "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(book))


def _blue_dot(shot: Path, box: dict) -> tuple[float, float]:
    """Where the scatter's points are drawn (the default blue of the first run), left of the legend, in CSS pixels."""
    import numpy as np
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    scale = pixels.shape[1] / box["width"]
    r, g, b = pixels[..., 0], pixels[..., 1], pixels[..., 2]
    blue = (b - r > 50) & (b - g > 20)
    blue[:, int(pixels.shape[1] * 0.7):] = False  # the legend's dot
    ys, xs = np.nonzero(blue)
    assert len(xs), "no point of the scatter found on the canvas"
    return float(np.median(xs)) / scale, float(np.median(ys)) / scale


@pytest.fixture()
def jupyterlab(tmp_path):
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "cfg"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}  # this checkout's code
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


def test_viewer_plays_highlights_and_follows_the_scatter(sample, tmp_path, jupyterlab, chromium):
    from playwright.sync_api import sync_playwright

    runs = [str(r) for r in score_sample(tmp_path / "home", sample, progress=False) if r.name.startswith("velociti")]
    _notebook(tmp_path / "explore_test.ipynb", runs, tmp_path / "proxies")
    artifacts = Path(os.environ.get("FOILBENCH_ARTIFACTS", tmp_path / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.goto(f"{jupyterlab}/lab/tree/explore_test.ipynb")
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            page.wait_for_timeout(3000)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()
            page.wait_for_selector(".fb-viewer video", timeout=120_000)
            page.screenshot(path=str(artifacts / "viewer.png"), full_page=True)
            assert page.locator("mark.fb-diff").count() > 0
            src = page.eval_on_selector(".fb-video", "v => v.src")
            assert re.fullmatch(r"http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{32}", src), src  # by token, from the server
            title = page.locator(".fb-title").inner_text()
            page.locator(".fb-play").click()
            page.wait_for_timeout(1500)
            played = page.eval_on_selector(".fb-video", "v => v.currentTime")
            assert played > 0.2, f"the video did not play (currentTime {played})"
            canvas = page.locator(".vega-embed canvas, .vega-embed svg").first
            canvas.wait_for(timeout=60_000)
            canvas.scroll_into_view_if_needed()
            box = canvas.bounding_box()
            shot = artifacts / "scatter.png"
            canvas.screenshot(path=str(shot))
            x, y = _blue_dot(shot, box)
            page.mouse.click(box["x"] + x, box["y"] + y)
            page.wait_for_function("t => document.querySelector('.fb-title').innerText !== t", arg=title,
                                   timeout=30_000)
            changed = page.locator(".fb-title").inner_text() != title
            page.screenshot(path=str(artifacts / "after_scatter.png"), full_page=True)
            assert changed, "clicking the scatter never changed the viewer's item"
        finally:
            browser.close()
