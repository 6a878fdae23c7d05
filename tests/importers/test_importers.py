"""Importing released scores and closed models' answers into run stores."""

from __future__ import annotations

import csv
import json
import math

import pytest

from bench.loaders import LoaderError, load
from bench.metrics import metric_table
from bench.config import DataSource
from bench.importers.common import import_run, parse_yes_no
from bench.store import read_run


def test_yes_no_parsing_follows_velociti():
    assert parse_yes_no("Yes.") == 1.0 and parse_yes_no("No, it does not") == 0.0
    assert math.isnan(parse_yes_no("Yes and No")) and math.isnan(parse_yes_no("error"))


def test_velociti_closed_answers(sample, tmp_path):
    s = sample["velociti"]
    n = len(load("velociti", s.data_path).items)
    preds = tmp_path / "gemini.csv"
    preds.write_text("pos_pred,neg_pred\n" + "Yes,No\n" * (n - 1) + "Yes,Yes\n")
    run = read_run(import_run("velociti-closed", [preds], DataSource.of("velociti", s.data_path),
                       tmp_path / "run", "gemini"))
    assert run.manifest.measure == "answer" and run.manifest.family == "import:velociti-closed"
    assert len(run.pair) == 2 * n and list(run.pair["answer"][:2]) == ["Yes", "No"]
    table = metric_table(load("velociti", s.data_path).items, run.pair, benchmark="velociti", measure="answer")
    strict = table[(table.metric == "StrictVLE") & (table.by == "all")].iloc[0]
    assert strict.value == pytest.approx((n - 1) / n)
    preds.write_text("pos_pred,neg_pred\nYes,No\n")
    with pytest.raises(LoaderError, match=f"1 prediction rows for {n} items"):
        import_run("velociti-closed", [preds], DataSource.of("velociti", s.data_path), tmp_path / "run2", "gemini")


def test_vinoground_responses(sample, tmp_path):
    s = sample["vinoground"]
    text = tmp_path / "textscore-response.jsonl"
    video = tmp_path / "videoscore-response.jsonl"
    text.write_text("".join(json.dumps({"idx": f"{i}_{side}", "response": "A" if side == "pos" else "B"}) + "\n"
                            for i in range(4) for side in ("pos", "neg")))
    video.write_text("".join(json.dumps({"idx": f"{i}_{side}", "response": "A. The first"}) + "\n"
                             for i in range(4) for side in ("pos", "neg")))
    run = read_run(import_run("vinoground", [text, video], DataSource.of("vinoground", s.data_path),
                       tmp_path / "run", "gpt-4o"))
    rows = run.choice.set_index(["item_id", "axis", "query"])
    # the neg clip is asked the same question (A = pos caption) with GT "B"
    assert rows.loc[("0", "text", 1), "choice"] == 1 and rows.loc[("0", "text", 1), "options"] == [0, 1]
    assert rows.loc[("0", "video", 1), "choice"] == 0  # "A" = the first fragment = the pos clip
    table = metric_table(load("vinoground", s.data_path).items, choice=run.choice, benchmark="vinoground")
    overall = table[table.by == "all"].set_index("metric")["value"]
    assert overall["text (A/B)"] == 1.0 and overall["video (A/B)"] == 0.0 and overall["group (A/B)"] == 0.0


def test_vilma_results_json_in_every_mode(sample, tmp_path):
    s = sample["vilma"]
    ann = s.data_path / "relations.json"
    keys = json.loads(ann.read_text())
    results = tmp_path / "results.json"
    results.write_text(json.dumps({k: {"scores": [2.0, 5.0]} for k in keys}))
    sim = read_run(import_run("vilma", [results], DataSource.of("vilma", ann),
                       tmp_path / "sim", "clip", mode="similarity"))
    ppl = read_run(import_run("vilma", [results], DataSource.of("vilma", ann),
                       tmp_path / "ppl", "gpt2", mode="perplexity"))
    assert list(sim.pair["score"][:2]) == [2.0, 5.0] and list(ppl.pair["score"][:2]) == [-2.0, -5.0]
    assert ppl.manifest.measure == "neg_perplexity"
    results.write_text(json.dumps({next(iter(keys)): {"scores": [1.0]}}))
    with pytest.raises(LoaderError, match="expected 2 scores"):
        import_run("vilma", [results], DataSource.of("vilma", ann), tmp_path / "bad", "clip")


