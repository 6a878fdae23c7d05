"""The VideoCon loader: project-written files in the released formats, the real downstream files, broken inputs."""

from __future__ import annotations

import csv

import pytest
from fixtures_videocon import (ATP_QUESTIONS, CONVERSATION, HUMAN_ROWS, LLM_HEADER, LLM_ROWS, SSV2_CAPTIONS,
                               write_atp, write_csv, write_human, write_llm_entailment, write_llm_feedback, write_ssv2)

from bench.loaders import LoaderError, load
from bench.loaders.videocon import recognise


def _touch(root, relative):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_llm_entailment_rows_become_caption_contrast_items(tmp_path):
    _touch(tmp_path / "videos", "tempo/videos/1524.mp4")
    items = load("videocon", write_llm_entailment(tmp_path), video_root=tmp_path / "videos")
    assert [it.item_id for it in items] == ["llm/0", "llm/1", "llm/2", "llm/3"]
    assert items.counts() == {"llm": 4}
    first, tempo, vatex, _ = items.items
    assert first.texts == ("lego characters dance to music", "lego characters sing to music")
    assert first.truth == ((0,),) and len(first.clips) == 1
    assert dict(first.labels) == {"source": "msr-vtt", "misalignment": "action", "split": "test",
                                  "youtube_key": "1tCWjXq8ZD8", "hard": False}
    assert tempo.clips[0].path == str(tmp_path / "videos" / "tempo/videos/1524.mp4") and tempo.clips[0].exists
    assert tempo.labels["youtube_key"] is None and tempo.labels["misalignment"] == "flip"
    assert vatex.clips[0].exists is False and vatex.labels["source"] == "vatex"
    assert any("videocon_llm_entailment.csv: read as llm, items: 4" == n for n in items.notes)


def test_split_option_keeps_ids_and_says_what_it_left_out(tmp_path):
    items = load("videocon", write_llm_entailment(tmp_path), split="test")
    assert [it.item_id for it in items] == ["llm/0", "llm/2"]
    assert {it.labels["split"] for it in items} == {"test"}
    assert "videocon_llm_entailment.csv: split='test' kept 2 of 4 rows (left out: train 1, val 1)" in items.notes
    with pytest.raises(ValueError, match=r"split must be one of \['train', 'val', 'test'\]"):
        load("videocon", tmp_path, split="dev")
    with pytest.raises(LoaderError, match=r"no VideoCon items in videocon_llm_entailment\.csv.*kept 0 of 1 rows"):
        load("videocon", write_llm_entailment(tmp_path / "one", LLM_ROWS[1:2]), split="test")


def test_feedback_keeps_the_explanation_and_human_set_the_hard_flag(tmp_path):
    feedback = load("videocon", write_llm_feedback(tmp_path))
    assert feedback.counts() == {"llm_feedback": 4}
    assert feedback.by_id()["llm_feedback/2"].labels["nle"] == "there are two men, not three"
    _touch(tmp_path / "anet", "v_abc123.mp4")
    human = load("videocon", write_human(tmp_path), video_root=tmp_path / "anet")
    hard, easy = human.items
    assert (hard.item_id, hard.subset, hard.labels["hard"], easy.labels["hard"]) == ("human/0", "human", True, False)
    assert hard.clips[0].path == str(tmp_path / "anet" / "v_abc123.mp4") and hard.clips[0].exists is True
    assert easy.clips[0].exists is False
    assert hard.texts == ("a boy jumps over a fence", "a boy sits on a fence")
    assert hard.labels["nle"] == "the boy jumps, he does not sit" and hard.labels["video_url"] == HUMAN_ROWS[0][0]
    assert hard.labels["source"] == "activitynet" and hard.labels["misalignment"] is None


