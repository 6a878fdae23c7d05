"""The MVP loader on files in the released format (HF ``facebook/minimal_video_pairs``), and on broken ones."""

from __future__ import annotations

import pytest
from fixtures_mvp import pair, question, write, write_mvp

from bench.cli import main
from bench.loaders import LoaderError, load
from bench.loaders.mvp import official_order, pair_id


def test_pairs_become_two_clip_items_per_subset(tmp_path):
    root = write_mvp(tmp_path / "mvp")
    (tmp_path / "videos" / "clevrer").mkdir(parents=True)
    (tmp_path / "videos" / "clevrer" / "clevrer_17_0.mp4").write_bytes(b"")
    items = load("mvp", root, video_root=tmp_path / "videos")
    assert items.counts() == {"intuitive_physics": 2, "temporal_reasoning": 1}
    first = items.by_id()["intuitive_physics/clevrer_17"]
    assert first.texts == ("yes", "no") and first.truth == ((0,), (1,))
    assert [c.path for c in first.clips] == [str(tmp_path / "videos/clevrer/clevrer_17_0.mp4"),
                                            str(tmp_path / "videos/clevrer/clevrer_17_1.mp4")]
    assert [c.exists for c in first.clips] == [True, False]
    assert first.labels == {"question": "Will the red ball hit the cube?", "source": "clevrer",
                            "video_ids": ["clevrer_17_0", "clevrer_17_1"], "orders": [[0, 1], [0, 1]],
                            "split": "full"}
    assert items.by_id()["intuitive_physics/intphys_O1_02"].truth == ((1,), (0,))
    assert items.notes == ["split full: 3 pairs (6 questions) from 2 file(s)",
                           "subsets not found here: human_object_interactions, robot_object_interactions"]


def test_the_pair_is_the_video_id_without_its_last_part():
    assert pair_id("intphys_O1_02_1") == "intphys_O1_02" and pair_id("star_Interaction_T1_2_0") == \
        "star_Interaction_T1_2"


def test_splits_subset_folders_and_single_files(tmp_path):
    root = write_mvp(tmp_path / "mvp")
    mini = load("mvp", root, split="mini")
    assert mini.counts() == {"intuitive_physics": 1, "temporal_reasoning": 1}
    assert {it.labels["split"] for it in mini} == {"mini"}
    assert load("mvp", root / "temporal_reasoning").counts() == {"temporal_reasoning": 1}
    one = load("mvp", root / "intuitive_physics" / "mini-00000-of-00001.parquet")
    assert one.counts() == {"intuitive_physics": 1} and one.items[0].labels["split"] == "mini"
    with pytest.raises(LoaderError, match="this is a mini file; the option asks for split=full"):
        load("mvp", root / "intuitive_physics" / "mini-00000-of-00001.parquet", split="full")
    with pytest.raises(ValueError, match="'split' must be one of full, mini"):
        load("mvp", root, split="test")


def test_each_clip_keeps_the_option_order_of_its_own_question(tmp_path):
    rows = [question("ssv2_9_0", "up", ["up", "down"]), question("ssv2_9_1", "down", ["down", "up"])]
    item = load("mvp", write(tmp_path, "human_object_interactions", rows)).items[0]
    assert item.texts == ("up", "down") and item.truth == ((0,), (1,))
    assert [official_order(item, c) for c in (0, 1)] == [[0, 1], [1, 0]]


def test_a_pair_with_one_answer_for_both_videos_is_kept_and_noted(tmp_path):
    items = load("mvp", write(tmp_path, "intuitive_physics", pair("grasp_3", ("yes", "yes"), ["yes", "no"])))
    assert items.items[0].truth == ((0,), (0,))
    assert "1 pair(s) whose two videos have the same answer (not a minimal pair; kept as released)" in items.notes


