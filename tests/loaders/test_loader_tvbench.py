"""The TVBench loader on files in the dataset's format (MVBench's, as ``vqa_dataset.py`` and ``infer.ipynb`` read it;
the rows are made up: the dataset is on Hugging Face only), on the generated world's, and on broken inputs."""

from __future__ import annotations

import json

import pytest

from bench.loaders import LoaderError, load
from bench.loaders.tvbench import TASKS

ROWS = {
    "action_antonym": [
        {"video": "a1.mp4", "question": "What is the person doing?", "candidates": ["sitting down", "standing up"],
         "answer": "standing up"},
        {"video": "a2.mp4", "question": "What is the person doing?", "candidates": ["standing up", "sitting down"],
         "answer": "standing up"},
    ],
    "action_sequence": [
        {"video": "s1.mp4", "question": "What did the person do first?", "candidates": ["Opened the door.",
                                                                                          "Took the cup."],
         "answer": "Took the cup.", "start": 1.5, "end": 9.0},
    ],
    "object_shuffle": [
        {"video": "o1.mp4", "question": "Where is the ball?", "candidates": ["left", "middle", "right"],
         "answer": "middle", "accurate_start": 0},
    ],
}


def write_tvbench(root, rows=ROWS):
    """``root/json/<task>.json`` (and an empty video for each row under ``root/video/<task>/``)."""
    for task, records in rows.items():
        (root / "json").mkdir(parents=True, exist_ok=True)
        (root / "json" / f"{task}.json").write_text(json.dumps(records))
        for record in records:
            (root / "video" / task).mkdir(parents=True, exist_ok=True)
            (root / "video" / task / record["video"]).write_bytes(b"")
    return root


def test_items_follow_the_notebooks_task_order_with_windows_where_it_reads_them(tmp_path):
    root = write_tvbench(tmp_path / "TVBench")
    items = load("tvbench", root, video_root=root / "video")
    order = [name for name, (stem, _) in TASKS.items() if stem in ROWS]
    assert list(items.counts()) == order == ["Action Sequence", "Object Shuffle", "Action Antonym"]
    by_id = items.by_id()
    sequence = by_id["action_sequence/0"]
    assert (sequence.clips[0].start, sequence.clips[0].end) == (1.5, 9.0) and sequence.truth == ((1,),)
    assert sequence.clips[0].path == str(root / "video" / "action_sequence" / "s1.mp4") and sequence.clips[0].exists
    assert sequence.labels == {"task": "action_sequence", "video": "s1.mp4",
                               "question": "What did the person do first?"}
    antonym = by_id["action_antonym/1"]
    assert antonym.truth == ((0,),) and (antonym.clips[0].start, antonym.clips[0].end) == (None, None)
    assert any("accurate_start" in note for note in items.notes)
    assert load("tvbench", root / "json").by_id().keys() == by_id.keys()
    assert list(load("tvbench", root / "json" / "object_shuffle.json").by_id()) == ["object_shuffle/0"]


def test_a_candidate_listed_twice_is_true_where_the_official_code_finds_it(tmp_path):
    rows = {"action_count": [{"video": "c.mp4", "question": "How many times?", "candidates": ["3", "2", "3"],
                              "answer": "3"}]}
    items = load("tvbench", write_tvbench(tmp_path, rows))
    assert items.items[0].truth == ((2,),)  # vqa_dataset.py L136-139 keeps the last equal candidate
    assert any("list a candidate twice" in note for note in items.notes)


@pytest.mark.parametrize("record, words", [
    ({"video": "x.mp4", "question": "Q?", "candidates": ["a", "b"], "answer": "c"}, "is none of the candidates"),
    ({"video": "x.mp4", "question": "Q?", "candidates": ["a"], "answer": "a"}, "two or more non-empty strings"),
    ({"video": "x.mp4", "question": "Q?", "answer": "a"}, "missing field(s) ['candidates']"),
    ({"video": "", "question": "Q?", "candidates": ["a", "b"], "answer": "a"}, "'video' must be a non-empty string"),
])
def test_a_broken_question_is_one_line_naming_the_file_and_question(tmp_path, record, words):
    with pytest.raises(LoaderError) as err:
        load("tvbench", write_tvbench(tmp_path, {"moving_direction": [record]}) if record["video"] else
             _raw(tmp_path, "moving_direction", [record]))
    assert "moving_direction.json, question 0: " in str(err.value) and words in str(err.value)


def _raw(root, task, records):
    (root / "json").mkdir(parents=True, exist_ok=True)
    (root / "json" / f"{task}.json").write_text(json.dumps(records))
    return root


def test_windowed_tasks_need_their_window(tmp_path):
    rows = {"action_localization": [{"video": "l.mp4", "question": "When?", "candidates": ["a", "b"], "answer": "a",
                                     "start": 5, "end": 2}]}
    with pytest.raises(LoaderError, match=r"question 0: 'end' 2.0 is before 'start' 5.0"):
        load("tvbench", _raw(tmp_path, "action_localization", rows["action_localization"]))
    del rows["action_localization"][0]["start"]
    with pytest.raises(LoaderError, match=r"'start' must be a number of seconds >= 0 .*infer\.ipynb cell 3"):
        load("tvbench", _raw(tmp_path, "action_localization", rows["action_localization"]))


def test_paths_without_task_files_are_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("tvbench", tmp_path / "absent")
    with pytest.raises(LoaderError, match="no task files here or in json/"):
        load("tvbench", tmp_path)
    (tmp_path / "mvbench.json").write_text("[]")
    with pytest.raises(LoaderError, match="not a TVBench task file"):
        load("tvbench", tmp_path / "mvbench.json")
    (tmp_path / "json").mkdir()
    (tmp_path / "json" / "object_count.json").write_text("{}")
    with pytest.raises(LoaderError, match="expected a non-empty JSON list"):
        load("tvbench", tmp_path)


def test_the_generated_world_writes_the_datasets_layout(sample):
    s = sample["tvbench"]
    items = load("tvbench", s.data_path, video_root=s.video_root, **s.loader_options)
    assert set(items.counts()) <= set(TASKS) and len(items.counts()) >= 5
    assert all(c.exists for it in items for c in it.clips) and all(it.labels["foil_type"] for it in items)
    windowed = [it for it in items if TASKS[it.subset][1]]
    assert windowed and all(it.clips[0].end is not None for it in windowed)
    assert {it.truth[0][0] for it in items} != {0}  # the true candidate's place varies


def test_the_summary_command_counts_the_questions_and_names_a_missing_folder_in_one_line(sample, tmp_path, capsys):
    from bench.cli import main

    s = sample["tvbench"]
    assert main(["summary", "tvbench", str(s.data_path), "--video-root", str(s.video_root)]) == 0
    out = capsys.readouterr().out
    assert "Action Count" in out and ", 0 missing on disk" in out
    assert main(["summary", "tvbench", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "absent: no such file or folder (TVBench)" in err[0]
