"""TemporalBench metrics against the official scoring (``get_qa_acc.py``) on hand-made responses, per file (short,
long), source dataset and category, and the rules for logit ties and score tables."""

from __future__ import annotations

import json
import math

import pytest
from fixtures_temporalbench import long_entries, short_entries, write_temporalbench

from bench.importers.common import parse_letter
from bench.importers.temporalbench import import_temporalbench
from bench.items import Clip, Item
from bench.loaders import load
from bench.metrics import Settings, item_correct, metric_table
from bench.store.schema import choice_frame, pair_frame

FAST = Settings(n_boot=200)


def _official(entries: list[dict], responses: dict[str, str]) -> dict:
    """What ``get_qa_acc.py`` prints for one QA file, in %: binary accuracy (the response's first character against
    GT, case aside, over every prediction) and MBA (videos with every question right), overall, per dataset and
    (short files) per category, where MBA groups a category's questions by video."""
    gt = {e["idx"]: e for e in entries}
    found: dict = {}

    def add(key, video, right):
        found.setdefault(key, ([], {}))
        found[key][0].append(right)
        found[key][1][video] = found[key][1].get(video, True) and right

    for idx, response in responses.items():
        entry = gt[idx]
        right = entry["GT"].lower() == response[0].lower()
        add("all", entry["video_name"], right)
        add(("dataset", entry["dataset"]), entry["video_name"], right)
        if entry.get("category"):
            add(("category", entry["category"]), entry["video_name"], right)
    return {key: (100 * sum(b) / len(b), 100 * sum(m.values()) / len(m)) for key, (b, m) in found.items()}


SHORT = {  # responses to fixtures_temporalbench.short_entries(), in order: GT A, B, A, B, A
    "short_video/COIN/abc_start_1.0_end_9.5.mp4_0": "A",
    "short_video/COIN/abc_start_1.0_end_9.5.mp4_1": "b) he stirs",
    "short_video/COIN/xyz_start_0.0_end_7.0.mp4_0": "The answer is A",    # first character T: wrong
    "short_video/FineGym/g1_start_3.2_end_8.0.mp4_0": "B",
    "short_video/FineGym/g1_start_3.2_end_8.0.mp4_1": " A",               # first character a space: wrong
}
LONG = {"long_video/COIN/abc.mp4_0": "a", "long_video/COIN/abc.mp4_1": "B."}


@pytest.fixture()
def imported(tmp_path):
    items = load("temporalbench", write_temporalbench(tmp_path / "tb")).items
    path = tmp_path / "llava-onevision-qwen2-7b-ov-frame1.jsonl"
    path.write_text("".join(json.dumps({"idx": k, "response": v}) + "\n" for k, v in {**SHORT, **LONG}.items()))
    _, choice, measure = import_temporalbench(items, [path])
    assert measure == "answer"
    return items, choice_frame(choice)


def test_each_file_scores_as_get_qa_acc_scores_it(imported):
    items, choice = imported
    for length, entries, responses in (("short", short_entries(), SHORT), ("long", long_entries(), LONG)):
        official = _official(entries, responses)
        mine = [it for it in items if it.subset == length]
        table = metric_table(mine, None, choice, settings=FAST).set_index(["metric", "by", "subset"])
        assert 100 * table.loc[("binary accuracy", "all", "all"), "value"] == pytest.approx(official["all"][0])
        assert 100 * table.loc[("MBA", "all", "all"), "value"] == pytest.approx(official["all"][1])
        for key, (binary, mba) in official.items():
            if key == "all":
                continue
            assert 100 * table.loc[("binary accuracy", *key), "value"] == pytest.approx(binary), key
            assert 100 * table.loc[("MBA", *key), "value"] == pytest.approx(mba), key
        assert not any(by == "category" for _, by, _ in table.index) or length == "short"
    both = metric_table(items, None, choice, settings=FAST).set_index(["metric", "by", "subset"])
    assert both.loc[("MBA", "subset", "short"), "n"] == 3 and both.loc[("MBA", "subset", "long"), "n"] == 1
    assert both.loc[("binary accuracy", "all", "all"), "n_unparsed"] == 2  # "The answer is A" and " A"
    assert both.loc[("MBA", "all", "all"), "chance"] == pytest.approx((1 / 4 + 1 / 2 + 1 / 4 + 1 / 4) / 4)


