"""The widgets' state, driven from Python: loading items and runs, filters, selection, diffs, flags, placeholders."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import av
import numpy as np
import pandas as pd
import pytest

from bench.devkit.demo import score_sample
from bench.frames import FrameError
from bench.items import Clip, Item
from bench.metrics.flags import item_flags, run_margins, run_outcomes, score_margin
from bench.store import read_run
from bench.store.schema import pair_frame
from bench.videoio import write_video
from widgets import ItemBrowser, PairViewer
from widgets.diff import changed_words, item_diff
from widgets.linking import linked_bars, linked_scatter
from widgets import proxy
from widgets.proxy import ProxyServer, make_proxy, proxy_path, proxy_size

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def velociti_runs(sample, tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    runs = score_sample(home, sample, progress=False)
    return [read_run(r) for r in runs if "velociti" in r.name]


@pytest.fixture()
def browser(velociti_runs, tmp_path):
    widget = ItemBrowser(velociti_runs, proxy_folder=tmp_path / "proxies")
    yield widget
    widget.viewer.server.stop()


def test_diff_marks_the_changed_words():
    assert changed_words("a man skips rope three times", ["a man skips rope nine times"]) == [
        ("a", False), ("man", False), ("skips", False), ("rope", False), ("three", True), ("times", False)]
    two_foils = item_diff(["he opens the window", "he smashes the window", "he opens the door"])
    assert [w for w, c in two_foils[0] if c] == ["opens", "window"]
    assert [w for w, c in two_foils[1] if c] == ["smashes"]
    assert [w for w, c in two_foils[2] if c] == ["door"]
    swapped = item_diff(["first a red square appears, then a blue circle appears",
                         "first a blue circle appears, then a red square appears"], true=[0, 1])
    # reordered words: the block that moved is marked in both texts, the words kept in place are not
    for words in swapped:
        flags = [c for _, c in words]
        assert any(flags) and not all(flags) and words[0] == ("first", False)


def test_flags_and_margins():
    items = [Item("velociti", f"i{k}", "agent_bind", (Clip("v.mp4"),), ("pos", "neg"), ((0,),)) for k in range(2)]
    a = pair_frame([{"item_id": "i0", "clip": 0, "text": 0, "score": 0.4}, {"item_id": "i0", "clip": 0, "text": 1, "score": 0.1},
                    {"item_id": "i1", "clip": 0, "text": 0, "score": 0.9}, {"item_id": "i1", "clip": 0, "text": 1, "score": 0.2}])
    b = pair_frame([{"item_id": "i0", "clip": 0, "text": 0, "score": 0.1}, {"item_id": "i0", "clip": 0, "text": 1, "score": 0.8},
                    {"item_id": "i1", "clip": 0, "text": 0, "score": 0.7}, {"item_id": "i1", "clip": 0, "text": 1, "score": 0.3}])
    assert score_margin(items, a).round(3).tolist() == [0.3, 0.7]
    runs = {"a": (a, None), "b": (b, None)}
    outcomes = run_outcomes(items, runs)
    assert list(outcomes.columns) == ["run", "item_id", "metric", "value"]
    flags = item_flags(items, outcomes, metric="ClassicVLE").set_index("item_id")
    assert flags["disagree"].tolist() == [True, False]
    assert flags["classic_not_strict"].tolist() == [True, False]  # run a: 0.4 > 0.1 but 0.4 < 0.5
    assert flags["wrong"].tolist() == [True, False]
    b_classic = outcomes[(outcomes.run == "b") & (outcomes.metric == "ClassicVLE")].set_index("item_id")["value"]
    assert b_classic["i0"] == 0
    margins = run_margins(items, runs).set_index(["run", "item_id"])["margin"]
    assert margins["a", "i1"] == pytest.approx(0.7)


def test_browser_filters_sorts_and_navigates(browser):
    n = len(browser.table)
    assert browser.count.value == f"{n} of {n} items"
    browser.subset.value = "chrono"
    assert [v for _, v in browser.list.options] == [i for i in browser.table.item_id if i.startswith("chrono")]
    browser.subset.value = "all"
    browser.flag.value = "runs disagree"
    expected = browser.table[browser.table["disagree"]]["item_id"].tolist()
    assert [v for _, v in browser.list.options] == expected
    browser.flag.value = "all items"
    margin = next(o for o in browser.sort.options if "similarity" in o)
    browser.sort.value = margin
    run = margin.removesuffix(" margin (smallest first)")
    expected = browser.margins[browser.margins.run == run].sort_values("margin", kind="stable")["item_id"].tolist()
    assert [v for _, v in browser.list.options] == expected
    first = browser.list.value
    browser.viewer._message(browser.viewer, {"event": "next"}, [])
    assert browser.list.value == [v for _, v in browser.list.options][1]
    browser.viewer._message(browser.viewer, {"event": "previous"}, [])
    assert browser.list.value == first


def test_viewer_state_for_a_selected_item(browser):
    item_id = browser.table["item_id"].iloc[2]
    browser.list.value = item_id
    viewer = browser.viewer
    assert viewer.item["item_id"] == item_id
    item = browser.items[item_id]
    assert [t["true_of"] for t in viewer.texts] == [[0], []]
    assert any(changed for _, changed in viewer.texts[1]["words"])
    clip = viewer.clips[0]
    assert clip["url"].startswith("http://127.0.0.1:") and clip["error"] == ""
    with urllib.request.urlopen(clip["url"], timeout=10) as response:
        assert response.read(12)[4:8] == b"ftyp"
    assert len(clip["sampled"]) == 8 and all(0 <= t <= clip["duration"] for t in clip["sampled"])
    runs = {r["run"]: r for r in viewer.runs}
    assert set(runs) == {r.manifest["name"] for r in browser.run_list}
    entail = runs["entail tiny-qwen2vl"]
    assert len(entail["scores"]) == 2 and set(entail["correct"]) >= {"ClassicVLE", "StrictVLE"}
    mc = runs["mc tiny-qwen2vl"]
    assert len(mc["scores"]) == 2 and all("→" in s for s in mc["scores"])
    outcomes = browser.outcomes.set_index(["run", "item_id", "metric"])["value"]
    assert entail["correct"]["ClassicVLE"] == int(outcomes["entail tiny-qwen2vl", item_id, "ClassicVLE"])
    assert item.texts[0] == " ".join(w for w, _ in viewer.texts[0]["words"])


def test_missing_video_shows_a_placeholder(tmp_path):
    item = Item("velociti", "x", "agent_bind", (Clip(str(tmp_path / "gone.mp4")),), ("a", "b"), ((0,),))
    viewer = PairViewer([], serve=False, proxy_folder=tmp_path)
    viewer.show(item, {})
    assert viewer.clips == [{"url": "", "error": "no such file", "duration": 0.0, "sampled": []}]


def test_plot_selection_narrows_the_browser(browser):
    p_yes = next(i for i, r in enumerate(browser.run_list) if r.manifest["measure"] == "p_yes")
    chart = linked_scatter(browser, p_yes)
    target = browser.table["item_id"].iloc[4]
    chart._vl_selections = {"pick": {"value": {"vlPoint": {"or": [{"item_id": target}]}}, "store": []}}
    assert [v for _, v in browser.list.options] == [target] and browser.viewer.item["item_id"] == target
    chart._vl_selections = {"pick": {"value": None, "store": []}}
    assert len(browser.list.options) == len(browser.table)
    table = pd.DataFrame([{"metric": "ClassicVLE", "by": "subset", "subset": "chrono", "value": 0.5}])
    bars = linked_bars(browser, table, "ClassicVLE")
    bars._vl_selections = {"pick": {"value": {"vlPoint": {"or": [{"subset": "chrono"}]}}, "store": []}}
    assert all(v.startswith("chrono/") for _, v in browser.list.options) and len(browser.list.options) == 1


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
    assert result["growth"] < window / 4, f"peak grew by {result['growth'] / 2**20:.0f} MiB, window {window / 2**20:.0f} MiB"
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
        viewer.show(item, {})
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
    viewer.show(Item("velociti", "x", "agent_bind", (clip,), ("a", "b"), ((0,),)), {})
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
    item = browser.items[browser.list.value]
    twin = browser.items[item.twin_id]
    assert [" ".join(w for w, _ in t["words"]) for t in browser.viewer.twin] == list(twin.texts)
    assert browser.viewer.twin[0]["true_of"] == [0] and browser.viewer.twin[1]["true_of"] == []
    assert {"P", "T", "P+T"} <= set(next(iter(r["correct"] for r in browser.viewer.runs)))
