"""Breakdowns: by category, by video length, by frames sampled; word frequencies and Jensen-Shannon divergence."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from bench.config import Manifest
from bench.items import Clip, Item
from bench.metrics import breakdowns
from bench.metrics import Settings, benchmark_outcomes, metric_table
from bench.store.schema import pair_frame

FAST = Settings(n_boot=100)


def _item(key, clip, caption="a man opens the door", foil="a man closes the door", labels=None):
    return Item("vitatecs", key, "Direction", (clip,), (caption, foil), ((0,),), labels=labels or {})


def _right(key, right=True):
    return [{"item_id": key, "clip": 0, "text": 0, "score": 0.9 if right else 0.1},
            {"item_id": key, "clip": 0, "text": 1, "score": 0.5}]


def test_by_length_bins_windows_and_file_durations():
    items = [_item("a", Clip("x.mp4", 0, 3)), _item("b", Clip("y.mp4", 2, 9)),
             _item("c", Clip("z.mp4")), _item("d", Clip("q.mp4", 30, 90, unit="pts", fps=30)),
             _item("e", Clip("w.mp4", 1.0))]
    assert breakdowns.item_duration(items[3]) == pytest.approx(2.0)
    bins = breakdowns.length_bins(items, durations={"z.mp4": 12.0, "w.mp4": 5.5})
    assert bins.to_dict() == {"a": "[0, 5) s", "b": "[5, 10) s", "c": "[10, 20) s", "d": "[0, 5) s",
                              "e": "[0, 5) s"}
    assert breakdowns.length_bins(items[2:3]).tolist() == ["unknown"]
    out = benchmark_outcomes(items, pair_frame(_right("a") + _right("b", False) + _right("d", False)))
    table = breakdowns.by_length(out, items, durations={"z.mp4": 12.0}, settings=FAST).set_index("subset")
    assert table.loc["[0, 5) s", ["value", "n"]].tolist() == [0.5, 2]
    assert table.loc["[10, 20) s", "n_missing"] == 1
    assert list(table.index) == ["[0, 5) s", "[5, 10) s", "[10, 20) s", "unknown"]  # e: open window, no duration
    with pytest.raises(ValueError, match="increasing"):
        breakdowns.length_bins(items, bins=(10, 5))


def _lengths(seconds):
    return [_item(str(i), Clip(f"{i}.mp4", 0, s)) for i, s in enumerate(seconds)]


@pytest.mark.parametrize("seconds", [[3.0] * 6, [2.0, 2.4, 2.5, 3.1, 3.3, 4.0, 4.6, 4.9], [1, 2, 3, 12, 30, 50, 59],
                                     [2.5, 2.5, 2.5, 2.5, 4.0]])
def test_length_edges_follow_the_data(seconds):
    items = _lengths(seconds)
    edges = breakdowns.length_edges(items)
    assert edges == sorted(edges) and edges[0] <= min(seconds) and max(seconds) < edges[-1]
    labels = breakdowns.length_bins(items, edges)
    assert set(labels) == set(breakdowns.bin_labels(edges))  # every bin holds an item, no item outside
    distinct = len(set(seconds))
    assert len(edges) - 1 == distinct if distinct <= 4 else 2 <= len(edges) - 1 <= 4
    table = breakdowns.by_length(benchmark_outcomes(items, pair_frame(_right("0"))), items, edges, settings=FAST)
    assert list(table["subset"]) == [b for b in breakdowns.bin_labels(edges) if b in set(labels)]


def test_length_edges_without_lengths_are_the_fixed_bins():
    assert breakdowns.length_edges([_item("c", Clip("z.mp4"))]) == list(breakdowns.LENGTH_BINS)


def test_by_category_explodes_list_labels():
    items = [_item("a", Clip("a.mp4"), labels={"tags": ["x", "y"]}), _item("b", Clip("b.mp4"), labels={"tags": ["y"]})]
    out = benchmark_outcomes(items, pair_frame(_right("a") + _right("b", False)))
    table = breakdowns.by_category(out, items, "tags", FAST).set_index("subset")
    assert table.loc["x", ["value", "n"]].tolist() == [1.0, 1]
    assert table.loc["y", ["value", "n"]].tolist() == [0.5, 2]
    with pytest.raises(ValueError, match="no item label named"):
        breakdowns.by_category(out, items, "nope")


def test_frames_sampled_and_by_frames():
    assert breakdowns.frames_sampled({"name": "uniform", "k": 8}) == 8
    assert breakdowns.frames_sampled({"name": "none"}) == 0
    assert breakdowns.frames_sampled({"name": "single", "mode": "middle"}) == 1
    assert breakdowns.frames_sampled({"name": "fps", "fps": 1.0, "max_frames": 32}) == 32
    assert breakdowns.frames_sampled({"name": "second_middles"}) is None
    items = [_item(k, Clip(f"{k}.mp4")) for k in "abcd"]
    runs = []
    for name, k, right in (("eight", 8, "abc"), ("one", 1, "a")):
        pair = pair_frame([r for key in "abcd" for r in _right(key, key in right)])
        runs.append((Manifest.from_dict({"name": name, "frame_policy": {"name": "uniform", "k": k}}),
                     metric_table(items, pair, settings=FAST)))
    table = breakdowns.by_frames(runs)
    assert table[["run", "frames", "value"]].values.tolist() == [["one", 1, 0.25], ["eight", 8, 0.75]]


def test_word_frequencies_and_jensen_shannon():
    items = [_item("a", Clip("a.mp4"), "the man opens the door", "the man closes the door"),
             Item("vilma", "b", "s", (Clip("b.mp4"),), ("two dogs", "three dogs", "four dogs"), ((0,),))]
    freq = breakdowns.caption_foil_words(items).set_index("word")
    assert freq.loc["the", ["caption", "foil"]].tolist() == [2, 2]
    assert freq.loc["dogs", ["caption", "foil"]].tolist() == [1, 2]
    assert freq.loc["closes", "caption"] == 0
    assert freq["caption_freq"].sum() == pytest.approx(1.0)
    assert breakdowns.jensen_shannon([1, 2, 3], [2, 4, 6]) == pytest.approx(0.0)
    assert breakdowns.jensen_shannon([1, 0], [0, 1]) == pytest.approx(1.0)
    # p = (1/2, 1/2), q = (1, 0): m = (3/4, 1/4); KL(p||m) = .5 log2(2/3) + .5 log2 2, KL(q||m) = log2(4/3)
    kl_p = 0.5 * math.log2(2 / 3) + 0.5
    kl_q = math.log2(4 / 3)
    assert breakdowns.jensen_shannon([1, 1], [1, 0]) == pytest.approx(math.sqrt((kl_p + kl_q) / 2))
    with pytest.raises(ValueError, match="different vocabularies"):
        breakdowns.jensen_shannon([1, 2], [1])
    div = breakdowns.caption_foil_divergence(items)
    assert isinstance(div, pd.DataFrame) and div["n_items"].tolist() == [1, 1]
    assert (div["js"] > 0).all() and (div["js"] < 1).all()
