"""The Vinoground loader on project-written files in the released formats, and on broken or inconsistent ones."""

from __future__ import annotations

import pytest
from fixtures_vinoground import HEADER, ROWS, text_entries, video_entries, write_csv, write_json, write_vinoground

from bench.loaders import LoaderError, load


def _touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_pairs_become_two_by_two_items_with_the_csv_labels(tmp_path):
    _touch(tmp_path / "videos" / "vinoground_videos" / "1_pos.mp4")
    items = load("vinoground", write_vinoground(tmp_path / "data"), video_root=tmp_path / "videos")
    assert [it.item_id for it in items] == ["0", "1", "2"]
    assert items.counts() == {"action": 1, "object": 1, "viewpoint": 1}
    pair = items.by_id()["1"]
    assert pair.texts == ("a cup left of a bowl", "a bowl left of a cup") and pair.truth == ((0,), (1,))
    assert [c.path for c in pair.clips] == [str(tmp_path / "videos/vinoground_videos/1_pos.mp4"),
                                            str(tmp_path / "videos/vinoground_videos/1_neg.mp4")]
    assert [c.exists for c in pair.clips] == [True, False]
    assert pair.labels["minor"] == ["spatial", "interaction"] and items.by_id()["0"].labels["minor"] == []
    assert (pair.labels["pos_vid"], pair.labels["neg_vid"]) == ("abc", "abd")
    assert (pair.labels["pos_start"], pair.labels["pos_end"], pair.labels["neg_end"]) == (0.0, 5.0, 5.5)
    assert items.by_id()["2"].labels["pos_start"] is None  # empty offsets stay unknown
    frame = items.to_frame()
    assert list(frame["major"]) == ["action", "object", "viewpoint"] and list(frame["n_clips"]) == [2, 2, 2]


def test_score_questions_ride_along_and_concatenated_videos_resolve(tmp_path):
    _touch(tmp_path / "videos" / "vinoground_videos_concated" / "0.mp4")
    items = load("vinoground", write_vinoground(tmp_path / "data"), video_root=tmp_path / "videos")
    pair = items.by_id()["0"]
    assert pair.labels["text_pos_question"] == text_entries()[0]["question"]
    assert (pair.labels["text_pos_gt"], pair.labels["text_neg_gt"]) == ("A", "B")
    assert pair.labels["video_neg_question"] == video_entries()[1]["question"] and pair.labels["video_neg_gt"] == "B"
    assert pair.labels["text_neg_video"] == str(tmp_path / "videos/vinoground_videos/0_neg.mp4")
    assert pair.labels["video_pos_video"] == str(tmp_path / "videos/vinoground_videos_concated/0.mp4")
    assert items.notes == ["vinoground_textscore.json: 6 questions", "vinoground_videoscore.json: 6 questions",
                           "vinoground_videoscore.json: 2 concatenated videos missing under the video root"]


def test_any_number_of_pairs_and_the_lmms_eval_layout(tmp_path):
    rows = [ROWS[1][:], ROWS[0][:]]
    rows[0][0], rows[1][0] = "41", "7"
    write_csv(tmp_path / "data", rows)
    videos = tmp_path / "videos"
    write_json(videos / "vinoground_videos" / "vinoground_textscore.json", text_entries(rows))
    concat = video_entries(rows)
    for entry in concat:
        entry["video_name"] = entry["video_name"].rsplit("/", 1)[1]  # named bare, inside the concatenated folder
    write_json(videos / "vinoground_videos_concated" / "vinoground_videoscore.json", concat)
    items = load("vinoground", tmp_path / "data", video_root=videos)
    assert [it.item_id for it in items] == ["41", "7"]
    assert items.by_id()["7"].labels["video_pos_video"] == str(videos / "vinoground_videos_concated/7.mp4")
    assert items.notes[:2] == ["vinoground_textscore.json: 4 questions", "vinoground_videoscore.json: 4 questions"]


def test_without_score_files_the_pairs_still_load_and_the_notes_say_so(tmp_path):
    items = load("vinoground", write_csv(tmp_path))
    assert len(items) == 3 and "text_pos_question" not in items.items[0].labels
    assert items.notes[0].startswith("vinoground_textscore.json not found beside vinoground.csv")
    assert [c.path for c in items.items[0].clips] == ["vinoground_videos/0_pos.mp4", "vinoground_videos/0_neg.mp4"]
    assert [c.exists for c in items.items[0].clips] == [None, None]


def test_order_and_answer_inconsistencies_are_counted_in_the_notes(tmp_path):
    write_vinoground(tmp_path)
    entries = text_entries()
    entries[2]["GT"], entries[3]["GT"] = "B", "A"  # pair 1's answers swapped
    write_json(tmp_path / "vinoground_textscore.json", list(reversed(entries)))
    notes = load("vinoground", tmp_path).notes
    assert notes[0].startswith("vinoground_textscore.json: 6 questions (not in the official order 0_pos, 0_neg")
    assert "vinoground_textscore.json: 2 questions whose GT option is not the caption of their video (first: 1_pos)" \
        in notes