@pytest.mark.parametrize("rows, message", [
    ([question("a_0", "yes", ["yes", "no"])], r"pair 'a' has 1 question\(s\): 'a_0' \(row 1\); the official scoring"),
    (pair("a", ("yes", "no"), ["yes", "no"]) + [question("a_2", "no", ["yes", "no"])], "pair 'a' has 3 question"),
    (pair("a", ("yes", "no"), ["yes", "no"]) + [question("a_1", "no", ["yes", "no"])],
     r"row 3: duplicate video_id 'a_1' \(first at full-00000-of-00001.parquet row 2\)"),
    ([question("a_0", "maybe", ["yes", "no"]), question("a_1", "no", ["yes", "no"])],
     r"row 1: 'answer' 'maybe' is none of the candidates \['yes', 'no'\]"),
    ([question("a_0", "yes", ["yes", "no", "maybe"])], "has 3 options; MVP's questions have two"),
    ([question("a_0", "yes", ["yes", "yes"])], "repeats the option 'yes'"),
    ([{**question("a_0", "yes", ["yes", "no"]), "candidates": "yes|no"}], "is not a Python list literal"),
    ([{**question("a_0", "yes", ["yes", "no"]), "candidates": "[1, 2]"}], "must be a list of non-empty strings"),
    ([{**question("a_0", "yes", ["yes", "no"]), "question": " "}], "field 'question' is empty"),
    ([{**question("a_0", "yes", ["yes", "no"]), "question": "Bell\x07?"}], "control character U\\+0007"),
    ([question("a_0", "yes", ["yes", "no"]), question("a_1", "no", ["yes", "no"], question="Another?")],
     "the two questions of pair 'a' differ"),
    ([question("a_0", "yes", ["yes", "no"]), question("a_1", "no", ["no", "nope"])],
     "the two rows of pair 'a' offer different options"),
    ([question("a_0", "yes", ["yes", "no"], path="../a_0.mp4"), question("a_1", "no", ["yes", "no"])],
     "field 'video_path': video path '../a_0.mp4' leaves"),
])
def test_broken_rows_are_one_line_errors_naming_file_and_row(tmp_path, rows, message):
    with pytest.raises(LoaderError, match=message):
        load("mvp", write(tmp_path, "intuitive_physics", rows), video_root=tmp_path)


def test_broken_files_and_folders(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("mvp", tmp_path / "absent")
    with pytest.raises(LoaderError, match="no MVP subset folder here"):
        load("mvp", tmp_path)
    write(tmp_path, "intuitive_physics", pair("a", ("yes", "no"), ["yes", "no"]), split="mini")
    with pytest.raises(LoaderError, match=r"intuitive_physics: no full-\*\.parquet file in this subset folder"):
        load("mvp", tmp_path)
    stray = tmp_path / "elsewhere" / "full-00000-of-00001.parquet"
    stray.parent.mkdir()
    stray.write_bytes(b"PAR1 not really")
    with pytest.raises(LoaderError, match="cannot tell the subset"):
        load("mvp", stray)
    bad = tmp_path / "temporal_reasoning" / "full-00000-of-00001.parquet"
    bad.parent.mkdir()
    bad.write_bytes(b"PAR1 not really")
    with pytest.raises(LoaderError, match="not a readable Parquet file"):
        load("mvp", bad)
    wrong = write(tmp_path / "other", "temporal_reasoning", [{"video_id": "a_0", "question": "q?"}])
    with pytest.raises(LoaderError, match=r"missing column\(s\) \['video_path', 'answer', 'candidates'\]"):
        load("mvp", wrong)


def test_summary_prints_the_pairs_per_subset(tmp_path, capsys):
    root = write_mvp(tmp_path / "mvp")
    assert main(["summary", "mvp", str(root), "-o", "split=mini"]) == 0
    out = capsys.readouterr().out
    assert "mvp: 2 items" in out and "intuitive_physics" in out and "note: split mini: 2 pairs (4 questions)" in out
    assert main(["summary", "mvp", str(tmp_path / "nothing")]) == 2
    assert capsys.readouterr().err.startswith("foilbench summary: error: ")