def test_folder_loads_every_recognised_file_and_notes_the_rest(tmp_path):
    write_llm_entailment(tmp_path)
    write_llm_feedback(tmp_path)
    write_human(tmp_path)
    write_ssv2(tmp_path)
    write_atp(tmp_path)
    write_csv(tmp_path / "final_test.csv", [["videopath", "text", "caption"], ["<path>", "a", CONVERSATION]])
    write_csv(tmp_path / "final_test_scores.csv", [["<path>", CONVERSATION.format(caption="a"), "0.9"]])
    write_csv(tmp_path / "notes.csv", [["who", "what"], ["me", "this"]])
    items = load("videocon", tmp_path)
    assert items.counts() == {"atp_hard": 3, "ssv2_temporal": 1, "human": 2, "llm": 4, "llm_feedback": 4}
    skipped = [n for n in items.notes if n.startswith("skipped")]
    assert skipped[0].startswith("skipped final_test.csv: an inference input example")
    assert skipped[1].startswith("skipped final_test_scores.csv: a score file") and "foilbench import" in skipped[1]
    assert skipped[2].startswith("skipped notes.csv: not a VideoCon annotation file: header ['who', 'what']")
    assert len({it.item_id for it in items}) == len(items)


def test_ssv2_temporal_is_one_retrieval_item_with_descriptions_extracted(tmp_path):
    items = load("videocon", write_ssv2(tmp_path), video_root=tmp_path)
    (item,) = items.items
    assert (item.item_id, item.subset) == ("ssv2_temporal", "ssv2_temporal")
    assert item.texts == tuple(SSV2_CAPTIONS)  # the inner quotes of the second description survive
    assert [c.path for c in item.clips] == [str(tmp_path / v) for v in
                                            ("videos/104599.avi", "videos/191873.avi", "videos/185280.avi")]
    assert item.truth == ((0,), (1,), (0,))
    assert item.labels["prompts"] == [CONVERSATION.format(caption=c) for c in SSV2_CAPTIONS]
    assert "eval_ssv2_temporal.csv: 3 videos x 2 captions, 3 positives" in items.notes


def test_atp_hard_items_with_answers_paths_and_question_types(tmp_path):
    files = write_atp(tmp_path)
    items = load("videocon", tmp_path, video_root=tmp_path / "nextqa")
    assert items.counts() == {"atp_hard": 3}
    for it, (folder, video, question, answer, qid, qtype, options) in zip(items, ATP_QUESTIONS):
        assert it.texts == tuple(options) and it.truth == ((answer,),)
        assert it.clips[0].path == str(tmp_path / "nextqa" / folder / f"{video}.mp4")
        assert dict(it.labels) == {"question": question, "video": video, "type": qtype, "type_group": qtype[0],
                                   "qid": qid}
    assert any("agrees with eval-nextqa-atphard.csv" in n for n in items.notes)
    # one file given alone: the questions file beside it still adds the types
    alone = load("videocon", files["eval"])
    assert [it.labels["type"] for it in alone] == ["CH", "TN", "CW"]
    # the statements file without the per-option file: the video has no folder
    files["eval"].unlink()
    statements = load("videocon", tmp_path)
    assert statements.items[2].clips[0].path == "3562017845.mp4" and statements.items[2].labels["qid"] == 1
    assert statements.items[2].texts[2] == "The bird looked down."


def test_recognise_reads_headers_not_names(tmp_path):
    renamed = write_llm_entailment(tmp_path).rename(tmp_path / "anything.csv")
    assert recognise(renamed) == "llm"
    assert recognise(write_llm_feedback(tmp_path)) == "llm_feedback"
    assert [recognise(p) for p in write_atp(tmp_path).values()] == ["atp_hard_eval", "atp_hard_statements",
                                                                     "atp_hard_questions"]


@pytest.mark.parametrize("column, value, message", [
    ("misalignment", "teleport", r"line 3: unknown misalignment 'teleport'; expected one of \['object'"),
    ("source", "youtube", r"line 3: unknown source 'youtube'; expected one of \['msr-vtt', 'vatex', 'tempo'\]"),
    ("split", "dev", r"line 3: unknown split 'dev'"),
    ("neg_caption", " ", r"line 3: empty 'neg_caption'; expected a sentence"),
    ("videopath", "", r"line 3: empty 'videopath'"),
])
def test_bad_core_values_name_the_line(tmp_path, column, value, message):
    rows = [list(r) for r in LLM_ROWS]
    rows[1][LLM_HEADER.index(column)] = value
    with pytest.raises(LoaderError, match=r"videocon_llm_entailment\.csv, " + message):
        load("videocon", write_llm_entailment(tmp_path, rows))