def test_videocon_score_csv(sample, tmp_path):
    s = sample["videocon"]
    data = s.data_path / "eval_ssv2_temporal.csv"
    with data.open() as fh:
        records = list(csv.DictReader(fh))
    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as fh:
        writer = csv.writer(fh)
        for i, r in enumerate(records):
            writer.writerow([r["videopath"], r["caption"], 0.9 if r["match"] == "1" else 0.1 * (i % 3), 0.9, 0.1])
    run = read_run(import_run("videocon", [scores], DataSource.of("videocon", data), tmp_path / "run", "owl-con",
                              video_root=s.video_root))
    assert len(run.pair) == len(records) and run.manifest.measure == "p_yes"
    table = metric_table(load("videocon", data, video_root=s.video_root).items, run.pair, benchmark="videocon")
    assert table[(table.metric == "mAP") & (table.by == "all")]["value"].iloc[0] == pytest.approx(1.0)


def _vilma_results(path, keys, scores):
    path.write_text(json.dumps({k: {"scores": scores} for k in keys}))
    return path


def test_vilma_main_and_proficiency_in_one_import_give_p_and_t(sample, tmp_path):
    s = sample["vilma"]
    ann = s.data_path / "relations.json"
    keys = json.loads(ann.read_text())
    main = _vilma_results(tmp_path / "main.json", keys, [5.0, 2.0])
    prof = _vilma_results(tmp_path / "prof.json", keys, [3.0, 1.0])
    run = read_run(import_run("vilma", [main], DataSource.of("vilma", ann), tmp_path / "run", "clip",
                              extra_files=[prof], proficiency=[prof]))
    assert str(prof.resolve()) in run.manifest.imported_from
    table = metric_table(run.items(), run.pair, benchmark="vilma").set_index(["metric", "by"])
    for metric in ("P", "T", "P+T"):
        row = table.loc[(metric, "all")]
        assert row["value"] == 1.0 and row["n_missing"] == 0 and row["n"] == len(
            [it for it in run.items() if it.role == "main"])


def test_vilma_keys_resolve_per_file_and_ambiguous_keys_name_their_subtests(sample, tmp_path):
    s = sample["vilma"]
    folder = s.data_path  # relations.json and SRL_Action_Replacement_Top_1000.json share keys "0" and "1"
    rel, ar = (set(json.loads((folder / f"{stem}.json").read_text()))
               for stem in ("relations", "SRL_Action_Replacement_Top_1000"))
    shared = sorted(rel & ar)
    assert shared
    source = DataSource.of("vilma", folder)
    items = {it.item_id: it for it in source.load().items}
    results = _vilma_results(tmp_path / "rel.json", sorted(rel), [4.0, 1.0])
    with pytest.raises(LoaderError, match="relations, SRL_Action_Replacement_Top_1000|SRL_Action_Replacement_Top_1000"
                                          ", relations"):
        import_run("vilma", [results], source, tmp_path / "ambiguous", "clip")
    run = read_run(import_run("vilma", [f"relations={results}"], source, tmp_path / "run", "clip"))
    scored = set(run.pair["item_id"])
    assert scored == {i for i in items if i.startswith("relations/") and items[i].role == "main"}
    with pytest.raises(ValueError, match="no subtest 'relation'"):
        import_run("vilma", [f"relation={results}"], source, tmp_path / "typo", "clip")


def test_importing_into_a_stored_run_is_one_clear_error(sample, tmp_path):
    import subprocess
    import sys

    s = sample["vilma"]
    ann = s.data_path / "relations.json"
    results = _vilma_results(tmp_path / "main.json", json.loads(ann.read_text()), [5.0, 2.0])
    command = [sys.executable, "-m", "bench", "import", "vilma", str(results), "--benchmark", "vilma", "--data",
               str(ann), "--model-name", "clip", "--out", str(tmp_path / "run")]
    assert subprocess.run(command, capture_output=True, text=True).returncode == 0
    again = subprocess.run(command, capture_output=True, text=True)
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert again.stderr.strip().count("\n") == 0 and "already stored here" in again.stderr


