"""The loaders on project-written files in the Hugging-Face-only formats, and on broken inputs."""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from bench.loaders import LoaderError, load

VELOCITI_ROWS = [
    {"video_id": "v_abc_seg_0_10", "test_name": "agent_bind", "event": "Ev1", "pos": "A man runs.",
     "neg": "A woman runs.", "in_subset": True},
    {"video_id": "v_abc_seg_0_10.mp4", "test_name": "chrono", "event": "(Ev1, Ev3)", "pos": "First x. Then y.",
     "neg": "First y. Then x.", "in_subset": False},
    {"video_id": "v_def_seg_10_20", "test_name": "control", "event": "Ev2", "pos": "A dog sits.",
     "neg": "A cat flies.", "in_subset": True},
]


def _write_velociti(folder, fmt, rows=VELOCITI_ROWS):
    path = folder / f"velociti.{fmt}"
    if fmt == "json":
        path.write_text(json.dumps(rows))
    elif fmt == "jsonl":
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    elif fmt == "csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        pd.DataFrame(rows).to_parquet(path)
    return path


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "parquet"])
def test_velociti_current_release_in_every_export(tmp_path, fmt):
    (tmp_path / "v_abc_seg_0_10.mp4").write_bytes(b"")
    items = load("velociti", _write_velociti(tmp_path, fmt), video_root=tmp_path)
    assert [it.item_id for it in items] == ["agent_bind/v_abc_seg_0_10/Ev1/0", "chrono/v_abc_seg_0_10/(Ev1, Ev3)/0",
                                            "control/v_def_seg_10_20/Ev2/0"]
    assert [it.texts for it in items][0] == ("A man runs.", "A woman runs.")
    assert [it.labels["in_subset"] for it in items] == [True, False, True]
    assert [it.clips[0].exists for it in items] == [True, True, False]
    assert load("velociti", tmp_path / f"velociti.{fmt}", subset_only=True).counts() == {"agent_bind": 1, "control": 1}


def test_velociti_unknown_test_and_bad_flag(tmp_path):
    rows = [dict(VELOCITI_ROWS[0], test_name="agent_iden")]
    with pytest.raises(LoaderError, match=r"velociti\.jsonl, line 1: unknown test_name 'agent_iden'"):
        load("velociti", _write_velociti(tmp_path, "jsonl", rows))
    rows = [dict(VELOCITI_ROWS[0], in_subset="maybe")]
    with pytest.raises(LoaderError, match=r"row 0: 'in_subset' must be a boolean"):
        load("velociti", _write_velociti(tmp_path, "json", rows))
    rows = [{k: v for k, v in VELOCITI_ROWS[0].items() if k != "neg"}]
    with pytest.raises(LoaderError, match=r"missing column\(s\) \['neg'\]"):
        load("velociti", _write_velociti(tmp_path, "parquet", rows))


def test_velociti_v1_file_named_after_no_test(tmp_path):
    path = tmp_path / "bogus.csv"
    path.write_text("cap1,cap2,ev,gt,video_id\na,b,Ev1,cap1,v\n")
    with pytest.raises(LoaderError, match="names no VELOCITI test"):
        load("velociti", path)
    path = tmp_path / "coref.csv"
    path.write_text("cap1,cap2,ev,gt,video_id\na,b,Ev1,cap3,v\n")
    with pytest.raises(LoaderError, match=r"coref\.csv, line 2: 'gt' must be 'cap1' or 'cap2'"):
        load("velociti", path)


VIDEOCON_LLM = [
    ["videopath", "source", "caption", "neg_caption", "youtube_key", "split", "misalignment"],
    ["msr-vtt/TrainValVideo/video3094.mp4", "msr-vtt", "lego characters dance to music",
     "lego characters sing to music", "1tCWjXq8ZD8", "test", "action"],
    ["tempo/videos/1524.mp4", "tempo", "the man and dog enter the field then the man detaches leash.",
     "The man detaches leash then the man and dog enter the field", "", "train", "flip"],
]


def _write_csv(path, rows):
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)
    return path