def test_malformed_files_are_refused_with_the_reason(tmp_path):
    with pytest.raises(LoaderError, match=r"a\.csv, line 1: not a VideoCon annotation file: header \['videopath', "
                                          r"'source', 'caption'\]"):
        load("videocon", write_csv(tmp_path / "a.csv", [LLM_HEADER[:3], ["v.mp4", "vatex", "x"]]))
    with pytest.raises(LoaderError, match=r"b\.csv: the file has no data rows"):
        load("videocon", write_csv(tmp_path / "b.csv", [LLM_HEADER]))
    with pytest.raises(LoaderError, match=r"c\.csv, line 3: wrong number of fields"):
        load("videocon", write_csv(tmp_path / "c.csv", [LLM_HEADER, LLM_ROWS[0], LLM_ROWS[1][:4]]))
    (tmp_path / "empty.csv").write_text("")
    with pytest.raises(LoaderError, match=r"empty\.csv, line 1: not a VideoCon annotation file: header \[\]"):
        load("videocon", tmp_path / "empty.csv")
    with pytest.raises(LoaderError, match=r"line 2: 'hard' must be True/False, got 'maybe'"):
        load("videocon", write_human(tmp_path, [HUMAN_ROWS[0][:4] + ["maybe"]]))
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00video")
    with pytest.raises(LoaderError,
                       match=r"binary\.csv, line 1: not UTF-8 text: byte 0xff at byte offset 0 \(invalid start byte\)"):
        load("videocon", tmp_path / "binary.csv")
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("videocon", tmp_path / "absent")


def test_examples_score_files_and_lone_question_files_are_refused(tmp_path):
    example = write_csv(tmp_path / "final_test.csv", [["videopath", "text", "caption"], ["<p>", "a", "b"]])
    with pytest.raises(LoaderError, match=r"final_test\.csv, line 1: an inference input example"):
        load("videocon", example)
    scores = write_csv(tmp_path / "scores.csv", [["videos/1.avi", CONVERSATION.format(caption="x"), "0.9", "1", "0"]])
    with pytest.raises(LoaderError, match=r"scores\.csv, line 1: a score file .*'foilbench import videocon'"):
        load("videocon", scores)
    questions = write_atp(tmp_path / "atp")["questions"]
    with pytest.raises(LoaderError, match=r"nextqa-atphard\.csv: NExT-QA's questions with short answers only"):
        load("videocon", questions)


def test_two_files_of_one_kind_would_clash(tmp_path):
    (tmp_path / "copy.csv").write_bytes(write_llm_entailment(tmp_path).read_bytes())
    with pytest.raises(LoaderError, match=r"copy\.csv and videocon_llm_entailment\.csv are both llm files"):
        load("videocon", tmp_path)


def test_broken_ssv2_files(tmp_path):
    path = write_ssv2(tmp_path)
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    with pytest.raises(LoaderError, match=r"line 2: 'match' must be 0 or 1, got '2'"):
        load("videocon", write_csv(path, rows[:1] + [rows[1][:2] + ["2"]] + rows[2:]))
    with pytest.raises(LoaderError, match=r"1 \(video, caption\) pairs are absent: .* 3 videos .* 2 captions"):
        load("videocon", write_csv(path, rows[:-1]))
    with pytest.raises(LoaderError, match=r"duplicate pair of video 'videos/104599.avi' and caption 'Covering"):
        load("videocon", write_csv(path, rows[:2] + rows[1:]))
    with pytest.raises(LoaderError, match=r"line 2: caption is not wrapped in VideoCon's entailment prompt"):
        load("videocon", write_csv(path, rows[:1] + [[rows[1][0], "Covering [something]", "1"]] + rows[2:]))


