"""MVP metrics against the official scoring on hand-made answers (unparsed ones and logit ties included), the
answer parser against hand-read responses, and the score-table rules."""

from __future__ import annotations

import json
import math
from collections import defaultdict

import pytest
from fixtures_mvp import write_mvp

from bench.importers.mvp import import_mvp, parse_answer
from bench.items import Clip, Item
from bench.loaders import load
from bench.loaders.mvp import official_order, pair_id
from bench.metrics import Settings, item_correct, metric_table
from bench.store.schema import choice_frame, pair_frame

FAST = Settings(n_boot=200)


@pytest.mark.parametrize("response, picked", [
    ("Answer: B", 1), ("A", 0), ("answer: a", 0), ("(B)", 1), ("The answer is B.", 1), ("Option b is right", 1),
    # every match counts and the second wins (utils.py L104): the article "a" after the answer is the second match
    ("B, because a ball hits it", 0), ("Answer: A. A ball hits a cube.", 0),
    ("I am not sure", None), ("", None), ("C", None),
])
def test_answers_are_read_as_extract_pred_reads_them(response, picked):
    assert parse_answer(response) == picked


def _official(rows: list[tuple[str, str, int]]) -> dict[str, tuple[float, float]]:
    """What ``compute_metrics`` gives per subset, from (subset, video_id, rating) rows: single accuracy = ratings
    right / questions, pair accuracy = pairs (video_id without its last '_' part) with both right / pairs; and the
    task group's unweighted mean over the subsets (mvp.yaml), in %."""
    per_subset = defaultdict(list)
    for subset, video_id, rating in rows:
        per_subset[subset].append((video_id, rating))
    found = {}
    for subset, results in per_subset.items():
        pairs = defaultdict(list)
        for video_id, rating in results:
            pairs[pair_id(video_id)].append(rating)
        single = 100 * sum(r == 1 for _, r in results) / len(results)
        paired = 100 * sum(all(r == 1 for r in both) for both in pairs.values()) / len(pairs)
        found[subset] = (single, paired)
    found["mean"] = tuple(sum(v[k] for v in found.values()) / len(found) for k in (0, 1))
    return found


# responses to each question of fixtures_mvp.write_mvp, and what each one rates (read by hand: see the parser test)
RESPONSES = {
    "clevrer_17_0": ("Answer: A", 1),       # yes, its answer
    "clevrer_17_1": ("Answer: B", 1),       # no, its answer: the pair is right
    "intphys_O1_02_0": ("(A) yes", 0),      # its answer is "no" (B)
    "intphys_O1_02_1": ("I cannot say", 0),  # unparsed: wrong, and counted
    "star_Interaction_T1_2_0": ("A", 1),
    "star_Interaction_T1_2_1": ("B, as a door would", 0),  # the second match, "a", wins: read as A
}


def test_imported_answers_give_the_official_single_and_paired_accuracy(tmp_path):
    items = load("mvp", write_mvp(tmp_path / "mvp")).items
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"video_id": v, "response": r}) + "\n" for v, (r, _) in RESPONSES.items()))
    _, choice, measure = import_mvp(items, [answers])
    assert measure == "answer" and sum(r["choice"] == -1 for r in choice) == 1
    table = metric_table(items, None, choice_frame(choice), settings=FAST).set_index(["metric", "by", "subset"])
    subset_of = {vid: it.subset for it in items for vid in it.labels["video_ids"]}
    official = _official([(subset_of[v], v, rating) for v, (_, rating) in RESPONSES.items()])
    for subset in ("intuitive_physics", "temporal_reasoning"):
        assert 100 * table.loc[("single accuracy", "subset", subset), "value"] == pytest.approx(official[subset][0])
        assert 100 * table.loc[("paired accuracy", "subset", subset), "value"] == pytest.approx(official[subset][1])
    assert 100 * table.loc[("single accuracy", "average", "mean of subsets"), "value"] == \
        pytest.approx(official["mean"][0])
    assert 100 * table.loc[("paired accuracy", "average", "mean of subsets"), "value"] == \
        pytest.approx(official["mean"][1])
    assert table.loc[("paired accuracy", "all", "all"), "n_unparsed"] == 1
    assert table.loc[("paired accuracy", "all", "all"), "chance"] == 0.25
    assert table.loc[("single accuracy", "all", "all"), "chance"] == 0.5


def test_the_leaderboard_submission_names_the_chosen_option(tmp_path):
    items = load("mvp", write_mvp(tmp_path / "mvp")).items
    rows = [{"data_name": "mvp", "row_id": "clevrer_17_0", "model_answer": "yes", "task": "intuitive_physics"},
            {"data_name": "mvp", "row_id": "clevrer_17_1", "model_answer": "yes", "task": "intuitive_physics"},
            {"data_name": "mvp", "row_id": "intphys_O1_02_0", "model_answer": "perhaps", "task": "intuitive_physics"}]
    path = tmp_path / "mvp_intuitive_physics_valid.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _, choice, _ = import_mvp(items, [path])
    assert [r["choice"] for r in choice] == [0, 0, -1] and [r["query"] for r in choice] == [0, 1, 0]