def test_velociti_unparsed_answers_leave_the_official_denominator(sample, tmp_path):
    s = sample["velociti"]
    items = load("velociti", s.data_path).items
    n = len(items)
    preds = tmp_path / "gemini.csv"
    preds.write_text("pos_pred,neg_pred\n" + "Yes,No\n" * (n - 2) + "Yes,error\nNo,No\n")
    run = read_run(import_run("velociti-closed", [preds], DataSource.of("velociti", s.data_path),
                              tmp_path / "run", "gemini"))
    official = metric_table(items, run.pair, benchmark="velociti", measure="answer")
    row = official[(official.metric == "StrictVLE") & (official.by == "all")].iloc[0]
    # closed_model_metrics.py: (n - 2) right among the n - 1 rows whose answers both parse
    assert row.value == pytest.approx((n - 2) / (n - 1)) and row.n == n - 1
    # every column of the row over the same n - 1 items (no tie here, so strict is the value)
    assert (row.n_unparsed, row.n_dropped) == (1, 1) and row.strict == pytest.approx(row.value)
    strict = metric_table(items, run.pair, benchmark="velociti", measure="answer", ties="strict")
    assert strict[(strict.metric == "StrictVLE") & (strict.by == "all")].iloc[0].value == pytest.approx((n - 2) / n)


def _strict_row(run):
    from bench.metrics import Settings, run_table

    table = run_table(run, Settings(n_boot=10))
    return table[(table.metric == "StrictVLE") & (table.by == "all")].iloc[0]


def test_no_answer_is_no_answer_and_closed_answers_follow_the_official_scripts(sample, tmp_path):
    from bench.importers.common import parse_exact_yes_no

    assert all(math.isnan(parse_yes_no(a)) for a in ("None", "", "  ", "null", "NaN"))  # "None" holds "No"
    assert parse_exact_yes_no("Yes") == 1.0 and parse_exact_yes_no("No") == 0.0
    assert all(math.isnan(parse_exact_yes_no(a)) for a in ("None", "", "error", "Yes.", "no", "blocked"))
    s = sample["velociti"]
    items = load("velociti", s.data_path).items
    source = DataSource.of("velociti", s.data_path)
    # gemini/eval.py writes None when the API answers nothing; closed_model_metrics.py keeps only Yes/No answers:
    # Yes/No right, Yes/Yes wrong, Yes/None dropped -> 50.0 over 2 (not 66.7 over 3)
    preds = tmp_path / "gemini.csv"
    preds.write_text("pos_pred,neg_pred\nYes,No\nYes,Yes\nYes,None\n" + "None,\n" * (len(items) - 3))
    row = _strict_row(read_run(import_run("velociti-closed", [preds], source, tmp_path / "closed", "gemini")))
    assert (row.value, row.n, row.n_dropped, row.n_unparsed) == (0.5, 2, len(items) - 2, len(items) - 2)
    # the generic answers format: raw responses, of three items only (a run of those three)
    pos = [it.truth[0][0] for it in items[:3]]
    answers = tmp_path / "answers.csv"
    answers.write_text("item_id,text,answer\n" + "".join(
        f"{it.item_id},{p},Yes\n{it.item_id},{1 - p},{neg}\n"
        for it, p, neg in zip(items[:3], pos, ("\"No, it does not.\"", "Yes", ""))))
    run = read_run(import_run("answers", [answers], source, tmp_path / "answers", "gemini"))
    assert run.pair.set_index("item_id").loc[items[2].item_id, "answer"].tolist()[1] == "None"
    row = _strict_row(run)
    assert (row.value, row.n, row.n_dropped) == (0.5, 2, 1)


