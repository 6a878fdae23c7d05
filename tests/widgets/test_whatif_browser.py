"""The pair viewer's what-if panel in a real JupyterLab (the shipped explore notebook, Run All) driven by headless
Chromium: edit a foil, re-score, and see each picked model's new score appear, equal to the probe engine's number,
beside the stored one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.scoring.probe import probe
from bench.scoring.warm import WarmModels
from bench.store import read_run
from bench.store.probes import read_probes
from fixtures_widgets import BENCHMARK
from test_widgets_browser import FLAGS, home, jupyterlab  # noqa: F401 - the fixtures, shared
from widgets.runs import find_runs
from widgets.whatif import targets_of

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_editing_a_foil_rescores_it_with_each_picked_model(home, tmp_path, jupyterlab, chromium):  # noqa: F811
    from playwright.sync_api import sync_playwright

    runs = [read_run(f) for f in find_runs(BENCHMARK, under=home / "runs")]
    targets = targets_of(runs)
    items = {it.item_id: it for it in runs[0].items()}
    artifacts = Path(os.environ.get("FOILBENCH_ARTIFACTS", tmp_path / "artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS)
        page = browser.new_page(viewport={"width": 1500, "height": 2400})
        try:
            page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
            page.goto(f"{jupyterlab}/lab/tree/notebooks/explore.ipynb")
            page.wait_for_selector(".jp-Notebook", timeout=90_000)
            page.wait_for_timeout(3000)
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_text("Run All Cells", exact=True).click()
            page.wait_for_selector(".fb-whatif .fb-whatif-text", timeout=180_000)
            page.wait_for_timeout(1500)
            item = items[page.inner_text(".fb-title").split(" · ")[-1]]
            picked = page.eval_on_selector_all(".fb-whatif-model input:checked", "b => b.map(x => x.value)")
            assert picked == [t.label for t in targets]
            fields = page.locator(".fb-whatif-text")
            assert fields.evaluate_all("f => f.map(x => x.value)") == list(item.texts)
            edited = f"{item.texts[1]} again and again"
            fields.nth(1).fill(edited)
            page.locator(".fb-whatif-go").click()
            cells = " && ".join(f"document.querySelector(\"td.fb-probe-score[data-target='{t.label}'][data-text='1']"
                                " .fb-probe-new\")" for t in targets)
            page.wait_for_function(f"() => !!({cells})", timeout=120_000)
            page.screenshot(path=str(artifacts / "whatif.png"), full_page=True)
            texts = list(item.texts)
            texts[1] = edited
            models = WarmModels()
            for target in targets:
                expected = probe(video=item.clips[0], texts=texts, models=models, **target.setup).scores
                shown = [page.inner_text(f"td.fb-probe-score[data-target='{target.label}'][data-text='{t}']")
                         for t in range(len(texts))]
                assert shown[1] == f"{expected[1]:.4f} (new text)", (target.label, shown)
                stored = target.run.pair[(target.run.pair["item_id"] == item.item_id) & (target.run.pair["text"] == 0)]
                assert shown[0] == f"{expected[0]:.4f} (stored {stored['score'].iloc[0]:.4f})", (target.label, shown)
            models.clear()
            assert "done: " in page.inner_text(".fb-whatif-status")
        except Exception:
            page.screenshot(path=str(artifacts / "whatif-failure.png"), full_page=True)
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
    kept = read_probes(home / "probes.parquet")
    assert edited in set(kept["text"]) and set(kept["control"]) == {"as-is"}