def _pair(key: str, orders=((0, 1), (0, 1)), truth=((0,), (1,)), subset="intuitive_physics") -> Item:
    return Item("mvp", key, subset, (Clip(f"{key}_0.mp4"), Clip(f"{key}_1.mp4")), ("yes", "no"), truth,
                labels={"question": "q?", "orders": [list(o) for o in orders], "video_ids": [f"{key}_0", f"{key}_1"],
                        "source": "clevrer"})


def _asked(key: str, clip: int, options: list[int], logits: list[float]) -> dict:
    chosen = options[max(range(len(options)), key=lambda k: (logits[k], -k))]  # the first of tied letters
    return {"item_id": key, "axis": "text", "query": clip, "options": options, "logits": logits, "choice": chosen,
            "answer": ""}


def test_letter_logits_in_both_orders_and_their_ties():
    items = [_pair("p0"), _pair("p1", orders=((0, 1), (1, 0)))]
    rows = [_asked("p0", 0, [0, 1], [2.0, 1.0]), _asked("p0", 0, [1, 0], [0.0, 1.0]),   # clip 0: yes, both orders
            _asked("p0", 1, [0, 1], [1.0, 1.0]), _asked("p0", 1, [1, 0], [3.0, 0.0]),   # clip 1: tie at A (= yes)
            _asked("p1", 0, [0, 1], [1.0, 0.0]), _asked("p1", 0, [1, 0], [1.0, 0.0]),   # clip 0: yes, then no
            _asked("p1", 1, [0, 1], [0.0, 1.0]), _asked("p1", 1, [1, 0], [5.0, 5.0])]   # clip 1: official order [1, 0]
    choice = choice_frame(rows)
    official = item_correct(items, None, choice)
    # p0 clip 1 in its official order [0, 1]: a tie, the first letter (A = "yes") chosen, wrong; p1 clip 1 in its
    # official order [1, 0]: a tie, the first letter (A = "no") chosen, right
    assert official["single accuracy"].tolist() == [0.5, 1.0] and official["paired accuracy"].tolist() == [0, 1]
    assert official["single accuracy (both orders)"].tolist() == [0.5, 0.5]
    strict = item_correct(items, None, choice, ties="strict")
    assert strict["paired accuracy"].tolist() == [0, 0] and strict["single accuracy"].tolist() == [0.5, 0.5]
    expected = item_correct(items, None, choice, ties="expected")
    assert expected["paired accuracy"].tolist() == [0.5, 0.5] and expected["single accuracy"].tolist() == [0.75, 0.75]
    table = metric_table(items, None, choice, settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("paired accuracy (both orders)", "all", "all"), "chance"] == pytest.approx(1 / 16)
    assert table.loc[("paired accuracy", "all", "all"), "n_tie"] == 2  # a tie decided each pair


def test_scores_compare_each_clip_s_options_strictly_and_text_only_scores_never_win_a_pair():
    items = [_pair("p0"), _pair("p1"), _pair("p2"), _pair("p3", subset="temporal_reasoning")]

    def cells(key, m):
        return [{"item_id": key, "clip": c, "text": t, "score": m[c][t]} for c in range(2) for t in range(2)]

    pair = pair_frame(cells("p0", [[0.9, 0.1], [0.2, 0.8]])   # both right
                      + cells("p1", [[0.9, 0.1], [0.9, 0.1]])  # the same option for both videos: one right
                      + cells("p2", [[0.5, 0.5], [0.2, 0.8]])  # a tie for clip 0
                      + cells("p3", [[math.nan, 0.1], [0.2, 0.8]]))
    official = item_correct(items, pair)
    assert official["paired accuracy"].tolist() == [1, 0, 0, 0]
    assert official["single accuracy"].tolist() == [1, 0.5, 0.5, 0.5]
    expected = item_correct(items, pair, ties="expected")
    assert expected.loc["p2", "paired accuracy"] == 0.5 and expected.loc["p2", "single accuracy"] == 0.75
    table = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("paired accuracy", "all", "all"), "n_nan"] == 1
    assert table.loc[("paired accuracy", "average", "mean of subsets"), "value"] == pytest.approx((1 / 3 + 0) / 2)
    blind = pair_frame([{"item_id": it.item_id, "clip": -1, "text": t, "score": s}
                        for it in items for t, s in enumerate((0.3, 0.7))])
    text_only = item_correct(items, blind)
    assert (text_only["paired accuracy"] == 0).all() and (text_only["single accuracy"] == 0.5).all()


def test_official_order_defaults_to_the_texts_order():
    item = Item("mvp", "x", "intuitive_physics", (Clip("a"), Clip("b")), ("yes", "no"), ((0,), (1,)))
    assert official_order(item, 1) == [0, 1]
