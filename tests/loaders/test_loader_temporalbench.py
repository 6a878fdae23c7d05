"""The TemporalBench loader on QA files in the released format (HF ``microsoft/TemporalBench``), the README's data
instance verbatim among them, and on broken ones."""

from __future__ import annotations

import pytest
from fixtures_temporalbench import README_ROW, entry, long_entries, short_entries, write, write_temporalbench

from bench.cli import main
from bench.loaders import LoaderError, load
from bench.scoring.prompts import PROMPTS, render_choice


def test_the_readme_instance_is_one_item_whose_question_renders_back_exactly(tmp_path):
    items = load("temporalbench", write(tmp_path / "temporalbench_short_qa.json", [README_ROW]), video_root=tmp_path)
    item, = items
    assert item.item_id == README_ROW["idx"] and item.subset == "short" and item.truth == ((1,),)
    assert item.texts[0].endswith("walking forward. ") and "his right hand" in item.texts[1]
    assert item.clips[0].path == str(tmp_path / README_ROW["video_name"]) and item.clips[0].exists is False
    assert item.labels == {"dataset": "Charades", "category": "Action Effector", "video_name": README_ROW["video_name"],
                           "question": README_ROW["question"], "gt": "B"}
    assert render_choice(PROMPTS["temporalbench"], list(item.texts), "temporalbench") == README_ROW["question"]
    assert items.notes == ["temporalbench_short_qa.json: 1 short questions about 1 videos",
                           "temporalbench_short_qa.json: 1 question(s) name their source 'source_dataset' (the "
                           "README's spelling) instead of 'dataset'"]


def test_a_folder_reads_both_files_short_and_long(tmp_path):
    items = load("temporalbench", write_temporalbench(tmp_path))
    assert items.counts() == {"short": len(short_entries()), "long": len(long_entries())}
    by_id = items.by_id()
    for raw in short_entries() + long_entries():
        item = by_id[raw["idx"]]
        assert render_choice(PROMPTS["temporalbench"], list(item.texts)) == raw["question"]
        assert item.texts[item.truth[0][0]] == item.texts["AB".index(raw["GT"])]
        assert item.labels["category"] == (raw["category"] or None)
    assert items.notes == ["temporalbench_short_qa.json: 5 short questions about 3 videos",
                           "temporalbench_long_qa.json: 2 long questions about 1 videos"]
    assert len(load("temporalbench", tmp_path / "temporalbench_long_qa.json")) == 2


def test_wording_and_categories_outside_the_official_ones_are_noted(tmp_path):
    odd = entry("short_video/COIN/a.mp4", 0, "x.", "y.", category="Weather")
    odd["question"] = odd["question"].replace("Which caption", "What caption")
    items = load("temporalbench", write(tmp_path / "temporalbench_short_qa.json", [odd]))
    assert "temporalbench_short_qa.json: 1 question(s) worded otherwise than" in items.notes[1]
    assert items.notes[2] == "temporalbench_short_qa.json: categories outside get_qa_acc.py's eight: ['Weather']"


GOOD = entry("short_video/COIN/a.mp4", 0, "x.", "y.")


@pytest.mark.parametrize("entries, message", [
    ([{**GOOD, "GT": "C"}], "entry 0: 'GT' must be 'A' or 'B', got 'C'"),
    ([{**GOOD, "question": "Which caption? x or y"}], "does not show two captions as lines 'A. ...' and 'B. ...'"),
    ([entry("short_video/COIN/a.mp4", 0, "x.", "x.")], "the two captions of 'question' are the same"),
    ([GOOD, GOOD], r"entry 1: duplicate idx 'short_video/COIN/a.mp4_0' \(first at temporalbench_short_qa.json entry"),
    ([{k: v for k, v in GOOD.items() if k != "dataset"}], "missing field 'dataset'"),
    ([{k: v for k, v in GOOD.items() if k != "GT"}], r"missing field\(s\) \['GT'\]"),
    ([{**GOOD, "video_name": ""}], "field 'video_name' is empty"),
    ([{**GOOD, "category": 3}], "'category' must be a string"),
    ([{**GOOD, "video_name": "/abs/a.mp4"}], "leaves the video root"),
    ([], "expected a non-empty JSON list"),
    ({"idx": "a"}, "expected a non-empty JSON list"),
])
def test_broken_entries_are_one_line_errors(tmp_path, entries, message):
    with pytest.raises(LoaderError, match=message):
        load("temporalbench", write(tmp_path / "temporalbench_short_qa.json", entries), video_root=tmp_path)


def test_broken_files_and_folders(tmp_path):
    with pytest.raises(LoaderError, match="cannot tell short from long questions"):
        load("temporalbench", write(tmp_path / "questions.json", [GOOD]))
    with pytest.raises(LoaderError, match="no temporalbench_short_qa.json or temporalbench_long_qa.json"):
        load("temporalbench", tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("temporalbench", tmp_path / "absent")
    (tmp_path / "temporalbench_long_qa.json").write_text("[{", encoding="utf-8")
    with pytest.raises(LoaderError, match="malformed JSON"):
        load("temporalbench", tmp_path)


def test_summary(tmp_path, capsys):
    assert main(["summary", "temporalbench", str(write_temporalbench(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "temporalbench: 7 items" in out and "short" in out and "long" in out
