"""Vinoground metrics: text / video / group scores from similarity matrices and from A/B answers, by category."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.items import Clip, Item
from bench.metrics import vinoground
from bench.metrics.dispatch import item_correct
from bench.metrics import Settings, metric_table
from bench.store.schema import choice_frame, pair_frame

FAST = Settings(n_boot=200)


def _item(i, major="action", minor=()):
    return Item("vinoground", str(i), major, (Clip(f"{i}_pos.mp4"), Clip(f"{i}_neg.mp4")),
                (f"pos caption {i}", f"neg caption {i}"), ((0,), (1,)), labels={"major": major, "minor": list(minor)})


def _matrix(key, m):
    return [{"item_id": key, "clip": c, "text": t, "score": m[c][t]} for c in range(2) for t in range(2)]


@pytest.fixture()
def similarity():
    items = [_item(0, "action", ["cyclical"]), _item(1, "object", ["cyclical", "spatial"]), _item(2, "object"),
             _item(3, "viewpoint"), _item(4, "action")]
    rows = (_matrix("0", [[0.9, 0.1], [0.2, 0.8]])      # text, video, group
            + _matrix("1", [[0.9, 0.85], [0.95, 0.99]])  # text only: caption 0 scores higher with clip 1
            + _matrix("2", [[0.3, 0.5], [0.2, 0.1]])    # neither: clip 0 prefers caption 1, caption 1 clip 0
            + _matrix("3", [[0.5, 0.5], [0.1, 0.9]])    # tie in clip 0: text fails; video holds
            + _matrix("4", [[math.nan, 0.1], [0.2, 0.8]]))
    return items, pair_frame(rows)


def test_similarity_scores_by_hand(similarity):
    items, pair = similarity
    wide = item_correct(items, pair)
    assert wide["text"].tolist() == [1, 1, 0, 0, 0]
    assert wide["video"].tolist() == [1, 0, 0, 1, 0]
    assert wide["group"].tolist() == [1, 0, 0, 0, 0]


def test_similarity_table_chances_and_categories(similarity):
    items, pair = similarity
    table = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("text", "all", "all"), "chance"] == 0.25
    assert table.loc[("group", "all", "all"), "chance"] == pytest.approx(1 / 6)
    assert table.loc[("group", "all", "all"), "n_nan"] == 1
    assert table.loc[("text", "subset", "object"), "value"] == pytest.approx(1 / 2)
    # minor categories are a list label: item 1 counts under both of its minors; items without minors under none
    assert table.loc[("text", "minor", "cyclical"), ("value", "n")].tolist() == [1.0, 2]
    assert table.loc[("text", "minor", "spatial"), "n"] == 1


def test_group_chance_for_random_scores_is_one_sixth():
    rng = np.random.default_rng(0)
    items = [_item(i) for i in range(3000)]
    rows = [r for it in items for r in _matrix(it.item_id, rng.random((2, 2)))]
    table = metric_table(items, pair_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    for metric in ("text", "video", "group"):
        r = table.loc[(metric, "all", "all")]
        assert r["ci_low"] <= r["chance"] <= r["ci_high"], metric
        assert not r["significant"]


def _q(key, axis, query, options, chosen):
    return {"item_id": key, "axis": axis, "query": query, "options": options, "logits": [math.nan] * 2,
            "choice": chosen, "answer": "A"}


def test_answer_scores():
    items = [_item(0), _item(1), _item(2)]
    rows = [
        _q("0", "text", 0, [0, 1], 0), _q("0", "text", 1, [1, 0], 1),     # text right
        _q("0", "video", 0, [0, 1], 0), _q("0", "video", 1, [0, 1], 1),   # video right -> group right
        _q("1", "text", 0, [0, 1], 0), _q("1", "text", 1, [0, 1], 0),     # text wrong
        _q("1", "video", 0, [0, 1], 0), _q("1", "video", 1, [0, 1], 1),
        _q("2", "text", 0, [0, 1], 0), _q("2", "text", 0, [1, 0], 1),     # asked in both orders, one wrong
        _q("2", "text", 1, [0, 1], 1), _q("2", "video", 0, [0, 1], -1),   # unparsed; video question 1 never asked
    ]
    wide = item_correct(items, None, choice_frame(rows))
    assert wide["text (A/B)"].tolist() == [1, 0, 0]
    assert wide["video (A/B)"].tolist() == [1, 1, 0]
    assert wide["group (A/B)"].tolist() == [1, 0, 0]
    assert "group" not in wide.columns
    out = vinoground.outcomes(items, None, choice_frame(rows)).set_index(["item_id", "metric"])
    assert out.loc[("0", "text (A/B)"), "chance"] == pytest.approx(0.25)
    assert out.loc[("2", "text (A/B)"), "chance"] == pytest.approx(0.125)  # three questions asked
    assert out.loc[("2", "video (A/B)"), "status"] == "missing"
    table = metric_table(items, None, choice_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    # group chance = text chance x video chance per item: 1/16, 1/16 and 1/8 x 1/4
    assert out.loc[("2", "group (A/B)"), "chance"] == pytest.approx(1 / 32)
    assert table.loc[("group (A/B)", "all", "all"), "chance"] == pytest.approx((1 / 16 + 1 / 16 + 1 / 32) / 3)
    assert "1/6" in table.loc[("group (A/B)", "all", "all"), "note"]


def test_malformed_items_are_rejected():
    bad = Item("vinoground", "x", "action", (Clip("a.mp4"), Clip("b.mp4")), ("p", "n"), ((0,), (0,)))
    with pytest.raises(ValueError, match="both clips point at text 0"):
        vinoground.outcomes([bad], pair_frame(_matrix("x", [[1, 0], [0, 1]])))