def test_videocon_core_llm_feedback_and_human(tmp_path):
    _write_csv(tmp_path / "videocon_llm_entailment.csv", VIDEOCON_LLM)
    _write_csv(tmp_path / "videocon_llm_feedback.csv", [VIDEOCON_LLM[0] + ["nle"], VIDEOCON_LLM[1] + ["sing vs dance"]])
    _write_csv(tmp_path / "videocon_human.csv", [
        ["video_url", "caption", "neg_caption", "nle", "hard"],
        ["https://bucket.s3.amazonaws.com/v_x.mp4", "a boy jumps", "a boy sits", "he jumps", "True"],
    ])
    items = load("videocon", tmp_path, video_root=tmp_path)
    assert items.counts() == {"human": 1, "llm_feedback": 1, "llm": 2}
    llm = items.by_id()
    assert llm["llm/0"].labels["misalignment"] == "action" and llm["llm/1"].labels["youtube_key"] is None
    assert llm["llm/1"].clips[0].path == str(tmp_path / "tempo/videos/1524.mp4")
    assert llm["llm_feedback/0"].labels["nle"] == "sing vs dance"
    assert llm["human/0"].labels["hard"] is True and llm["human/0"].clips[0].path.endswith("/v_x.mp4")
    assert load("videocon", tmp_path / "videocon_llm_entailment.csv", split="test").counts() == {"llm": 1}


def test_videocon_bad_inputs(tmp_path):
    bad = [VIDEOCON_LLM[0], VIDEOCON_LLM[1][:6] + ["teleport"]]
    with pytest.raises(LoaderError, match=r"line 2: unknown misalignment 'teleport'"):
        load("videocon", _write_csv(tmp_path / "a.csv", bad))
    with pytest.raises(LoaderError, match=r"matches none of the released formats"):
        load("videocon", _write_csv(tmp_path / "b.csv", [["x", "y"], ["1", "2"]]))
    ssv2 = [["videopath", "caption", "match"], ["v1.avi", "no prompt here", "1"]]
    with pytest.raises(LoaderError, match="not wrapped in VideoCon's entailment prompt"):
        load("videocon", _write_csv(tmp_path / "c.csv", ssv2))


def _vino_csv(folder, rows=None):
    rows = rows or [
        ["0", "action", "", "QINQHWlQIzU", "5", "15", "a toddler plays before he drinks", "QINQHWlQIzU", "10", "20",
         "a toddler drinks before he plays"],
        ["1", "object", "spatial;interaction", "abc", "0", "5", "a cup left of a bowl", "abd", "0", "5",
         "a bowl left of a cup"],
    ]
    header = ["index", "major", "minor", "pos_vid", "pos_start", "pos_end", "pos_cap", "neg_vid", "neg_start",
              "neg_end", "neg_cap"]
    return _write_csv(folder / "vinoground.csv", [header] + rows)


def _vino_json(folder, name, n=2, extra=()):
    entries = [{"idx": f"{i}_{side}", "video_name": f"vinoground_videos/{i}_{side}.mp4",
                "question": "Which caption best describes this video?\nA. x\nB. y", "GT": "A" if side == "pos" else "B"}
               for i in range(n) for side in ("pos", "neg")] + list(extra)
    (folder / name).write_text(json.dumps(entries))


def test_vinoground_pairs_with_both_score_files(tmp_path):
    _vino_csv(tmp_path)
    _vino_json(tmp_path, "vinoground_textscore.json")
    _vino_json(tmp_path, "vinoground_videoscore.json")
    items = load("vinoground", tmp_path, video_root=tmp_path)
    assert items.counts() == {"action": 1, "object": 1}
    pair = items.by_id()["1"]
    assert pair.truth == ((0,), (1,)) and pair.texts == ("a cup left of a bowl", "a bowl left of a cup")
    assert pair.labels["minor"] == ["spatial", "interaction"] and items.by_id()["0"].labels["minor"] == []
    assert [c.path for c in pair.clips] == [str(tmp_path / "vinoground_videos/1_pos.mp4"),
                                            str(tmp_path / "vinoground_videos/1_neg.mp4")]
    assert pair.labels["text_neg_gt"] == "B" and pair.labels["pos_start"] == 0.0
    assert items.to_frame().shape[0] == 2


