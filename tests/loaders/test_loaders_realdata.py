"""The loaders on the benchmarks' real annotation files (skipped when ../shared/realdata is absent)."""

from __future__ import annotations

import csv
from collections import Counter

import pytest

from bench.loaders import load

VILMA_VALID = {
    "counting-easy-spelled-pts": 757, "counting-hard-spelled-pts": 675,
    "SRL_Action_Replacement_Top_1000": 704, "SRL_Actor_Swapping": 207,
    "change-state-action": 314, "change-state-prestate": 194, "change-state-poststate": 254,
    "change-state-inverse": 236, "rare-actions-verb-foils": 751, "rare-actions-noun-foils": 692, "relations": 393,
}


def test_vilma_valid_counts_per_subtest(realdata):
    items = load("vilma", realdata / "vilma")
    assert items.counts("main") == pytest.approx(VILMA_VALID) and sum(items.counts("main").values()) == 5177
    assert items.counts("proficiency") == items.counts("main")
    by_id = items.by_id()
    for it in items:
        twin = by_id[it.twin_id]
        assert twin.twin_id == it.item_id and twin.role != it.role
        assert it.labels["valid"] is True


def test_vilma_seconds_variant_has_the_same_counting_items(realdata):
    sec = load("vilma", realdata / "vilma", time_unit="sec").counts()
    assert sec["counting-easy-spelled-sec"] == 757 and sec["counting-hard-spelled-sec"] == 675
    assert "counting-easy-spelled-pts" not in sec


def test_vilma_foils_per_item_without_the_filter(realdata):
    items = load("vilma", realdata / "vilma" / "SRL_Action_Replacement_Top_1000.json", valid_only=False)
    main = [it for it in items if it.role == "main"]
    assert Counter(len(it.texts) - 1 for it in main) == {2: 899, 1: 101}
    assert all(len(it.texts) == 2 for it in items if it.role == "proficiency")
    assert "validity filter off" in items.notes[0]


def test_vilma_pts_windows_and_video_paths(realdata):
    items = load("vilma", realdata / "vilma" / "counting-easy-spelled-pts.json").by_id()
    it = items["counting-easy-spelled-pts/counting-easy-000-0013-0056-3-6-1-s"]
    clip = it.clips[0]
    assert (clip.path, clip.start, clip.end, clip.unit, clip.fps) == \
        ("quva/normalized_videos/000_rope_beach.mp4", 13, 56, "pts", 30.0)
    rel = load("vilma", realdata / "vilma" / "relations.json", video_root="/videos").by_id()["relations/0"]
    assert rel.clips[0].path == "/videos/something-something-v2/63238.webm" and rel.clips[0].exists is False
    assert rel.texts == ("rolling a can on a flat surface", "rolling a can onto a flat surface")


def test_vitatecs_aspect_counts(realdata):
    items = load("vitatecs", realdata / "vitatecs")
    assert items.counts() == {"Compositionality": 1450, "Direction": 3800, "Intensity": 779, "Localization": 1053,
                              "Sequence": 151, "Type": 6605}
    first = items.by_id()["Compositionality/1"]
    assert first.texts == ("a woman is cooking food and a man is setting a table",
                           "a man is cooking food and a woman is setting a table")
    vatex = next(it for it in items if it.labels["source"] == "VATEX")
    assert len(vatex.labels["yt_id"]) == 11 and vatex.labels["yt_end"] > vatex.labels["yt_start"]


def test_velociti_v1_subset_positives(realdata):
    folder = realdata / "velociti_v1_subset"
    items = load("velociti", folder)
    assert items.counts() == {"action_adv": 150, "action_bind": 151, "action_manner": 150, "agent_bind": 150,
                              "agent_random": 150, "coref": 150, "chrono": 142}
    for name, test in [("agent_iden", "agent_random"), ("sequence", "chrono"), ("coref", "coref")]:
        rows = list(csv.DictReader((folder / f"{name}.csv").open(encoding="utf-8")))
        loaded = [it for it in items if it.subset == test]
        for row, it in zip(rows, loaded):
            assert it.texts[0] == row[row["gt"]]
            assert it.texts[1] == row["cap2" if row["gt"] == "cap1" else "cap1"]
            assert it.labels["video_id"] == row["video_id"]
    assert any("repeat an earlier row" in note for note in items.notes)


def test_videocon_downstream_sets(realdata):
    items = load("videocon", realdata / "videocon")
    ssv2 = items.by_id()["ssv2_temporal"]
    assert (len(ssv2.clips), len(ssv2.texts)) == (216, 18)
    assert sum(len(row) for row in ssv2.truth) == 216
    assert all('"' not in t and "Human:" not in t for t in ssv2.texts)
    atp = [it for it in items if it.subset == "atp_hard"]
    assert len(atp) == 1846 and all(len(it.texts) == 5 for it in atp)
    questions = list(csv.DictReader((realdata / "videocon" / "nextqa-atphard-statements.csv").open(encoding="utf-8")))
    for it, row in zip(atp[:50], questions[:50]):
        assert it.labels["question"] == row["question"]
        assert it.texts[it.truth[0][0]] == row[f"s{row['answer']}"]
    # every question found its NExT-QA type (nextqa-atphard.csv has all 2,269 questions of the split); video
    # 3562017845 asks "what did the bird do after stepping into the water" twice (TN answer 0, CW answer 2)
    assert Counter(it.labels["type"] for it in atp) == {"CW": 691, "TN": 499, "CH": 322, "TC": 309, "TP": 25}
    assert any("final_test.csv" in n and "example" in n for n in items.notes)
