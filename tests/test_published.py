"""The papers' transcribed tables: format, reader, internal facts of each paper, and cross-checks with the paper texts
and the released annotation files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from bench.paths import PROJECT_ROOT
from bench.published import (COLUMNS, KEY, PublishedDataError, papers_dir, papers_index, published,
                             read_table_file, wide)
from bench.registry import names, spec

PAPERS = tuple(spec(n).title for n in names() if spec(n).published)  # one CSV per benchmark the registry names
MAIN_TABLES = {"ViLMA": "Table 2", "VITATECS": "Table 3", "VELOCITI": "Table 2", "VideoCon": "Table 2",
               "Vinoground": "Table 2", "MVP": "reproducibility.md", "TemporalBench": "README.md",
               "TempCompass": "Leaderboard", "TVBench": "Leaderboard"}
# A paper's numbered tables, or, for numbers printed elsewhere by the authors, the abstract, a file of the official
# repository, or a figure of it (a leaderboard, a README example, the data statistics).
TABLE_NAME = r"Table \d+|Abstract|[\w-]+\.md|Leaderboard|README example|Data statistics"
PAPER_TEXTS = PROJECT_ROOT.parent / "shared" / "papers"

# Allowed range of every metric; a new metric must be classified here.
PERCENT = {"P", "T", "P+T", "acc", "StrictVLE", "ClassicVLE", "ROC-AUC", "mAP", "text", "video", "group",
           "%Valid", "%Unan.", "%Both Valid", "pass rate", "PaLM-2 entailment acc.", "MC A", "MC B", "MC A^B",
           "positive caption acc", "negative caption acc (positive correct)", "R@10 caption", "R@10 counterfactual",
           "R@10 all", "pair_accuracy", "single_accuracy", "binary accuracy", "MBA", "Avg.", "multi-choice", "accuracy"}
UNIT = {"cosine similarity", "JS", "JS Val.", "Precision", "Recall", "F1-score", "Q2 entailment"}
SIGNED_UNIT = {"alpha", "alpha Valid"}
SIGNED_PERCENT = {"MC Bias"}
COUNTS = {"#exs.", "#Inst.", "#Valid", "#Unan.", "#Lex.It.", "#Valid Prof.", "#Valid Test", "#Both Valid", "count",
          "# samples", "# videos", "Valid samples", "Exemplar size", "VLE Train", "VLE Val", "VLE Test", "NLE Train",
          "NLE Val", "NLE Test", "binary correct", "questions", "MBA correct", "MBA groups", "videos"}
POSITIVE = {"Avg. len (caption)", "Avg. len (counterfactual)", "Size (M)", "average frames"}


@pytest.fixture(scope="module")
def everything() -> pd.DataFrame:
    return published()


def table(paper: str, name: str, **filters) -> pd.DataFrame:
    return published(paper, name, **filters)


def cell(frame: pd.DataFrame, model: str, subset: str, metric: str) -> float:
    hit = frame[(frame["model"] == model) & (frame["subset"] == subset) & (frame["metric"] == metric)]
    assert len(hit) == 1, (model, subset, metric, len(hit))
    return float(hit["value"].iloc[0])


# ---------------------------------------------------------------- format and reader

def test_one_csv_per_paper_with_exact_columns_and_captions():
    files = sorted(papers_dir().glob("*.csv"))
    assert [f.name for f in files] == sorted(spec(n).published for n in names() if spec(n).published)
    for f in files:
        assert f.read_text(encoding="utf-8").splitlines()[0] == ",".join(COLUMNS)
        frame = read_table_file(f)
        assert (frame["caption"].str.strip() != "").all(), f
        assert frame.groupby("table")["caption"].nunique().eq(1).all(), f"one caption per table in {f.name}"
        assert frame["table"].str.fullmatch(TABLE_NAME).all(), f


def test_no_duplicate_keys(everything):
    assert not everything.duplicated(list(KEY)).any()


def test_every_paper_has_its_main_results_table():
    index = papers_index()
    assert set(index["paper"]) == set(PAPERS)
    for paper, main in MAIN_TABLES.items():
        assert main in set(index.loc[index["paper"] == paper, "table"]), paper
    assert index["rows"].sum() == len(published())
    assert not index.duplicated(["paper", "table"]).any()


def test_values_lie_in_each_metrics_range(everything):
    unknown = set(everything["metric"]) - PERCENT - UNIT - SIGNED_UNIT - SIGNED_PERCENT - COUNTS - POSITIVE
    assert not unknown, f"classify these metrics: {unknown}"
    v, m = everything["value"], everything["metric"]
    assert v[m.isin(PERCENT)].between(0, 100).all()
    assert v[m.isin(UNIT)].between(0, 1).all()
    assert v[m.isin(SIGNED_UNIT)].between(-1, 1).all()
    assert v[m.isin(SIGNED_PERCENT)].between(-100, 100).all()
    counts = v[m.isin(COUNTS)]
    assert (counts >= 0).all() and (counts == counts.round()).all()
    assert (v[m.isin(POSITIVE)] > 0).all()


def _write(path: Path, rows: list[str]) -> Path:
    path.write_text("\n".join([",".join(COLUMNS)] + rows) + "\n", encoding="utf-8")
    return path


GOOD = "P,Table 1,Cap.,m,g,s,acc,50.0,"


def test_reader_rejects_broken_files_naming_file_and_line(tmp_path):
    with pytest.raises(PublishedDataError, match=r"bad\.csv, line 3: value 'n/a' is not a number"):
        read_table_file(_write(tmp_path / "bad.csv", [GOOD, "P,Table 1,Cap.,m2,g,s,acc,n/a,"]))
    with pytest.raises(PublishedDataError, match=r"line 3: duplicate key .* \(first on line 2\)"):
        read_table_file(_write(tmp_path / "dup.csv", [GOOD, GOOD]))
    with pytest.raises(PublishedDataError, match=r"line 2: empty 'caption'"):
        read_table_file(_write(tmp_path / "nocap.csv", ["P,Table 1,,m,g,s,acc,1,"]))
    with pytest.raises(PublishedDataError, match=r"line 2: expected 9 fields, found 8"):
        read_table_file(_write(tmp_path / "short.csv", ["P,Table 1,Cap.,m,g,s,acc,1"]))
    with pytest.raises(PublishedDataError, match="one paper per file"):
        read_table_file(_write(tmp_path / "two.csv", [GOOD, "Q,Table 1,Cap.,m,g,s,acc,1,"]))
    (tmp_path / "header.csv").write_text("paper,table,value\nP,Table 1,1\n", encoding="utf-8")
    with pytest.raises(PublishedDataError, match=r"header\.csv, line 1: header must be exactly"):
        read_table_file(tmp_path / "header.csv")


def test_published_reads_any_folder_and_filters(tmp_path):
    _write(tmp_path / "p.csv", [GOOD, "P,Table 1,Cap.,m2,g,s,acc,60.0,frames=8", "P,Table 2,Other.,m,g,s,acc,7,"])
    frame = published("p", 1, folder=tmp_path)
    assert list(frame["model"]) == ["m", "m2"] and list(frame["value"]) == [50.0, 60.0]
    assert list(published("P", "Table 1", folder=tmp_path, model=["m2", "zz"])["note"]) == ["frames=8"]
    assert list(papers_index(tmp_path)["rows"]) == [2, 1]


def test_published_names_what_exists_on_bad_requests():
    with pytest.raises(ValueError, match=r"unknown paper 'nope'.*ViLMA"):
        published("nope")
    with pytest.raises(ValueError, match=r"no 'Table 99' in 'vilma'; tables: \['Table 1', 'Table 2'"):
        published("vilma", 99)
    with pytest.raises(ValueError, match="unknown filter 'modle'"):
        published("vilma", modle="CLIP")


def test_filters_select_exact_rows():
    rows = published("VILMA", 2, model=["CLIP", "BLIP2"], metric="P+T")
    assert len(rows) == 2 * 6
    assert set(rows["subset"]) == {"Action Counting", "Situation Awareness", "Change of State", "Rare Actions",
                                   "Spatial Relations", "Avg"}


def test_wide_keeps_the_printed_layout():
    grid = wide(published("ViLMA", 2))
    assert grid.shape == (21, 16)
    assert list(grid.index[:3]) == ["Random", "GPT-2", "OPT"]
    assert grid.columns[0] == ("Action Counting", "P") and grid.columns[-1] == ("Avg", "P+T")
    assert grid.loc["Video-LLaMA", ("Avg", "P+T")] == 57.3
    with pytest.raises(ValueError, match="exactly one table"):
        wide(published("ViLMA"))


# ---------------------------------------------------------------- ViLMA

VILMA_TESTS = ["Action Counting", "Situation Awareness", "Change of State", "Rare Actions", "Spatial Relations"]


def test_vilma_avg_is_the_mean_of_the_five_combined_scores():
    grid = wide(table("ViLMA", "Table 2"))
    mean = sum(grid[(t, "P+T")] for t in VILMA_TESTS) / 5
    assert (mean - grid[("Avg", "P+T")]).abs().max() <= 0.1


def test_vilma_table3_scores_equal_table2_averages():
    t2 = table("ViLMA", "Table 2", subset="Avg").set_index("model")["value"]
    t3 = table("ViLMA", "Table 3", subset="Avg").set_index("model")["value"]
    assert len(t3) == 16
    assert (t3 == t2[t3.index]).all()


def test_vilma_combined_score_never_exceeds_its_parts():
    frame = published("ViLMA", metric=["P", "T", "P+T"])
    grid = frame.pivot_table(index=["table", "model", "subset"], columns="metric", values="value")
    over = grid[grid["P+T"] > grid[["P", "T"]].min(axis=1)]
    # The paper prints InternVideo's P+T 55.1 / 48.74 in every subtest of Change of State / Action Counting.
    assert set(over.index) == {("Table 7", "InternVideo", "Action Counting/Difficult"),
                               ("Table 9", "InternVideo", "Change of State/Pre-State")}


def test_vilma_validation_counts_add_up():
    t1 = table("ViLMA", "Table 1").set_index("subset")["value"]
    t4, t5, t6 = (table("ViLMA", f"Table {n}") for n in (4, 5, 6))
    both = t6[t6["metric"] == "#Both Valid"].set_index("subset")["value"]
    for test, n in t1.items():
        assert both[both.index.str.startswith(test + "/")].sum() == n, test
    for frame, metrics in ((t4, ("#Inst.", "#Valid", "#Unan.")), (t6, ("#Inst.", "#Valid Test", "#Both Valid"))):
        for metric in metrics:
            values = frame[frame["metric"] == metric].set_index("subset")["value"]
            assert values.drop("Overall").sum() == values["Overall"], metric
    prof = t5[t5["metric"] == "#Valid"].set_index("subset")["value"]
    assert prof.drop(["Overall", "Change of State/All"]).sum() + 4 * prof["Change of State/All"] == prof["Overall"]
    for frame, count, percent in ((t4, "#Valid", "%Valid"), (t4, "#Unan.", "%Unan."), (t5, "#Valid", "%Valid"),
                                  (t6, "#Both Valid", "%Both Valid")):
        grid = frame.pivot(index="subset", columns="metric", values="value")
        off = grid[(100 * grid[count] / grid["#Inst."] - grid[percent]).abs() > 0.01]
        assert list(off.index) == (["Change of State/Action"] if frame is t6 else []), (count, list(off.index))


def test_vilma_detail_tables_agree_with_table2():
    t2 = table("ViLMA", "Table 2")
    # Inconsistencies printed in the paper (Table 2 vs the appendix tables): ClipBERT's Spatial Relations cells in
    # Table 2 repeat its Rare Actions "All" cells of Table 10; three more Rare Actions cells differ.
    printed_apart = {("ClipBERT", test, m) for test in ("Rare Actions", "Spatial Relations") for m in ("P", "T", "P+T")}
    printed_apart |= {("Singularity", "Rare Actions", "T"), ("Merlot Reserve", "Rare Actions", "T"),
                      ("VindLU", "Rare Actions", "P+T")}
    checked = 0
    for name, test in zip(("Table 7", "Table 8", "Table 9", "Table 10", "Table 11"), VILMA_TESTS):
        detail = table("ViLMA", name, subset=test)
        assert len(detail) == 21 * 3
        for row in detail.itertuples():
            if (row.model, test, row.metric) not in printed_apart:
                printed = cell(t2, row.model, test, row.metric)
                assert abs(printed - row.value) <= 0.05 + 1e-9, (name, row.model, row.metric)
                checked += 1
    assert checked == 5 * 21 * 3 - len(printed_apart)


def test_vilma_test_scores_are_weighted_means_of_subtests():
    both = table("ViLMA", "Table 6", metric="#Both Valid").set_index("subset")["value"]
    # Rows whose "All" column the paper prints off the subtest mean.
    printed_apart = {("Table 7", "UniVL"), ("Table 7", "VIOLET"), ("Table 7", "Otter"), ("Table 8", "Otter"),
                     ("Table 10", "Merlot Reserve"), ("Table 10", "Otter")}
    for name, test in (("Table 7", "Action Counting"), ("Table 8", "Situation Awareness"),
                       ("Table 10", "Rare Actions")):
        frame = table("ViLMA", name)
        for (model, metric), rows in frame.groupby(["model", "metric"]):
            values = rows.set_index("subset")["value"]
            subtests = values.drop(test)
            weighted = (subtests * both[subtests.index]).sum() / both[subtests.index].sum()
            if (name, model) not in printed_apart:
                assert abs(weighted - values[test]) <= 0.06, (name, model, metric)


# ---------------------------------------------------------------- VITATECS

ASPECTS = ["Direction", "Intensity", "Sequence", "Localization", "Compositionality", "Type"]


@pytest.mark.parametrize("name", ["Table 3", "Table 4", "Table 5", "Table 6", "Table 13"])
def test_vitatecs_avg_is_the_mean_of_the_six_aspects(name):
    grid = table("VITATECS", name).pivot(index="model", columns="subset", values="value")
    assert (grid[ASPECTS].mean(axis=1) - grid["Avg"]).abs().max() <= 0.06


def test_vitatecs_recall_all_is_between_caption_and_counterfactual():
    grid = table("VITATECS", "Table 7").pivot(index=["model", "subset"], columns="metric", values="value")
    assert len(grid) == 2 * 7
    assert ((grid["R@10 caption"] + grid["R@10 counterfactual"]) / 2 - grid["R@10 all"]).abs().max() <= 0.051


def test_vitatecs_main_rows_reappear_in_the_full_results():
    t3, t13 = table("VITATECS", "Table 3"), table("VITATECS", "Table 13")
    same = {"BLIP-large (Zero-shot)": "BLIP-large (Zero-shot)", "ALPRO (MSR-VTT)": "ALPRO (MSR-VTT)",
            "Singularity (MSR-VTT)": "Singularity-17m-t (MSR-VTT)",
            "CLIP4Clip (MSR-VTT)": "CLIP4Clip-seqTransf (MSR-VTT)",
            "X-CLIP (MSR-VTT)": "X-CLIP-seqTransf (MSR-VTT)", "X-Pool (MSR-VTT)": "X-Pool (MSR-VTT)",
            "VIOLET (MSR-VTT)": "VIOLET (MSR-VTT)", "Video-LLaMA (Zero-shot)": "Video-LLaMA (Zero-shot)"}
    for main, full in same.items():
        for aspect in ASPECTS + ["Avg"]:
            assert cell(t3, main, aspect, "acc") == cell(t13, full, aspect, "acc"), (main, aspect)


def test_vitatecs_ablation_rows_reappear_in_the_full_results():
    t4, t6, t13 = (table("VITATECS", f"Table {n}") for n in (4, 6, 13))
    same = [(t4, "CLIP4Clip (temporal)", "CLIP4Clip-seqTransf (MSR-VTT)"),
            (t4, "CLIP4Clip (non-temporal)", "CLIP4Clip-meanP (MSR-VTT)"),
            (t4, "X-CLIP (temporal)", "X-CLIP-seqTransf (MSR-VTT)"),
            (t4, "X-CLIP (non-temporal)", "X-CLIP-meanP (MSR-VTT)"),
            (t4, "X-Pool (temporal)", "X-Pool-seqTransf (MSR-VTT)"), (t4, "X-Pool (non-temporal)", "X-Pool (MSR-VTT)"),
            (t6, "VIOLET (DiDeMo)", "VIOLET (DiDeMo)"), (t6, "VIOLET (YouCook2)", "VIOLET (YouCook2)"),
            # Table 6 prints VIOLET's MSR-VTT row under LSMDC (Table 13's VIOLET (LSMDC) differs).
            (t6, "VIOLET (LSMDC)", "VIOLET (MSR-VTT)"),
            (t6, "Singularity (ActivityNet)", "Singularity-17m-t (ActivityNet)"),
            (t6, "Singularity (DiDeMo)", "Singularity-17m-t (DiDeMo)"),
            (t6, "Singularity (SSv2-label)", "Singularity-17m-t (SSv2-label)"),
            (t6, "X-Pool (LSMDC)", "X-Pool (LSMDC)"), (t6, "X-Pool (MSVD)", "X-Pool (MSVD)")]
    assert len(same) == t4["model"].nunique() + t6["model"].nunique()
    for frame, model, full in same:
        for aspect in ASPECTS + ["Avg"]:
            assert cell(frame, model, aspect, "acc") == cell(t13, full, aspect, "acc"), (model, aspect)


def test_vitatecs_statistics_match_the_released_files(realdata):
    stats = table("VITATECS", "Table 2")
    for aspect in ASPECTS:
        records = [json.loads(line) for line in (realdata / "vitatecs" / f"{aspect}.jsonl").read_text().splitlines()
                   if line.strip()]
        assert len(records) == cell(stats, "", aspect, "# samples"), aspect
        assert len({r["src_dataset"] + "/" + r["video_name"] for r in records}) == cell(stats, "", aspect, "# videos")


# ---------------------------------------------------------------- VELOCITI

VELOCITI_TESTS = ["Agent Random", "Agent Binding", "Agent Coreference", "Action Adversarial", "Action Manner",
                  "Action Binding", "Event Chronology"]


@pytest.mark.parametrize("name", ["Table 2", "Table 4", "Table 6"])
def test_velociti_avg_is_the_mean_of_the_seven_tests_without_control(name):
    grid = table("VELOCITI", name).pivot(index="model", columns="subset", values="value").dropna()
    assert len(grid) >= 6
    assert (grid[VELOCITI_TESTS].mean(axis=1) - grid["Avg"]).abs().max() <= 0.05


def test_velociti_chance_rows():
    assert set(table("VELOCITI", "Table 2", model="Random")["value"]) == {25.0}
    assert set(table("VELOCITI", "Table 4", model="Random")["value"]) == {50.0}


def test_velociti_multiple_choice_bias_and_conjunction():
    grid = table("VELOCITI", "Table 5").pivot(index=["model", "subset"], columns="metric", values="value")
    assert len(grid) == 8 * 2
    known = grid.dropna()
    assert ((known["MC B"] - known["MC A"]) - known["MC Bias"]).abs().max() <= 0.051
    assert (grid["MC A^B"] <= grid[["MC A", "MC B"]].min(axis=1)).all()


def test_velociti_validation_rows_repeat_the_main_table():
    t2, t6 = table("VELOCITI", "Table 2"), table("VELOCITI", "Table 6")
    for model in ("OV-72B", "OV-7B"):
        for test in VELOCITI_TESTS + ["Control", "Avg"]:
            assert cell(t6, model, test, "StrictVLE") == cell(t2, model, test, "StrictVLE")


# ---------------------------------------------------------------- VideoCon

def test_videocon_split_totals():
    grid = table("VideoCon", "Table 1").pivot(index="subset", columns="metric", values="value")
    assert (grid.drop("Total").sum() == grid.loc["Total"]).all()
    assert grid.shape == (4, 6)


def test_videocon_owl_con_is_best_wherever_the_paper_says_so():
    for name in ("Table 2", "Table 4", "Table 5"):
        frame = table("VideoCon", name)
        best = frame.loc[frame.groupby("subset")["value"].idxmax(), "model"]
        assert set(best) == {"Owl-Con"}, name


# ---------------------------------------------------------------- Vinoground

def test_vinoground_group_never_exceeds_text_or_video():
    frame = published("Vinoground", metric=["text", "video", "group"])
    grid = frame.pivot_table(index=["table", "model", "subset"], columns="metric", values="value")
    assert len(grid) > 100 and not grid.isna().all(axis=1).any()
    both = grid.dropna()
    assert (both["group"] <= both[["text", "video"]].min(axis=1)).all()


def test_vinoground_categories_are_whole_pairs_and_average_to_all():
    counts = table("Vinoground", "Table 1").set_index("subset")["value"]
    assert counts[["object", "action", "viewpoint"]].sum() == 500
    for name in ("Table 4", "Table 5"):
        frame = table("Vinoground", name)
        assert frame["model"].nunique() == 3
        for (model, metric), rows in frame.groupby(["model", "metric"]):
            values = rows.set_index("subset")["value"]
            pairs = values[counts.index] * counts / 100
            assert (pairs - pairs.round()).abs().max() < 0.02, (name, model, metric)
            majors = values[["object", "action", "viewpoint"]] * counts[["object", "action", "viewpoint"]]
            assert abs(majors.sum() / 500 - values["all"]) < 0.02, (name, model, metric)


def test_vinoground_category_tables_repeat_the_main_rows():
    t2 = table("Vinoground", "Table 2")
    for name in ("Table 4", "Table 5"):
        for row in table("Vinoground", name, subset="all").itertuples():
            assert cell(t2, row.model, "all", row.metric) == row.value


def test_vinoground_frame_sweeps_repeat_the_main_rows():
    t2, t3, t6 = (table("Vinoground", f"Table {n}") for n in (2, 3, 6))
    same = [(t3, "GPT-4o (32 frames)", "GPT-4o"), (t3, "LLaVA-OneVision-Qwen2-72B (32 frames)",
                                                    "LLaVA-OneVision-Qwen2-72B"),
            (t3, "LLaVA-OneVision-Qwen2-7B (16 frames)", "LLaVA-OneVision-Qwen2-7B"),
            (t3, "Prolific Human (32 frames)", "Prolific Human (32 frames)"),
            (t3, "Prolific Human (full videos)", "Prolific Human (full videos)"),
            (t6, "Claude 3.5 Sonnet (4 frames)", "Claude 3.5 Sonnet"), (t6, "Qwen2-VL-7B (4fps frames)", "Qwen2-VL-7B"),
            (t6, "MiniCPM-2.6 (16 frames)", "MiniCPM-2.6"), (t6, "Phi-3.5-Vision (16 frames)", "Phi-3.5-Vision"),
            (t6, "LLaVA-NeXT-Video-34B (32 frames)", "LLaVA-NeXT-Video-34B"),
            (t6, "LLaVA-NeXT-Video-34B (CoT) (32 frames)", "LLaVA-NeXT-Video-34B (CoT)"),
            (t6, "MA-LMM-Vicuna-7B (4 frames)", "MA-LMM-Vicuna-7B"), (t6, "Qwen2-VL-72B (32 frames)", "Qwen2-VL-72B")]
    for frame, model, main in same:
        rows = frame[frame["model"] == model]
        assert len(rows) >= 2, model
        for row in rows.itertuples():
            assert cell(t2, main, "all", row.metric) == row.value, (model, row.metric)


# ---------------------------------------------------------------- MVP

MVP_SUBSETS = ["human_object_interactions", "intuitive_physics", "robot_object_interactions", "temporal_reasoning"]


def test_mvp_mini_is_the_unweighted_mean_of_its_four_subsets():
    grid = table("MVP", "reproducibility.md").pivot(index=["model", "metric"], columns="subset", values="value")
    assert len(grid) == 2 * 2
    assert (grid[MVP_SUBSETS].mean(axis=1) - grid["mvp_mini"]).abs().max() < 1e-4  # mvp.yaml: weight_by_size false
    pairs = grid.xs("pair_accuracy", level="metric")
    assert (pairs[MVP_SUBSETS] <= grid.xs("single_accuracy", level="metric")[MVP_SUBSETS]).all().all()


def test_mvp_abstract_numbers():
    grid = table("MVP", "Abstract").set_index("model")["value"]
    assert grid["Random"] == 25.0 and grid["Human"] > grid["Best open-source model"] > grid["Random"]


# ---------------------------------------------------------------- TemporalBench

TEMPORALBENCH_DATASETS = ["ActivityNet", "Charades", "COIN", "EgoExo4D", "Movie_Description", "Oops", "FineGym"]


def test_temporalbench_percentages_are_the_printed_counts():
    grid = table("TemporalBench", "README.md").pivot(index="subset", columns="metric", values="value")
    assert ((100 * grid["binary correct"] / grid["questions"]).round(2) == grid["binary accuracy"]).all()
    assert ((100 * grid["MBA correct"] / grid["MBA groups"]).round(2) == grid["MBA"]).all()


def test_temporalbench_datasets_add_up_to_all_and_categories_split_the_questions():
    grid = table("TemporalBench", "README.md").pivot(index="subset", columns="metric", values="value")
    categories = [s for s in grid.index if s not in TEMPORALBENCH_DATASETS + ["all"]]
    assert len(categories) == 8
    for column in ("binary correct", "questions", "MBA correct", "MBA groups"):
        assert grid.loc[TEMPORALBENCH_DATASETS, column].sum() == grid.loc["all", column], column  # a video: 1 dataset
    for column in ("binary correct", "questions"):
        assert grid.loc[categories, column].sum() == grid.loc["all", column], column
    # by category MBA is over (category, video) groups: a video's questions span several categories
    assert grid.loc[categories, "MBA groups"].sum() > grid.loc["all", "MBA groups"]


# ---------------------------------------------------------------- against the paper texts

def _paper_lines(paper: str) -> list[str]:
    path = PAPER_TEXTS / f"{paper.lower()}.txt"
    if not path.is_file():
        pytest.skip(f"paper text not found at {path}")
    return path.read_text(encoding="utf-8").splitlines()


NUMBER = re.compile(r"[-+]?\d+(?:\.\d*)?", re.ASCII)


def _clean(text: str) -> str:
    """Drop markup (tags, TeX, citations, "(Ours)"), the "/" between paired cells and parentheses around numbers."""
    text = re.sub(r"<[^>]*>|\^\{[^}]*\}|\$|\[[^\]]*\]|\^|\(Ours\)|(?<= )/(?= )", " ", text)
    text = re.sub(r"\(([-+]?\d[\d.]*)\)", r"\1", text)
    return " ".join(text.split())


def _is_value_cell(text: str) -> bool:
    return bool(text) and all(NUMBER.fullmatch(tok) or tok == "-" for tok in text.split())


def text_table(paper: str, caption: str, start: str, end: str | None = None) -> dict[str, list[float]]:
    """Rows of a table in the paper text: label -> numbers, from the last line starting with ``start`` before
    ``end`` (or the caption line) up to it. A label is the first cell plus any further text cells in parentheses."""
    lines = _paper_lines(paper)
    stop = next(i for i, line in enumerate(lines) if line.startswith(caption))
    if end is not None:
        stop = max(i for i in range(stop) if lines[i].startswith(end))
    first = max(i for i in range(stop) if lines[i].startswith(start))
    rows: dict[str, list[float]] = {}
    for line in lines[first:stop]:
        cells = [_clean(c) for c in line.split("\t")]
        k = 1
        while k < len(cells) and not _is_value_cell(cells[k]):
            k += 1
        numbers = [float(t) for c in cells[k:] for t in c.split() if t != "-"]
        if numbers:
            extra = [c for c in cells[1:k] if c]
            rows[cells[0] + "".join(f" ({c})" for c in extra)] = numbers
    return rows


SPOT = [  # paper, caption, start, end, our table, model_group filter, label aliases (labels are models)
    ("ViLMA", "Table 2:", "Random", None, "Table 2", None, {}),
    ("ViLMA", "Table 7:", "Random", None, "Table 7", None, {}),
    ("ViLMA", "Table 8:", "Random", None, "Table 8", None, {}),
    ("ViLMA", "Table 9:", "Random", None, "Table 9", None, {"FIT": "FiT"}),
    ("ViLMA", "Table 10:", "Random", None, "Table 10", None, {}),
    ("ViLMA", "Table 11:", "Random", None, "Table 11", None, {}),
    ("VITATECS", "Table 3.", "\tDataset", None, "Table 3", None,
     {"CLIP4clip (MSR-VTT)": "CLIP4Clip (MSR-VTT)", "X -Pool (MSR-VTT)": "X-Pool (MSR-VTT)",
      "X -CLIP (MSR-VTT)": "X-CLIP (MSR-VTT)", "Human (۰)": "Human"}),
    ("VITATECS", "Table 5.", "Text Encoder", None, "Table 5", None, {}),
    ("VITATECS", "Table 13.", "Model\tData", None, "Table 13", None, {}),
    ("VELOCITI", "Table 2.", "Random", "VELOCITI Subset", "Table 2", ["Random", "Full benchmark"], {}),
    ("VELOCITI", "Table 2.", "VELOCITI Subset", "Human", "Table 2", ["VELOCITI Subset"],
     {"OV-72B": "OV-72B (subset)"}),
    ("VELOCITI", "Table 3.", "Model\tControl", "VELOCITI Subset", "Table 3", ["Full benchmark"], {}),
    ("VELOCITI", "Table 3.", "VELOCITI Subset", None, "Table 3", ["VELOCITI Subset"], {}),
    ("VELOCITI", "Table 4.", "Random", None, "Table 4", None, {}),
    ("VELOCITI", "Table 5.", "Random", "VELOCITI Subset", "Table 5", ["Random", "Full benchmark"], {}),
    ("VELOCITI", "Table 5.", "VELOCITI Subset", None, "Table 5", ["VELOCITI Subset"], {"OV-72B": "OV-72B (subset)"}),
    ("VELOCITI", "Table 6.", "Model\tCtrl", None, "Table 6", None, {"OV": "OV-72B"}),
    ("VideoCon", "Table 2.", "Random", None, "Table 2", None, {"Owl-Base": "Owl-Base", "Owl-Con": "Owl-Con"}),
    ("VideoCon", "Table 3.", "Models\tVideoCon (LLM)", None, "Table 3", None, {}),
    ("VideoCon", "Table 4.", "Random", None, "Table 4", None, {}),
    ("VideoCon", "Table 5.", "CLIP\t", None, "Table 5", None, {}),
]


@pytest.mark.parametrize("paper,caption,start,end,name,groups,aliases", SPOT,
                         ids=[f"{s[0]}-{s[4]}-{s[3] or ''}" for s in SPOT])
def test_rows_match_the_paper_text(paper, caption, start, end, name, groups, aliases):
    printed = {aliases.get(label, label): numbers for label, numbers in text_table(paper, caption, start, end).items()}
    ours = table(paper, name) if groups is None else table(paper, name, model_group=groups)
    assert list(printed) == list(dict.fromkeys(ours["model"])), "same rows in the same order"
    for model, numbers in printed.items():
        assert ours.loc[ours["model"] == model, "value"].tolist() == numbers, model


def test_videocon_statistics_match_the_text():
    lines = _paper_lines("VideoCon")
    stop = next(i for i, line in enumerate(lines) if line.startswith("Table 1."))
    first = max(i for i in range(stop) if lines[i].startswith("Source\t"))
    printed = {cells[0]: [float(c) for c in cells[1:]]
               for cells in (line.split("\t") for line in lines[first + 2:stop] if line.strip())}
    ours = table("VideoCon", "Table 1")
    assert list(printed) == list(dict.fromkeys(ours["subset"]))
    for source, numbers in printed.items():
        assert ours.loc[ours["subset"] == source, "value"].tolist() == numbers, source


def test_vinoground_spot_checks_against_the_text():
    lines = _paper_lines("Vinoground")
    counts = next(line for line in lines if line.startswith("Count\t")).split("\t")[1:]
    assert table("Vinoground", "Table 1")["value"].tolist() == [float(c) for c in counts]
    for name, caption in (("Table 4", "Table 4:"), ("Table 5", "Table 5:")):
        stop = next(i for i, line in enumerate(lines) if line.startswith(caption))
        row = next(lines[i] for i in range(stop, 0, -1) if lines[i].startswith("all\t"))
        ours = table("Vinoground", name, subset="all")
        assert ours["value"].tolist() == [float(v) for v in row.split("\t")[1:]], name


# ---------------------------------------------------------------- against the released ViLMA files

VILMA_FILES = {"Action Counting/Easy": "counting-easy-spelled-pts",
               "Action Counting/Difficult": "counting-hard-spelled-pts",
               "Situation Awareness/Action Replacement": "SRL_Action_Replacement_Top_1000",
               "Situation Awareness/Actor Swapping": "SRL_Actor_Swapping",
               "Change of State/Action": "change-state-action", "Change of State/Pre-State": "change-state-prestate",
               "Change of State/Post-State": "change-state-poststate",
               "Change of State/Reverse": "change-state-inverse",
               "Rare Actions/Action Replacement": "rare-actions-verb-foils",
               "Rare Actions/Object Replacement": "rare-actions-noun-foils",
               "Spatial Relations/Prepositions": "relations"}


def test_vilma_validation_tables_match_the_released_files(realdata):
    t4, t5, t6 = (table("ViLMA", f"Table {n}") for n in (4, 5, 6))
    for subset, stem in VILMA_FILES.items():
        records = list(json.loads((realdata / "vilma" / f"{stem}.json").read_text(encoding="utf-8")).values())
        votes = [r["mturk"]["caption"] for r in records]
        proficient = [r["proficiency"]["human"]["caption"] == 1 for r in records]
        both = sum(v >= 2 and p for v, p in zip(votes, proficient))
        prof_subset = "Change of State/All" if subset.startswith("Change of State/") else subset
        assert len(records) == cell(t4, "", subset, "#Inst.") == cell(t5, "", prof_subset, "#Inst."), subset
        assert sum(v >= 2 for v in votes) == cell(t4, "", subset, "#Valid") == cell(t6, "", subset, "#Valid Test")
        assert sum(v == 3 for v in votes) == cell(t4, "", subset, "#Unan."), subset
        assert sum(proficient) == cell(t5, "", prof_subset, "#Valid") == cell(t6, "", subset, "#Valid Prof.")
        assert both == cell(t6, "", subset, "#Both Valid"), subset


# ---------------------------------------------------------------- every "Avg." column against its row

# What each paper averages: VELOCITI leaves the control test out (Table 2 caption); ViLMA averages its five tests,
# not their subtests ("Test/Subtest" columns).
AVERAGE_LEAVES_OUT = {"VELOCITI": lambda subset: subset == "Control", "ViLMA": lambda subset: "/" in subset}
AVERAGE_NAMES = {"Avg", "Avg."}
ROUNDING = 0.1  # parts printed to 0.1 (mean off by <= 0.05) and the average rounded to 0.1 (<= 0.05)


def transcribed_averages() -> list[tuple]:
    """(paper, table, model, model_group, metric, printed average, mean of its row's parts, parts) for every row
    printing an average beside at least two of its parts."""
    found = []
    rows = published().fillna({"model": "", "model_group": ""})
    for (paper, name, model, group, metric), frame in rows.groupby(["paper", "table", "model", "model_group",
                                                                    "metric"], sort=False):
        printed = frame[frame["subset"].isin(AVERAGE_NAMES)]
        leaves_out = AVERAGE_LEAVES_OUT.get(paper, lambda subset: False)
        parts = frame[~frame["subset"].isin(AVERAGE_NAMES) & ~frame["subset"].map(leaves_out)]
        if len(printed) and len(parts) >= 2:
            found.append((paper, name, model, group, metric, printed["value"].iloc[0], parts["value"].mean(),
                          list(parts["subset"])))
    return found


def test_every_transcribed_average_is_the_mean_of_its_row():
    found = transcribed_averages()
    assert {f[0] for f in found} == {"ViLMA", "VITATECS", "VELOCITI", "TVBench"}
    off = [(paper, name, model, metric, printed, round(mean, 2)) for paper, name, model, _, metric, printed, mean, _
           in found if abs(printed - mean) > ROUNDING + 1e-9]
    assert off == []


def test_velociti_human_row_and_vitatecs_violet_lsmdc_note():
    human = table("VELOCITI", "Table 2")
    human = human[human["model"] == "Human"].set_index("subset")["value"]
    assert "Control" not in human.index and human[VELOCITI_TESTS].mean() == pytest.approx(93.0, abs=0.05)
    lsmdc = table("VITATECS", "Table 6")
    note = lsmdc.loc[lsmdc["model"] == "VIOLET (LSMDC)", "note"].iloc[0]
    assert "inconsistent" in note and "54.1 66.8 60.9 60.6 63.5 75.3 63.5" in note
    t13 = table("VITATECS", "Table 13")
    assert cell(t13, "VIOLET (LSMDC)", "Direction", "acc") == 54.1