def test_a_partial_import_is_a_run_of_the_items_answered(sample, tmp_path, capsys):
    import argparse

    from bench.commands import importing, metrics as metrics_command
    from bench.metrics import Settings, run_table

    s = sample["vitatecs"]
    items = [it for it in load("vitatecs", s.data_path).items if it.role == "main"]
    some = items[: max(2, len(items) // 3)]
    answers = tmp_path / "answers.csv"
    # right on every item but the first: caption Yes, counterfactual No
    answers.write_text("item_id,text,answer\n" + "".join(
        f"{it.item_id},{it.truth[0][0]},{'No' if n == 0 else 'Yes'}\n{it.item_id},{1 - it.truth[0][0]},No\n"
        for n, it in enumerate(some)))
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers()
    importing.register(commands)
    metrics_command.register(commands)
    args = parser.parse_args(["import", "answers", str(answers), "--benchmark", "vitatecs", "--data",
                              str(s.data_path), "--model-name", "closed", "--out", str(tmp_path / "run")])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    left = len(items) - len(some)
    assert f"{len(some)} of the benchmark's {len(items)} items answered; {left} not answered" in out
    run = read_run(tmp_path / "run")
    assert [it.item_id for it in run.items()] == [it.item_id for it in some]
    table = run_table(run, Settings(n_boot=10))
    overall = table[(table.metric == "accuracy") & (table.by == "all")].iloc[0]
    assert (overall.n, overall.n_missing) == (len(some), 0)
    assert overall.value == pytest.approx((len(some) - 1) / len(some))
    args = parser.parse_args(["metrics", str(tmp_path / "run"), "--bootstrap", "10"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert f"{left} of the benchmark's {len(items)} items were not answered" in out
    assert "count as failures" not in out and f"{100 * overall.value:.1f}" in out


def test_answers_name_a_text_by_index_or_by_the_text_itself(sample, tmp_path):
    s = sample["vitatecs"]
    source = DataSource.of("vitatecs", s.data_path)
    items = [it for it in load("vitatecs", s.data_path).items if it.role == "main"][:3]
    by_index, by_text = tmp_path / "index.csv", tmp_path / "text.jsonl"
    by_index.write_text("item_id,text,answer\n" + "".join(f"{it.item_id},{t},{'Yes' if t == it.truth[0][0] else 'No'}\n"
                                                          for it in items for t in (0, 1)))
    by_text.write_text("".join(json.dumps({"item_id": it.item_id, "text": it.texts[t],
                                           "answer": "Yes" if t == it.truth[0][0] else "No"}) + "\n"
                               for it in items for t in (0, 1)))
    a = read_run(import_run("answers", [by_index], source, tmp_path / "a", "m")).pair
    b = read_run(import_run("answers", [by_text], source, tmp_path / "b", "m")).pair
    columns = ["item_id", "text", "score"]
    assert a[columns].sort_values(columns).values.tolist() == b[columns].sort_values(columns).values.tolist()
    bad = tmp_path / "bad.csv"
    bad.write_text(f"item_id,text,answer\n{items[0].item_id},a text it does not have,Yes\n")
    with pytest.raises(LoaderError, match=r"line 2: text 'a text it does not have' is none of .* holds the text's "
                                          r"index \(0 to 1, 0 = the first\) or the text itself"):
        import_run("answers", [bad], source, tmp_path / "c", "m")


def test_a_vilma_file_matching_no_item_is_an_error_naming_a_key(sample, tmp_path):
    import subprocess
    import sys

    s = sample["vilma"]
    ann = s.data_path / "relations.json"
    results = _vilma_results(tmp_path / "other.json", ["no-such-key-1", "no-such-key-2"], [5.0, 2.0])
    with pytest.raises(LoaderError, match=r"other.json: none of its 2 keys is a main item .* key 'no-such-key-1'"):
        import_run("vilma", [results], DataSource.of("vilma", ann), tmp_path / "run", "clip")
    done = subprocess.run([sys.executable, "-m", "bench", "import", "vilma", str(results), "--benchmark", "vilma",
                           "--data", str(ann), "--model-name", "clip", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "Traceback" not in done.stderr and "no-such-key-1" in done.stderr
    assert done.stderr.strip().count("\n") == 0 and not (tmp_path / "run" / "manifest.json").exists()