def test_broken_atp_hard_files(tmp_path):
    files = write_atp(tmp_path)
    rows = list(csv.reader(files["eval"].open(encoding="utf-8", newline="")))
    with pytest.raises(LoaderError, match=r"option 2 does not follow option 0 of the same question"):
        load("videocon", write_csv(tmp_path / "x" / "e.csv", rows[:2] + rows[3:]))
    with pytest.raises(LoaderError, match=r"question 'how do the two man play the instrument' has 4 options"):
        load("videocon", write_csv(tmp_path / "x" / "e.csv", rows[:5] + rows[6:]))
    changed = [r[:2] + ["3"] + r[3:] if i == 3 else r for i, r in enumerate(rows)]  # captions span 4 lines
    with pytest.raises(LoaderError, match=r"line 10: video, question or answer changes inside one question"):
        load("videocon", write_csv(tmp_path / "x" / "e.csv", changed))
    bad_answer = [r[:2] + ["7"] + r[3:] if 1 <= i <= 5 else r for i, r in enumerate(rows)]
    with pytest.raises(LoaderError, match=r"line 2: 'answer' must be an option index 0\.\.4, got '7'"):
        load("videocon", write_csv(tmp_path / "x" / "e.csv", bad_answer))
    statements = list(csv.reader(files["statements"].open(encoding="utf-8", newline="")))
    statements[2][2] = "3"
    write_csv(files["statements"], statements)
    with pytest.raises(LoaderError, match=r"nextqa-atphard-statements\.csv, question 1: answer \(\(3,\),\) differs "
                                          r"from the per-option file's \(\(0,\),\)"):
        load("videocon", tmp_path)
    write_csv(files["statements"], statements[:2])
    with pytest.raises(LoaderError, match=r"1 questions, but the per-option file has 3"):
        load("videocon", tmp_path)


def test_broken_question_type_files(tmp_path):
    files = write_atp(tmp_path)
    rows = list(csv.reader(files["questions"].open(encoding="utf-8", newline="")))
    rows[1][7] = "XX"
    write_csv(files["questions"], rows)
    with pytest.raises(LoaderError, match=r"nextqa-atphard\.csv, line 2: unknown question type 'XX'"):
        load("videocon", tmp_path)
    rows[1][7], rows[3][6] = "CH", "0"
    write_csv(files["questions"], rows)
    with pytest.raises(LoaderError, match=r"line 4: duplicate question id: video 3562017845 qid 0 \(first at line 3\)"):
        load("videocon", tmp_path)


@pytest.mark.realdata
def test_real_ssv2_temporal_is_216_videos_by_18_captions(realdata):
    item = load("videocon", realdata / "videocon" / "eval_ssv2_temporal.csv").by_id()["ssv2_temporal"]
    assert (len(item.clips), len(item.texts), sum(map(len, item.truth))) == (216, 18, 216)
    assert all(len(row) == 1 for row in item.truth)  # each video has exactly one true template
    assert sorted(sum(item.truth, ())) == sorted(list(range(18)) * 12)
    assert item.texts[0] == "Covering [something] with [something]" and item.clips[0].path == "videos/104599.avi"
    assert item.truth[0] == (0,)


@pytest.mark.realdata
def test_real_atp_hard_answers_by_hand(realdata):
    items = load("videocon", realdata / "videocon")
    atp = {it.item_id: it for it in items if it.subset == "atp_hard"}
    assert len(atp) == 1846
    expected = {  # read off the real files: the 'answer' column indexes the option statement
        "atp_hard/0": ("1106/4010069381.mp4", "CH", 6, "Play the instrument by rolling the handle."),
        "atp_hard/1": ("0063/2435100235.mp4", "CH", 7, "The man cycling tries to sell the watch to the man in the "
                                                      "trishaw by showing him the watch."),
        "atp_hard/2": ("0033/2834146886.mp4", "TN", 8,
                       "The white dog smells the black dog after going to the cushion."),
        "atp_hard/822": ("1102/3562017845.mp4", "TN", 0, "bird bends down after stepping into the water"),
        "atp_hard/1050": ("1102/3562017845.mp4", "CW", 1, "The bird looked down after stepping into the water."),
    }
    for item_id, (video, qtype, qid, answer) in expected.items():
        it = atp[item_id]
        assert (it.clips[0].path, it.labels["type"], it.labels["qid"], it.texts[it.truth[0][0]]) == (
            video, qtype, qid, answer)
        assert it.labels["type_group"] == qtype[0]
    assert {it.labels["type_group"] for it in atp.values()} == {"C", "T"}


@pytest.mark.realdata
def test_real_io_examples_are_refused_alone_and_skipped_in_the_folder(realdata):
    with pytest.raises(LoaderError, match=r"final_test\.csv, line 1: an inference input example"):
        load("videocon", realdata / "videocon" / "final_test.csv")
    with pytest.raises(LoaderError, match=r"final_test_scores\.csv, line 1: the scores of the inference example.*"
                                          r"nothing to load or import"):
        load("videocon", realdata / "videocon" / "final_test_scores.csv")