def test_vinoground_inconsistent_or_broken_files(tmp_path):
    _vino_csv(tmp_path)
    _vino_json(tmp_path, "vinoground_textscore.json", extra=[{"idx": "7_pos", "video_name": "x", "question": "q",
                                                               "GT": "A"}])
    with pytest.raises(LoaderError, match=r"entry 4: 'idx' '7_pos' names pair 7, which vinoground.csv does not have"):
        load("vinoground", tmp_path)
    (tmp_path / "vinoground_textscore.json").write_text('[{"idx": "0_pos", ')
    with pytest.raises(LoaderError, match=r"vinoground_textscore\.json, line 1 column \d+: malformed JSON"):
        load("vinoground", tmp_path)
    (tmp_path / "vinoground_textscore.json").unlink()
    _vino_csv(tmp_path, [["0", "colour", "", "a", "0", "1", "x", "b", "0", "1", "y"]])
    with pytest.raises(LoaderError, match=r"line 2: unknown major category 'colour'"):
        load("vinoground", tmp_path)
    _vino_csv(tmp_path, [["0", "action", "", "a", "0", "1", "x", "b", "0", "1", "y"]] * 2)
    with pytest.raises(LoaderError, match=r"line 3: duplicate index 0"):
        load("vinoground", tmp_path)


def _vilma_record(**overrides):
    record = {
        "dataset": "QUVA", "video_file": "000_rope_beach.mp4", "start_time": 13, "end_time": 56, "time_unit": "pts",
        "normalized": True, "caption": "a man skips rope exactly three times.",
        "foils": ["a man skips rope exactly nine times."],
        "proficiency": {"caption": "a man skips rope.", "foils": ["a man climbs a rope."],
                        "human": {"foil": 0, "caption": 1, "other": 0}},
        "mturk": {"foil": 0, "caption": 3, "other": 0},
    }
    record.update(overrides)
    return record


def test_vilma_broken_inputs(tmp_path):
    path = tmp_path / "counting-easy-spelled-pts.json"
    path.write_text(json.dumps({"a": _vilma_record()})[:-20])
    with pytest.raises(LoaderError, match=r"counting-easy-spelled-pts\.json, line 1 column \d+: malformed JSON"):
        load("vilma", path)
    path.write_text('{"a": {}, "a": {}}')
    with pytest.raises(LoaderError, match=r"key 'a': duplicate key"):
        load("vilma", path)
    record = _vilma_record()
    del record["foils"]
    path.write_text(json.dumps({"a": record}))
    with pytest.raises(LoaderError, match=r"key 'a': missing field 'foils'"):
        load("vilma", path)
    path.write_text(json.dumps({"a": _vilma_record(caption=3)}))
    with pytest.raises(LoaderError, match=r"field 'caption' must be str, got int"):
        load("vilma", path)
    path.write_text(json.dumps({"a": _vilma_record(dataset="Kinetics")}))
    with pytest.raises(LoaderError, match=r"unknown dataset 'Kinetics'"):
        load("vilma", path)
    path.write_text(json.dumps({"a": _vilma_record(mturk={"caption": "three", "foil": 0})}))
    with pytest.raises(LoaderError, match=r"'mturk.caption' must be an integer vote count"):
        load("vilma", path)
    path.write_text("")
    with pytest.raises(LoaderError, match="the file is empty"):
        load("vilma", path)


def test_vilma_validity_filter_is_switchable(tmp_path):
    path = tmp_path / "relations.json"
    invalid = _vilma_record(mturk={"foil": 2, "caption": 1, "other": 0})
    path.write_text(json.dumps({"0": _vilma_record(), "1": invalid}))
    assert load("vilma", path).counts() == {"relations": 1}
    every = load("vilma", path, valid_only=False)
    assert every.counts() == {"relations": 2}
    assert [it.labels["valid"] for it in every if it.role == "main"] == [True, False]


def test_vitatecs_broken_inputs(tmp_path):
    path = tmp_path / "Direction.jsonl"
    good = {"src_dataset": "MSRVTT", "video_name": "video1.mp4", "caption": "a", "counterfactual": "b",
            "aspect": "Direction"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "aspect": "Speed"}) + "\n")
    with pytest.raises(LoaderError, match=r"Direction\.jsonl, line 2: unknown aspect 'Speed'"):
        load("vitatecs", path)
    path.write_text(json.dumps({**good, "src_dataset": "VATEX", "video_name": "short.mp4"}) + "\n")
    with pytest.raises(LoaderError, match=r"line 1: VATEX video name 'short.mp4'"):
        load("vitatecs", path)
    path.write_text(json.dumps({k: v for k, v in good.items() if k != "caption"}) + "\n")
    with pytest.raises(LoaderError, match=r"line 1: missing field 'caption'"):
        load("vitatecs", path)


def test_unknown_benchmark_and_missing_path(tmp_path):
    with pytest.raises(ValueError, match="unknown benchmark 'vbench'"):
        load("vbench", tmp_path)
    with pytest.raises(FileNotFoundError, match="no such file or folder"):
        load("vitatecs", tmp_path / "nope")