def test_mba_by_category_groups_a_video_s_questions_of_that_category():
    # one video, two questions of one category and one of another: by category the groups are (category, video)
    items = [Item("temporalbench", f"v.mp4_{k}", "short", (Clip("v.mp4"),), ("t", "f"), ((0,),),
                  labels={"video_name": "v.mp4", "dataset": "COIN", "category": c})
             for k, c in enumerate(("Action Order", "Action Order", "Action Type"))]
    choice = choice_frame([{"item_id": f"v.mp4_{k}", "axis": "text", "query": 0, "options": [0, 1],
                            "logits": [math.nan] * 2, "choice": c, "answer": ""} for k, c in enumerate((0, 1, 0))])
    table = metric_table(items, None, choice, settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("MBA", "all", "all"), ("value", "n")].tolist() == [0.0, 1]
    assert table.loc[("MBA", "category", "Action Order"), "value"] == 0.0
    assert table.loc[("MBA", "category", "Action Type"), ("value", "n")].tolist() == [1.0, 1]
    assert table.loc[("binary accuracy", "category", "Action Order"), "value"] == 0.5


def test_responses_are_read_by_their_first_character():
    assert [parse_letter(r, "AB") for r in ("A", "b. then", "B", " A", "", "The answer is B", "c")] == \
        [0, 1, 1, -1, -1, -1, -1]


def test_lmms_eval_samples_and_broken_files(tmp_path):
    items = load("temporalbench", write_temporalbench(tmp_path / "tb")).items
    sample = {"doc_id": 0, "temporalbench_score": {"item": short_entries()[0], "pred": "B"}}
    path = tmp_path / "samples.jsonl"
    path.write_text(json.dumps(sample) + "\n")
    _, choice, _ = import_temporalbench(items, [path])
    assert [(r["item_id"], r["choice"]) for r in choice] == [(short_entries()[0]["idx"], 1)]
    from bench.loaders import LoaderError

    path.write_text(json.dumps({"idx": "nope", "response": "A"}) + "\n")
    with pytest.raises(LoaderError, match="idx 'nope' is no question"):
        import_temporalbench(items, [path])
    path.write_text(json.dumps({"question": "A"}) + "\n")
    with pytest.raises(LoaderError, match=r"expected \{idx, response\}"):
        import_temporalbench(items, [path])


def _item(key, video, truth=0):
    return Item("temporalbench", key, "short", (Clip(video),), ("a", "b"), ((truth,),),
                labels={"video_name": video, "dataset": "COIN", "category": "Others"})


def test_logit_ties_and_score_ties():
    items = [_item("v_0", "v"), _item("v_1", "v", truth=1), _item("w_0", "w")]
    choice = choice_frame([
        {"item_id": "v_0", "axis": "text", "query": 0, "options": [0, 1], "logits": [1.0, 1.0], "choice": 0,
         "answer": ""},
        {"item_id": "v_0", "axis": "text", "query": 0, "options": [1, 0], "logits": [0.0, 1.0], "choice": 0,
         "answer": ""},
        {"item_id": "v_1", "axis": "text", "query": 0, "options": [0, 1], "logits": [0.0, 2.0], "choice": 1,
         "answer": ""},
        {"item_id": "v_1", "axis": "text", "query": 0, "options": [1, 0], "logits": [2.0, 0.0], "choice": 1,
         "answer": ""},
        {"item_id": "w_0", "axis": "text", "query": 0, "options": [0, 1], "logits": [0.0, 1.0], "choice": 1,
         "answer": ""}])
    official = item_correct(items, None, choice)
    assert official["binary accuracy"].tolist() == [1, 1, 0]  # a tie goes to the first letter, A
    assert official["MBA"].dropna().tolist() == [1, 0]
    assert item_correct(items, None, choice, ties="strict")["MBA"].dropna().tolist() == [0, 0]
    assert item_correct(items, None, choice, ties="expected")["MBA"].dropna().tolist() == [0.5, 0]
    scores = pair_frame([{"item_id": k, "clip": 0, "text": t, "score": s}
                         for k, pair in (("v_0", (0.5, 0.5)), ("v_1", (0.1, 0.9)), ("w_0", (0.9, 0.1)))
                         for t, s in enumerate(pair)])
    assert item_correct(items, scores)["binary accuracy"].tolist() == [0, 1, 1]  # no released code: ties fail
    assert item_correct(items, scores, ties="expected")["MBA"].dropna().tolist() == [0.5, 1]
