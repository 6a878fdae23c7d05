"""The data model: clips, items, item sets and the score table schema."""

from __future__ import annotations

import math

import pytest

from bench.items import Clip, Item, ItemSet, OutsideRoot, resolve_video
from bench.store.schema import choice_frame, choose, failure_frame, pair_frame


def _item(item_id="a", texts=("a cat runs", "a dog runs"), truth=((0,),), clips=None, **kw):
    return Item("demo", item_id, "s1", clips or (Clip("v.mp4"),), texts, truth, **kw)


def test_pts_window_converts_to_seconds():
    clip = Clip("q.mp4", start=56, end=96, unit="pts", fps=30)
    assert clip.window_seconds() == pytest.approx((56 / 30, 96 / 30))
    assert Clip("s.mp4", 1.5, None).window_seconds() == (1.5, None)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"unit": "frames"}, "unit must be one of"),
        ({"unit": "pts"}, "needs the frame rate"),
        ({"start": 5.0, "end": 2.0}, "ends before it starts"),
        ({"start": math.nan}, "window must be finite and >= 0, got start=nan"),
        ({"end": math.inf}, "window must be finite and >= 0, got start=None, end=inf"),
        ({"start": -1.0}, "window must be finite and >= 0"),
        ({"unit": "pts", "fps": math.nan}, "fps must be a finite number > 0, got nan"),
        ({"fps": -30.0}, "fps must be a finite number > 0"),
    ],
)
def test_bad_clips_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Clip("x.mp4", **kwargs)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"texts": ()}, "no texts"),
        ({"texts": ("ok", "  ")}, "non-empty string"),
        ({"truth": ((0,), (1,))}, "2 rows for 1 clips"),
        ({"truth": ((2,),)}, "outside the 2 texts"),
        ({"role": "twin"}, "role must be one of"),
        ({"texts": ("ok", "a\x00b")}, r"text 1: control character U\+0000 \(NUL\) at character 1"),
        ({"texts": ("a\x1bb", "ok")}, r"text 0: control character U\+001B"),
    ],
)
def test_bad_items_are_rejected(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _item(**kwargs)


def test_truth_matrix_for_a_two_by_two_problem():
    item = _item(clips=(Clip("p.mp4"), Clip("n.mp4")), truth=((0,), (1,)))
    assert item.truth_matrix() == [[True, False], [False, True]]


def test_itemset_counts_videos_and_frame(tmp_path):
    (tmp_path / "here.mp4").write_bytes(b"x")
    here, there = resolve_video(tmp_path, "here.mp4"), resolve_video(tmp_path, "gone.mp4")
    assert here[1] is True and there[1] is False
    items = ItemSet("demo", "src", [
        _item("a", clips=(Clip(here[0], exists=here[1]),), labels={"aspect": "x"}),
        _item("b", clips=(Clip(there[0], exists=there[1]),), labels={"aspect": "y"}),
        _item("b/p", role="proficiency", twin_id="b"),
    ])
    assert items.counts() == {"s1": 2}
    assert items.counts(None) == {"s1": 3}
    frame = items.to_frame()
    assert list(frame["aspect"][:2]) == ["x", "y"]
    assert list(frame["videos_missing"]) == [0, 1, 0]
    assert frame.loc[2, "twin_id"] == "b"
    assert items.videos()[there[0]] is False


def test_newlines_and_tabs_are_fine_in_texts():
    assert _item(texts=("a cat\truns\r\n", "a dog\nruns")).texts[1] == "a dog\nruns"


def test_video_paths_stay_inside_the_root_unless_allowed(tmp_path):
    root = tmp_path / "videos"
    assert resolve_video(root, "a/../b.mp4") == (str(root / "a/../b.mp4"), False)
    assert resolve_video(None, "sub/c.mp4") == ("sub/c.mp4", None)
    for relative in ("../outside.mp4", "a/../../outside.mp4", str(tmp_path / "outside.mp4")):
        with pytest.raises(OutsideRoot, match=f"video path '{relative}' leaves the video root"):
            resolve_video(root, relative)
    with pytest.raises(OutsideRoot, match="leaves the current folder"):
        resolve_video(None, "/abs/x.mp4")
    assert resolve_video(root, "../outside.mp4", allow_outside=True) == (str(root / "../outside.mp4"), False)
    assert resolve_video(root, str(root / "in.mp4")) == (str(root / "in.mp4"), False)


def test_label_clashing_with_core_column_is_an_error():
    with pytest.raises(ValueError, match="clashes"):
        ItemSet("demo", "src", [_item(labels={"subset": "x"})]).to_frame()


def test_pair_table_defaults_and_validation():
    df = pair_frame([{"item_id": "a", "clip": 0, "text": 1, "score": 0.25}])
    assert df.loc[0, "answer"] == "" and math.isnan(df.loc[0, "logit_yes"])
    assert str(df["clip"].dtype) == "int64"
    with pytest.raises(ValueError, match="lacks column"):
        pair_frame([{"item_id": "a", "clip": 0, "score": 1.0}])
    with pytest.raises(ValueError, match="unknown column"):
        pair_frame([{"item_id": "a", "clip": 0, "text": 0, "score": 1.0, "bogus": 1}])
    assert list(pair_frame([]).columns)[:4] == ["item_id", "clip", "text", "score"]


def test_choice_table_validation():
    row = {"item_id": "a", "axis": "text", "query": 0, "options": [1, 0], "logits": [0.5, 2.0], "choice": 0}
    assert choice_frame([row]).loc[0, "options"] == [1, 0]
    with pytest.raises(ValueError, match="2 options but 1 logits"):
        choice_frame([{**row, "logits": [1.0]}])
    with pytest.raises(ValueError, match="axis must be"):
        choice_frame([{**row, "axis": "audio"}])
    with pytest.raises(ValueError, match="not among the options"):
        choice_frame([{**row, "choice": 3}])
    assert failure_frame([{"item_id": "a", "stage": "frames", "reason": "corrupt"}]).shape == (1, 3)


def test_choose_takes_highest_logit_first_on_ties():
    assert choose([1, 0], [0.1, 0.9]) == 0
    assert choose([1, 0], [0.5, 0.5]) == 1