@pytest.mark.parametrize("change, message", [
    (lambda e: e.append({"idx": "7_pos", "video_name": "vinoground_videos/7_pos.mp4", "question": "q", "GT": "A"}),
     r"entry 6: 'idx' '7_pos' names pair 7, which vinoground.csv does not have"),
    (lambda e: e.pop(3), r": no question for '1_neg' \(pair 1 of vinoground.csv\)"),
    (lambda e: e.append(dict(e[0])), r"entry 6: duplicate idx '0_pos'"),
    (lambda e: e[1].update(GT="C"), r"entry 1: 'GT' must be 'A' or 'B', got 'C'"),
    (lambda e: e[1].update(idx="0-neg"), r"entry 1: 'idx' must look like '<pair>_pos' or '<pair>_neg', got '0-neg'"),
    (lambda e: e[4].pop("question"), r"entry 4: missing field\(s\) \['question'\]"),
    (lambda e: e[4].update(question=""), r"entry 4: 'question' must be a non-empty string"),
    (lambda e: e[2].update(video_name="vinoground_videos/2_pos.mp4"),
     r"entry 2: 'video_name' 'vinoground_videos/2_pos.mp4' is not the clip of '1_pos'"),
    (lambda e: e.__setitem__(0, "0_pos"), r"entry 0: expected an object, got str"),
])
def test_score_files_that_disagree_with_the_csv(tmp_path, change, message):
    write_vinoground(tmp_path)
    entries = text_entries()
    change(entries)
    write_json(tmp_path / "vinoground_textscore.json", entries)
    with pytest.raises(LoaderError, match=r"vinoground_textscore\.json.*" + message):
        load("vinoground", tmp_path)


def test_malformed_score_files(tmp_path):
    write_vinoground(tmp_path)
    (tmp_path / "vinoground_videoscore.json").write_text('[{"idx": "0_pos", ')
    with pytest.raises(LoaderError, match=r"vinoground_videoscore\.json, line 1 column \d+: malformed JSON"):
        load("vinoground", tmp_path)
    write_json(tmp_path / "vinoground_videoscore.json", {"0_pos": "A"})
    with pytest.raises(LoaderError, match=r"vinoground_videoscore\.json: expected a JSON list of \{idx, video_name"):
        load("vinoground", tmp_path)
    write_json(tmp_path / "vinoground_videoscore.json", [])
    with pytest.raises(LoaderError, match=r"vinoground_videoscore\.json: the list is empty"):
        load("vinoground", tmp_path)


@pytest.mark.parametrize("column, value, message", [
    ("major", "colour",
     r"line 3: unknown major category 'colour'; expected one of \['object', 'action', 'viewpoint'\]"),
    ("minor", "spatial;tempo", r"line 3: unknown minor categor\(y/ies\) \['tempo'\]"),
    ("index", "one", r"line 3: 'index' must be a pair number, got 'one'"),
    ("index", "0", r"line 3: duplicate index 0 \(first at line 2\)"),
    ("pos_start", "5s", r"line 3: 'pos_start' must be a finite number of seconds >= 0, got '5s'"),
    ("pos_start", "nan", r"line 3: 'pos_start' must be a finite number of seconds >= 0, got 'nan'"),
    ("pos_end", "inf", r"line 3: 'pos_end' must be a finite number of seconds >= 0, got 'inf'"),
    ("neg_end", "-1", r"line 3: 'neg_end' must be a finite number of seconds >= 0, got '-1'"),
    ("neg_start", "9", r"line 3: 'neg_end' 5\.5 is before 'neg_start' 9\.0"),
    ("neg_cap", " ", r"line 3: empty 'neg_cap'; expected a caption"),
])
def test_bad_csv_values_name_the_line(tmp_path, column, value, message):
    rows = [list(r) for r in ROWS]
    rows[1][HEADER.index(column)] = value
    with pytest.raises(LoaderError, match=r"vinoground\.csv, " + message):
        load("vinoground", write_csv(tmp_path, rows))


def test_broken_csv_files_and_paths(tmp_path):
    with pytest.raises(LoaderError, match=r"line 1 \(header\): missing column\(s\) \['neg_cap'\]"):
        load("vinoground", write_csv(tmp_path, [r[:-1] for r in ROWS], HEADER[:-1]))
    with pytest.raises(LoaderError, match=r"vinoground\.csv: the file has no data rows"):
        load("vinoground", write_csv(tmp_path, []))
    (tmp_path / "vinoground.csv").write_text("")
    with pytest.raises(LoaderError, match=r"vinoground\.csv: the file is empty"):
        load("vinoground", tmp_path)
    with pytest.raises(LoaderError, match=r"give vinoground\.csv or its folder"):
        load("vinoground", write_json(tmp_path / "vinoground_textscore.json", text_entries()))
    (tmp_path / "empty").mkdir()
    with pytest.raises(LoaderError, match=r"empty: no vinoground\.csv in this folder"):
        load("vinoground", tmp_path / "empty")
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("vinoground", tmp_path / "absent")
