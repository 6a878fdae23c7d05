"""The TempCompass loader on the repository's own layout: the real files, a verbatim excerpt, and broken inputs."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from bench.loaders import LoaderError, load
from bench.loaders.tempcompass import ASPECTS, FINE_ASPECTS, TASKS
from fixtures_tempcompass import EXCERPT, write_repo


def _questions(root, task):
    return json.loads((root / "questions" / f"{task}.json").read_text())


def test_the_real_files_give_one_item_per_question_with_the_official_truth(realdata):
    root = realdata / "tempcompass"
    if not root.is_dir():
        pytest.skip("TempCompass is not among the real annotation files")
    items = load("tempcompass", root)
    by_id = items.by_id()
    meta = json.loads((root / "meta_info.json").read_text())
    expected = Counter()
    for task in TASKS:
        for video, aspects in _questions(root, task).items():
            for aspect, questions in aspects.items():
                expected[(task, aspect)] += len(questions)
                for n, record in enumerate(questions):
                    it = by_id[f"{task}/{video}/{aspect}/{n}"]
                    assert (it.subset, it.labels["format"], it.labels["answer"]) == (aspect, task, record["answer"])
                    fine = "order" if aspect == "order" else meta[video]["eval_dim"][aspect]["type"]
                    assert it.labels["fine_aspect"] == fine and it.labels["content"] == meta[video]["content"]
                    if task == "yes_no":
                        assert it.texts == (record["question"],) and bool(it.truth[0]) == (record["answer"] == "yes")
                    elif task == "caption_matching":
                        lines = record["question"].split("\n")[1:]
                        assert [f"{a}: {b}" for a, b in zip(it.labels["option_names"], it.texts)] == lines
                        assert lines[it.truth[0][0]] == record["answer"]
                    else:  # the answer's letter names the true option
                        assert "ABCD"[it.truth[0][0]] == record["answer"][0]
    assert Counter((it.labels["format"], it.subset) for it in items) == expected
    assert sum(expected.values()) == len(items) == 7540  # the paper's 7,540 questions
    assert {it.labels["fine_aspect"] for it in items} == set(FINE_ASPECTS)
    assert any("3 option line(s) spaced irregularly" in note for note in items.notes)


def test_the_excerpt_reads_from_the_repository_its_questions_folder_or_one_task_file(tmp_path):
    root = write_repo(tmp_path / "TempCompass")
    (root / "videos").mkdir()
    (root / "videos" / "1034419625.mp4").write_bytes(b"")
    whole = load("tempcompass", root, video_root=root / "videos")
    assert len(whole) == sum(len(q) for t in EXCERPT["questions"].values() for a in t.values() for q in a.values())
    assert load("tempcompass", root / "questions").by_id().keys() == whole.by_id().keys()
    one = load("tempcompass", root / "questions" / "caption_matching.json")
    assert {it.labels["format"] for it in one} == {"caption_matching"} and len(one) == 6
    first = whole.by_id()["multi-choice/1082268005_1063373449_0/order/0"]
    record = EXCERPT["questions"]["multi-choice"]["1082268005_1063373449_0"]["order"][0]
    stem, *options = record["question"].split("\n")
    assert first.texts == tuple(line[3:] for line in options) and first.labels["question"] == stem
    assert options[first.truth[0][0]] == record["answer"]
    assert first.labels["conflict"] == "1082268005" and first.clips[0].exists is False
    matching = whole.by_id()["caption_matching/1034419625/action/0"]
    assert matching.labels["option_names"] == ["Option 1", "Option 2"] and matching.truth == ((1,),)
    assert matching.clips[0].exists is True
    caption = whole.by_id()["captioning/1082268005_1063373449_0/order/0"]
    assert len(caption.texts) == 3 and caption.texts[0].startswith("{'subject'")


def _broken(tmp_path, task, record, meta=None):
    """A repository holding one task file with one question about video 1034419625's action."""
    root = tmp_path / "repo"
    (root / "questions").mkdir(parents=True)
    (root / "questions" / f"{task}.json").write_text(json.dumps({"1034419625": {"action": [record]}}))
    found = {"1034419625": EXCERPT["meta_info"]["1034419625"]} if meta is None else meta
    (root / "meta_info.json").write_text(json.dumps(found))
    return root


