"""The widgets' state, driven from Python: finding runs, the item list and its sorting, the metrics shown per run,
the viewer's words and numbers, diffs, linked charts, the shipped notebook, proxies and placeholders."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import av
import numpy as np
import pandas as pd
import pytest

from bench.frames import FrameError
from bench.items import Clip, Item
from bench.metrics.flags import (RunScores, applicable_outcomes, choice_margin, headline_metrics, item_flags,
                                 run_margins, run_outcomes, score_margin)
from bench.paths import HOME_ENV, PROJECT_ROOT, data_home
from bench.store import read_run
from bench.store.schema import choice_frame, pair_frame
from bench.videoio import write_video
from fixtures_widgets import BENCHMARK, demo_home
from widgets import ItemBrowser, PairViewer
from widgets import proxy
from widgets.describe import number
from widgets.diff import aligned, changed_words, item_diff
from widgets.itemlist import ItemList
from widgets.linking import bars_chart, linked_bars, linked_scatter, scatter_chart
from widgets.proxy import ProxyServer, make_proxy, proxy_path, proxy_size
from widgets.runs import find_runs, resolve_run

REPO = Path(__file__).resolve().parents[2]
PROBABILITY_ONLY = {"StrictVLE", "pos acc", "neg acc | pos"}
MC = re.compile(r"chose ([A-Z]) \((caption|foil)\) in order A=(caption|foil), B=(caption|foil)"
                r" · logits A (\S+), B (\S+)")


@pytest.fixture(scope="module")
def home(sample, tiny, tmp_path_factory):
    return demo_home(tmp_path_factory.mktemp("home"), sample, tiny)


@pytest.fixture(scope="module")
def velociti_runs(home):
    return [read_run(r) for r in find_runs(BENCHMARK, under=home / "runs")]


@pytest.fixture()
def browser(velociti_runs, tmp_path):
    widget = ItemBrowser(velociti_runs, proxy_folder=tmp_path / "proxies")
    yield widget
    widget.viewer.server.stop()


def _marked(texts, true=(0,)) -> list[list[str]]:
    return [[w for w, c in words if c] for words in item_diff(texts, true)]


@pytest.mark.parametrize("widget", [PairViewer, ItemList])
def test_each_widget_module_is_the_shared_helpers_then_its_own_code_in_one_valid_module(widget, tmp_path):
    code = widget._esm
    assert code.startswith((REPO / "widgets" / "dom.js").read_text())
    assert len(re.findall(r"^function el\(", code, flags=re.M)) == 1
    assert code.rstrip().endswith("export default { render };")
    node = shutil.which("node")
    if node:  # a name declared twice, or any other syntax error, is refused by a JavaScript parser
        (tmp_path / "widget.mjs").write_text(code)
        subprocess.run([node, "--check", str(tmp_path / "widget.mjs")], check=True, capture_output=True)


def test_diff_marks_exactly_the_words_that_differ():
    assert changed_words("a man skips rope three times", ["a man skips rope nine times"]) == [
        ("a", False), ("man", False), ("skips", False), ("rope", False), ("three", True), ("times", False)]
    assert _marked(["he opens the window", "he smashes the window", "he opens the door"]) == [
        ["opens", "window"], ["smashes"], ["door"]]
    assert _marked(["the man pushes the woman", "the woman pushes the man"]) == [["man", "woman"], ["woman", "man"]]
    swapped = ["first a red square appears, then a blue circle appears",
               "first a blue circle appears, then a red square appears"]
    assert _marked(swapped, true=[0, 1]) == [["red", "square", "blue", "circle"], ["blue", "circle", "red", "square"]]
    chrono = ["First, the blue circle jumps. Then, the blue circle moves to the left.",
              "First, the blue circle moves to the left. Then, the blue circle jumps."]
    assert _marked(chrono) == [["jumps.", "moves", "to", "the", "left."], ["moves", "to", "the", "left.", "jumps."]]
    assert _marked(["a man opens the door.", "A man slowly opens the door"]) == [[], ["slowly"]]
    assert aligned(["A", "x", "B"], ["B", "x", "A"]) == [(1, 1)]  # the word kept in place, not a moved one


def _items(n: int = 2) -> list[Item]:
    return [Item("velociti", f"i{k}", "agent_bind", (Clip("v.mp4"),), ("pos", "neg"), ((0,),)) for k in range(n)]


def _pair(scores: dict[str, tuple[float, float]]) -> pd.DataFrame:
    return pair_frame([{"item_id": i, "clip": 0, "text": t, "score": s} for i, both in scores.items()
                       for t, s in enumerate(both)])


def test_only_the_metrics_that_apply_to_a_run():
    items = _items()
    pair = _pair({"i0": (0.6, 0.1), "i1": (0.4, 0.1)})
    choice = choice_frame([{"item_id": i, "axis": "text", "query": 0, "options": o, "logits": l, "choice": c}
                           for i in ("i0", "i1") for o, l, c in (([0, 1], [2.0, 1.0], 0), ([1, 0], [3.0, 1.5], 1))])
    entail = set(applicable_outcomes(items, RunScores(pair, None, "p_yes"))["metric"])
    assert {"ClassicVLE", "StrictVLE", "pos acc"} <= entail and not any(m.startswith("MC") for m in entail)
    for measure in ("similarity", "loglik_sum"):
        assert set(applicable_outcomes(items, RunScores(pair, None, measure))["metric"]) == {"ClassicVLE"}
    assert set(applicable_outcomes(items, RunScores(None, choice, "letter_logits"))["metric"]) == {
        "MC A", "MC B", "MC A∧B"}
    vilma = [Item("vilma", "v0", "counting", (Clip("v.mp4"),), ("caption", "foil"), ((0,),))]
    vilma_mc = applicable_outcomes(vilma, RunScores(None, choice.assign(item_id="v0"), "letter_logits"))
    assert set(vilma_mc["metric"]) == {"T"}  # ViLMA's ranking test read from the A/B answers (no twin: no P)


def test_flags_margins_and_headlines():
    items = _items()
    a, b = _pair({"i0": (0.4, 0.1), "i1": (0.9, 0.2)}), _pair({"i0": (0.1, 0.8), "i1": (0.7, 0.3)})
    runs = {"a": RunScores(a, None, "p_yes"), "b": RunScores(b, None, "p_yes")}
    assert score_margin(items, a).round(3).tolist() == [0.3, 0.7]
    outcomes = run_outcomes(items, runs)
    assert list(outcomes.columns) == ["run", "item_id", "metric", "value", "strict", "tie", "status"]
    assert headline_metrics(outcomes, "StrictVLE") == {"a": "StrictVLE", "b": "StrictVLE"}
    assert headline_metrics(outcomes, "MC A") == {"a": "ClassicVLE", "b": "ClassicVLE"}
    flags = item_flags(items, outcomes, metric="ClassicVLE").set_index("item_id")
    assert flags["disagree"].tolist() == [True, False]
    assert flags["classic_not_strict"].tolist() == [True, False]  # run a: 0.4 > 0.1 but 0.4 < 0.5
    assert flags["wrong"].tolist() == [True, False]
    margins = run_margins(items, runs).set_index(["run", "item_id"])["margin"]
    assert margins["a", "i1"] == pytest.approx(0.7) and margins["b", "i0"] == pytest.approx(-0.7)
    pair_of_pairs = Item("vinoground", "g", "object", (Clip("a.mp4"), Clip("b.mp4")), ("t0", "t1"), ((0,), (1,)))
    grid = pair_frame([{"item_id": "g", "clip": c, "text": t, "score": s}
                       for (c, t), s in {(0, 0): 0.9, (0, 1): 0.5, (1, 0): 0.95, (1, 1): 0.97}.items()])
    # texts ranked right on both clips (+0.4, +0.02), but text 0 prefers clip 1 (0.9 - 0.95): the video axis counts
    assert score_margin([pair_of_pairs], grid)["g"] == pytest.approx(-0.05)
    choice = choice_frame([{"item_id": "i0", "axis": "text", "query": 0, "options": [0, 1], "logits": [2.0, 1.5],
                            "choice": 0},
                           {"item_id": "i0", "axis": "text", "query": 0, "options": [1, 0], "logits": [1.0, 1.25],
                            "choice": 1}])
    assert choice_margin(items, choice).round(3).tolist()[0] == 0.25 and math.isnan(choice_margin(items, choice)["i1"])


def _listed(browser, column: str) -> list[str]:
    keys = [c["key"] for c in browser.list.columns]
    return [r["cells"][keys.index(column)] for r in browser.list.rows]


def test_item_list_columns_sorting_and_navigation(browser):
    assert browser.count.value.startswith(f"{len(browser.table)} of {len(browser.table)} items · ")
    groups = [c["group"] for c in browser.list.columns if c["group"]]
    assert list(dict.fromkeys(groups)) == [r.label for r in browser.run_list]
    for run in browser.run_list:
        protocol = run.manifest.protocol
        title = next(c["title"] for c in browser.list.columns if c["key"] == f"correct:{run.label}")
        assert title == browser.headline[run.label] and (title.startswith("MC") == (protocol == "mc"))
        margins = browser.margins[browser.margins.run == run.label].set_index("item_id")["margin"]
        browser.list.sort = [f"margin:{run.label}", False]
        shown = browser.ids()
        assert [margins[i] for i in shown] == sorted(margins[i] for i in shown)
        assert _listed(browser, f"margin:{run.label}") == [number(margins[i], signed=True) for i in shown]
        browser.list.sort = [f"margin:{run.label}", True]
        assert [margins[i] for i in browser.ids()] == sorted(margins, reverse=True)
        browser.list.sort = [f"correct:{run.label}", False]
        marks = _listed(browser, f"correct:{run.label}")
        assert marks == sorted(marks, key=["✗", "✓", "–"].index) and set(marks) <= {"✓", "✗"}
        outcome = browser.outcomes[(browser.outcomes.run == run.label) & (browser.outcomes.metric == title)]
        assert marks.count("✓") == int(outcome["value"].sum())
    browser.list.sort = ["order", False]
    assert browser.ids() == browser.table["item_id"].tolist()
    first_subset = browser.table["subset"].iloc[0]
    browser.subset.value = first_subset
    assert browser.ids() == browser.table[browser.table.subset == first_subset]["item_id"].tolist()
    browser.subset.value = "all"
    browser.flag.value = "runs disagree"
    assert browser.ids() == browser.table[browser.table["disagree"]]["item_id"].tolist()
    browser.flag.value = "all items"
    browser.metric.value = "StrictVLE"
    assert {c["title"] for c in browser.list.columns if c["kind"] == "correct"} == {
        "StrictVLE" if r.manifest.measure == "p_yes" else browser.headline[r.label] for r in browser.run_list}
    ids = browser.ids()
    browser.list.selected = ids[1]
    browser.viewer._message(browser.viewer, {"event": "next"}, [])
    assert browser.list.selected == ids[2] and browser.viewer.item["item_id"] == ids[2]
    browser.viewer._message(browser.viewer, {"event": "previous"}, [])
    assert browser.list.selected == ids[1]


def _four_digits(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+(?:e[-+]\d+)?", text)]


def test_viewer_shows_each_run_in_words_and_numbers(browser):
    item_id = browser.table["item_id"].iloc[2]
    browser.list.selected = item_id
    viewer, item = browser.viewer, browser.items[item_id]
    assert viewer.item["item_id"] == item_id
    assert [(t["name"], t["true_of"]) for t in viewer.texts] == [("caption", [0]), ("foil", [])]
    assert [[w for w, c in t["words"] if c] for t in viewer.texts] == _marked(item.texts)
    assert item.texts[0] == " ".join(w for w, _ in viewer.texts[0]["words"])
    clip = viewer.clips[0]
    assert clip["url"].startswith("http://127.0.0.1:") and clip["error"] == ""
    with urllib.request.urlopen(clip["url"], timeout=10) as response:
        assert response.read(12)[4:8] == b"ftyp"
    assert len(clip["sampled"]) == 8 and all(0 <= t <= clip["duration"] for t in clip["sampled"])
    shown = {r["run"]: r for r in viewer.runs}
    assert list(shown) == [r.label for r in browser.run_list]
    for run in browser.run_list:
        state, protocol = shown[run.label], run.manifest.protocol
        metrics = {c["metric"] for c in state["correct"]}
        expected = browser.outcomes[(browser.outcomes.run == run.label) & (browser.outcomes.item_id == item_id)]
        assert [(c["metric"], c["value"]) for c in state["correct"]] == [
            (r.metric, int(r.value)) for r in expected.itertuples()]
        margin = browser.margins[(browser.margins.run == run.label) & (browser.margins.item_id == item_id)]["margin"]
        assert state["margin"] == number(float(margin.iloc[0]), signed=True)
        if protocol == "mc":
            assert all(m.startswith("MC") for m in metrics) and metrics
            asked = run.choice[run.choice.item_id == item_id]
            assert len(state["lines"]) == len(asked)
            for line, row in zip(state["lines"], asked.itertuples()):
                found = MC.fullmatch(line)
                assert found, line
                letter, chosen, a, b, logit_a, logit_b = found.groups()
                names = {0: "caption", 1: "foil"}
                assert (a, b) == (names[row.options[0]], names[row.options[1]])
                assert (logit_a, logit_b) == tuple(f"{v:#.4g}" for v in row.logits)
                assert chosen == names[row.choice] and letter == "AB"[list(row.options).index(row.choice)]
        else:
            assert not any(m.startswith("MC") for m in metrics) and "ClassicVLE" in metrics
            assert (metrics & PROBABILITY_ONLY != set()) == (protocol == "entail")
            scores = run.pair[run.pair.item_id == item_id].sort_values("text")["score"].tolist()
            assert state["lines"][0].startswith("text only: " if protocol == "loglik" else "caption ")
            assert _four_digits(state["lines"][0]) == [float(f"{s:.4g}") for s in scores]


def test_missing_video_shows_a_placeholder(tmp_path):
    item = Item("velociti", "x", "agent_bind", (Clip(str(tmp_path / "gone.mp4")),), ("a", "b"), ((0,),))
    viewer = PairViewer([], serve=False, proxy_folder=tmp_path)
    viewer.show(item)
    assert viewer.clips == [{"url": "", "error": "no such file", "duration": 0.0, "sampled": []}]


def test_charts_in_percent_with_titles_and_chance(browser):
    from bench.metrics.dispatch import run_table

    run = browser.run_list[0]
    table = run_table(run)
    metric = browser.headline[run.label]
    spec = bars_chart(table, metric).to_dict()
    rows = table[(table.metric == metric) & (table.by == "subset")]
    bars, interval, chance, hits = spec["layer"]
    assert spec["params"][0]["views"] == [hits["name"]] and hits["mark"]["opacity"] == 0  # clicks on whole columns
    assert metric in spec["title"]["text"] and run.label in spec["title"]["text"]
    assert bars["encoding"]["y"]["title"] == f"{metric} (%)" and bars["encoding"]["y"]["scale"]["domain"] == [0, 100]
    data = pd.DataFrame(spec["datasets"][bars["data"]["name"]])
    assert data["percent"].tolist() == pytest.approx((100 * rows["value"]).tolist())
    levels = (100 * rows["chance"]).unique()
    name = (chance.get("data") or chance["layer"][0]["data"])["name"]
    assert pd.DataFrame(spec["datasets"][name])["chance_pct"].unique() == pytest.approx(levels)
    varied = table.assign(chance=np.where(table.index % 2, 0.25, 0.5))
    assert bars_chart(varied, metric).to_dict()["layer"][2]["mark"]["type"] == "tick"
    entail = next(r for r in browser.run_list if r.manifest.measure == "p_yes")
    from bench.metrics.velociti import entailment_points

    points = entailment_points(list(browser.items.values()), entail.pair)
    scatter = scatter_chart(points, entail.label).to_dict()
    dots = pd.DataFrame(scatter["datasets"][scatter["layer"][0]["data"]["name"]])
    assert dots["pos"].tolist() == pytest.approx((100 * points["pos"]).tolist())
    assert entail.label in scatter["title"]["text"]


def test_plot_selection_narrows_the_browser(browser):
    chart = linked_scatter(browser)
    target = browser.table["item_id"].iloc[4]
    chart._vl_selections = {"pick": {"value": {"vlPoint": {"or": [{"item_id": target}]}}, "store": []}}
    assert browser.ids() == [target] and browser.viewer.item["item_id"] == target
    assert "selected in a plot" in browser.count.value
    chart._vl_selections = {"pick": {"value": None, "store": []}}
    assert len(browser.ids()) == len(browser.table)
    subset = browser.table["subset"].iloc[1]
    table = pd.DataFrame([{"metric": "ClassicVLE", "by": "subset", "subset": subset, "value": 0.5, "ci_low": 0.1,
                           "ci_high": 0.9, "chance": 0.5, "n": 1}])
    bars = linked_bars(browser, table, "ClassicVLE")
    bars._vl_selections = {"pick": {"value": {"vlPoint": {"or": [{"subset": subset}]}}, "store": []}}
    assert browser.ids() == browser.table[browser.table.subset == subset]["item_id"].tolist()


def test_data_home_does_not_depend_on_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv(HOME_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    assert data_home() == PROJECT_ROOT / "foilbench-data"
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "elsewhere"))
    assert data_home() == tmp_path / "elsewhere"


def test_runs_are_found_by_benchmark_from_their_manifests(home, tmp_path, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(home))
    found = find_runs(BENCHMARK)
    assert found and all(json.loads((f / "manifest.json").read_text())["benchmark"] == BENCHMARK for f in found)
    copy = shutil.copytree(found[0], home / "runs" / "zz-renamed")
    decoy = home / "runs" / f"{BENCHMARK}-decoy"
    decoy.mkdir()
    (decoy / "manifest.json").write_text(json.dumps({"benchmark": "vilma", "data_path": "x"}))
    try:
        assert find_runs(BENCHMARK) == found + [copy]
        manifest = json.loads((copy / "manifest.json").read_text())
        (copy / "manifest.json").write_text(json.dumps({**manifest, "data_path": "/other/velociti.csv"}))
        assert find_runs(BENCHMARK) == found  # runs on other data are not mixed in
        assert resolve_run(found[0].relative_to(home / "runs")) == found[0]
    finally:
        shutil.rmtree(copy), shutil.rmtree(decoy)
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "empty"))
    with pytest.raises(FileNotFoundError) as error:
        find_runs(BENCHMARK)
    message = str(error.value)
    assert str(tmp_path / "empty" / "runs") in message and "foilbench demo" in message and HOME_ENV in message
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "empty" / "runs" / "nope"))):
        resolve_run("nope")


def _run_notebook(folder: Path, home: Path) -> tuple[object, Exception | None]:
    """Execute the shipped explore.ipynb, copied into ``folder/notebooks``, with its kernel there (as JupyterLab
    starts it) and the data home ``home``: the executed notebook and the error it stopped on, if any."""
    import nbclient
    import nbformat

    book = folder / "notebooks" / "explore.ipynb"
    book.parent.mkdir(parents=True)
    shutil.copyfile(REPO / "notebooks" / "explore.ipynb", book)
    notebook = nbformat.read(book, as_version=4)
    env = {**os.environ, HOME_ENV: str(home), "PYTHONPATH": os.pathsep.join(filter(None, [
        str(REPO), os.environ.get("PYTHONPATH")]))}
    client = nbclient.NotebookClient(notebook, timeout=300, resources={"metadata": {"path": str(book.parent)}})
    try:
        client.execute(env=env)
    except nbclient.exceptions.CellExecutionError as error:
        return notebook, error
    return notebook, None


@pytest.mark.slow
def test_explore_notebook_runs_as_shipped(home, tmp_path):
    notebook, error = _run_notebook(tmp_path / "ok", home)
    assert error is None, str(error)[-2000:]
    assert [p.name for p in (tmp_path / "ok" / "notebooks").iterdir()] == ["explore.ipynb"]  # nothing written here
    assert list((home / "proxies").glob("*.mp4"))  # the proxies went to the data home (no other test writes there)
    printed = "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))
    assert str(home) in printed and all(f.name in printed for f in find_runs(BENCHMARK, under=home / "runs"))
    widgets = [o for c in notebook.cells for o in c.get("outputs", [])
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(widgets) == 3  # the browser, the charts that follow its runs (scatter, bars), the runs compared
    _, error = _run_notebook(tmp_path / "empty", tmp_path / "no-home")
    assert error is not None and "FileNotFoundError" in str(error)
    assert str(tmp_path / "no-home" / "runs") in str(error) and "foilbench demo" in str(error)


def _counting_clip(path, frames: int, fps: float = 10.0, size: tuple[int, int] = (64, 48)):
    """A clip whose frame i is a flat grey of level 4 * i (so a decoded frame tells its index)."""
    levels = np.arange(frames, dtype=np.uint8)[:, None, None, None] * 4
    return write_video(path, np.broadcast_to(levels, (frames, size[1], size[0], 3)), fps)


def _frame_levels(path) -> list[int]:
    with av.open(str(path)) as container:
        return [round(float(f.to_ndarray(format="gray").mean()) / 4) for f in container.decode(video=0)]


def test_proxy_keeps_the_window_the_caps_and_the_cache(tmp_path, monkeypatch):
    source = _counting_clip(tmp_path / "count.mp4", frames=40)
    out, offset = make_proxy(Clip(str(source), start=1.2, end=2.5), tmp_path / "proxies")
    assert offset == pytest.approx(1.2) and _frame_levels(out) == list(range(12, 25))
    with av.open(str(out)) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height, float(stream.average_rate)) == (64, 48, 10.0)
    made = out.stat().st_mtime_ns
    assert make_proxy(Clip(str(source), start=1.2, end=2.5), tmp_path / "proxies") == (out, offset)
    assert out.stat().st_mtime_ns == made and [f.name for f in out.parent.iterdir()] == [out.name]
    monkeypatch.setattr(proxy, "MAX_SECONDS", 0.5)
    capped, offset = make_proxy(Clip(str(source), start=3.0), tmp_path / "proxies")
    assert offset == pytest.approx(3.0) and _frame_levels(capped) == list(range(30, 35))
    assert proxy_size(1920, 1080) == (426, 240) and proxy_size(101, 51) == (100, 50) and proxy_size(3, 1000) == (2, 240)
    with pytest.raises(FrameError, match="window starts at frame 40"):
        make_proxy(Clip(str(source), start=4.0), tmp_path / "proxies")


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads peak memory from /proc (Linux)")
def test_proxy_memory_stays_bounded_on_a_large_video(tmp_path):
    """Decode -> scale -> encode frame by frame: peak memory grows by far less than the window's decoded frames."""
    frames, height, width = 90, 1080, 1920
    y, x = np.mgrid[0:height, 0:width]
    image = np.stack([(x * 3) % 256, (y * 2) % 256, ((x + y) // 4) % 256], -1).astype(np.uint8)
    source = write_video(tmp_path / "large.mp4", np.broadcast_to(image, (frames, height, width, 3)), 30,
                         codec="mpeg4")  # fast to write; the decoded frames are what counts, whatever the codec
    script = (  # the peak of this process alone: ru_maxrss would count the parent's pages too (kept across exec)
        "import json, sys\n"
        "from pathlib import Path\n"
        "from bench.frames import decode\n"
        "from bench.items import Clip\n"
        "from widgets.proxy import make_proxy\n"
        "def rss(field):\n"
        "    line = next(l for l in open('/proc/self/status') if l.startswith(field + ':'))\n"
        "    return int(line.split()[1]) * 1024\n"
        "decode.probe(sys.argv[1])\n"
        "before = rss('VmRSS')\n"
        "out, offset = make_proxy(Clip(sys.argv[1]), Path(sys.argv[2]))\n"
        "print(json.dumps({'growth': rss('VmHWM') - before, 'proxy': str(out), 'offset': offset}))\n")
    done = subprocess.run([sys.executable, "-c", script, str(source), str(tmp_path / "proxies")], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    window = frames * height * width * 3  # what decoding the whole window at full resolution holds
    assert result["growth"] < window / 4, \
        f"peak grew by {result['growth'] / 2**20:.0f} MiB, window {window / 2**20:.0f} MiB"
    with av.open(result["proxy"]) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height) == proxy_size(width, height)
        assert sum(1 for _ in container.decode(stream)) == frames and result["offset"] == 0


def test_viewers_with_different_proxy_folders_share_the_server(tmp_path):
    source = _counting_clip(tmp_path / "count.mp4", frames=20)
    item = Item("velociti", "x", "agent_bind", (Clip(str(source)),), ("a", "b"), ((0,),))
    urls = []
    for name in ("first", "second"):
        viewer = PairViewer([], proxy_folder=tmp_path / name)
        viewer.show(item)
        assert viewer.clips[0]["error"] == "" and len(list((tmp_path / name).glob("*.mp4"))) == 1
        urls.append(viewer.clips[0]["url"])
        with urllib.request.urlopen(viewer.clips[0]["url"], timeout=10) as response:
            assert response.read() == next((tmp_path / name).glob("*.mp4")).read_bytes()
    assert urls[0] != urls[1] and urls[0].rsplit("/", 1)[0] == urls[1].rsplit("/", 1)[0]
    ProxyServer.shared().stop()


def test_a_symlink_in_place_of_a_proxy_is_refused(tmp_path):
    source = _counting_clip(tmp_path / "count.mp4", frames=20)
    clip = Clip(str(source))
    (tmp_path / "proxies").mkdir()
    proxy_path(clip, tmp_path / "proxies").symlink_to(source)
    viewer = PairViewer([], proxy_folder=tmp_path / "proxies")
    viewer.show(Item("velociti", "x", "agent_bind", (clip,), ("a", "b"), ((0,),)))
    assert viewer.clips[0]["url"] == "" and "symlinks refused" in viewer.clips[0]["error"]
    ProxyServer.shared().stop()


def test_vilma_items_show_their_proficiency_pair(sample, tiny, tmp_path):
    from bench.config import DataSource, ScoreConfig
    from bench.scoring.runner import score

    s = sample["vilma"]
    source = DataSource.of("vilma", s.data_path, s.video_root, s.loader_options)
    run = read_run(score(ScoreConfig(source, tiny("clip"), out=tmp_path / "run", progress=False)))
    browser = ItemBrowser([run], serve=False, proxy_folder=tmp_path / "proxies")
    assert set(browser.table["subset"]) == {it.subset for it in browser.items.values()}
    assert len(browser.table) == sum(it.role == "main" for it in browser.items.values())
    item = browser.items[browser.list.selected]
    twin = browser.items[item.twin_id]
    assert [" ".join(w for w, _ in t["words"]) for t in browser.viewer.twin] == list(twin.texts)
    assert browser.viewer.twin[0]["true_of"] == [0] and browser.viewer.twin[1]["true_of"] == []
    (state,) = browser.viewer.runs
    assert {c["metric"] for c in state["correct"]} == {"P", "T", "P+T"}
    assert any(line.startswith("proficiency ") for line in state["lines"])
    names = [t["name"] for t in browser.viewer.texts]
    assert names[0] == "caption" and all(n.startswith("foil") for n in names[1:])