@pytest.mark.parametrize("task, record, words", [
    ("multi-choice", {"question": "Q?\nA. x\nC. y", "answer": "A. x"}, "expected options A, B"),
    ("multi-choice", {"question": "Q?\nA. x\nB. y", "answer": "C. z"}, "does not start with an option letter"),
    ("multi-choice", {"question": "Q?\nA: x\nB. y", "answer": "A. x"}, "is not 'X. option'"),
    ("yes_no", {"question": "Is it?", "answer": "Yes"}, "must be 'yes' or 'no'"),
    ("caption_matching", {"question": "Q?\nCaption A: x\nCaption B: y", "answer": "Caption A: z"},
     "is not one of the question's option lines"),
    ("caption_matching", {"question": "Q?\nCaption A x\nCaption B: y", "answer": "Caption B: y"},
     "option lines '<name>: <sentence>'"),
    ("captioning", {"question": "Do it.\nInformation A: {}\nInformation B: {}", "answer": "C. z"},
     "does not start with an information letter"),
    ("yes_no", {"question": "Is it?"}, "expected an object with question and answer"),
    ("yes_no", {"question": "", "answer": "yes"}, "'question' must be a non-empty string"),
])
def test_a_broken_question_is_one_line_naming_the_file_and_place(tmp_path, task, record, words):
    root = _broken(tmp_path, task, record)
    with pytest.raises(LoaderError) as err:
        load("tempcompass", root)
    message = str(err.value)
    assert f"{task}.json, key '1034419625', aspect 'action', question 0: " in message and words in message
    assert "\n" not in message


def test_missing_or_inconsistent_meta_information_is_one_line(tmp_path):
    root = write_repo(tmp_path / "repo")
    (root / "meta_info.json").unlink()
    with pytest.raises(LoaderError, match=r"meta_info\.json: no meta_info\.json"):
        load("tempcompass", root)
    root = _broken(tmp_path / "b", "yes_no", {"question": "Is it?", "answer": "no"},
                   meta={"1034419625": {"eval_dim": {"action": {"type": "dancing"}}, "content": []}})
    with pytest.raises(LoaderError, match=r"field 'eval_dim.action.type': expected one of .*got 'dancing'"):
        load("tempcompass", root)
    root = _broken(tmp_path / "c", "yes_no", {"question": "Is it?", "answer": "no"}, meta={"other": {}})
    with pytest.raises(LoaderError, match=r"key '1034419625': no eval_dim for video"):
        load("tempcompass", root)
    (root / "questions" / "yes_no.json").write_text(json.dumps({"1034419625": {"tempo": []}}))
    with pytest.raises(LoaderError, match=r"aspect 'tempo': unknown aspect; expected one of"):
        load("tempcompass", root)


def test_paths_that_hold_no_task_file_are_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("tempcompass", tmp_path / "absent")
    with pytest.raises(LoaderError, match="no task files here or in questions/"):
        load("tempcompass", tmp_path)
    other = tmp_path / "answers.json"
    other.write_text("{}")
    with pytest.raises(LoaderError, match="not a TempCompass task file"):
        load("tempcompass", other)


def test_the_generated_world_writes_the_repositorys_layout_and_its_videos(sample):
    s = sample["tempcompass"]
    items = load("tempcompass", s.data_path, video_root=s.video_root, **s.loader_options)
    assert {it.labels["format"] for it in items} == set(TASKS) and {it.subset for it in items} == set(ASPECTS)
    assert all(c.exists for it in items for c in it.clips) and all(it.labels["foil_type"] for it in items)
    conflicting = {it.labels["video"] for it in items if it.labels["video"].endswith("_reverse")}
    assert conflicting and all(v.split("_")[0] in {it.labels["video"] for it in items} for v in conflicting)
    for it in items:
        if it.labels["format"] == "multi-choice":
            assert re.fullmatch(r"[A-D]\. .+", it.labels["answer"])


def test_the_summary_command_counts_the_questions_and_names_a_broken_file_in_one_line(sample, tmp_path, capsys):
    from bench.cli import main

    s = sample["tempcompass"]
    assert main(["summary", "tempcompass", str(s.data_path), "--video-root", str(s.video_root)]) == 0
    out = capsys.readouterr().out
    assert f"{len(load('tempcompass', s.data_path))} items" in out and ", 0 missing on disk" in out
    root = _broken(tmp_path, "yes_no", {"question": "Is it?", "answer": "maybe"})
    assert main(["summary", "tempcompass", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "yes_no.json, key '1034419625', aspect 'action', question 0: answer must be" in err[0]
