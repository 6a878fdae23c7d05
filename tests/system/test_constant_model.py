"""A model that cannot tell is never shown as one that can: tiny models made constant on purpose (a CLIP whose texts
all get the same embedding, a Qwen2-VL whose output head is zero: P(Yes) = P(No), letters tied) scored on the five
benchmarks of the small generated world through `foilbench score`, beside the same tiny models unmodified (which see
the video), and read on every surface: the score warning, `metrics`, the report's headline and paper tables, the
controls, compare, the demo's console table and the answer bias."""

from __future__ import annotations

import contextlib
import io
import math
import re
from dataclasses import replace

import pandas as pd
import pytest

from bench.analysis.items import item_outcomes, pair_table, tie_notes
from bench.cli import main
from bench.commands.metrics import format_table
from bench.devkit.demo import bias_lines, foil_type_table, tie_lines
from bench.devkit.train.evaluate import Model, answer_bias, folder_name, score_world
from bench.metrics.aggregate import Settings
from bench.metrics.dispatch import run_table
from bench.metrics.dispatch import tie_line
from bench.metrics.pooled import pool_runs
from bench.metrics.ties import notable
from bench.report.compared import controls_table
from bench.report.context import open_report
from bench.report.index import headline_table
from bench.report.tables import score_table
from bench.store import read_run

SETUPS = {  # run name -> (tiny model, family, protocol); "constant ..." cannot tell one text from another
    "constant CLIP": ("clip-constant", "contrastive", "similarity"),
    "constant Yes/No": ("qwen2vl-constant", "videollm", "entail"),
    "constant A/B": ("qwen2vl-constant", "videollm", "mc"),
    "CLIP": ("clip", "contrastive", "similarity"),
    "Yes/No": ("qwen2vl", "videollm", "entail"),
    "A/B": ("qwen2vl", "videollm", "mc"),
}
SEEING = {"constant CLIP": "CLIP", "constant Yes/No": "Yes/No", "constant A/B": "A/B"}
# each paper notebook's headline candidates (notebooks/*.ipynb, rep.headline)
HEADLINES = {
    "vilma": [("Avg. P+T", "all"), ("P+T", "all")],
    "vitatecs": [("Avg. accuracy", "all"), ("accuracy", "all")],
    "velociti": [("StrictVLE", "average"), ("MC A∧B", "average"), ("ClassicVLE", "average"), ("StrictVLE", "all"),
                 ("MC A∧B", "all"), ("ClassicVLE", "all")],
    "videocon": [("AUROC", "all")],
    "vinoground": [("group", "all"), ("group (A/B)", "all")],
}
SETTINGS = Settings(n_boot=200)

pytestmark = pytest.mark.slow  # scores 30 runs (six set-ups on five benchmarks): about a minute of CPU


@pytest.fixture(scope="module")
def scored(sample, tiny, tmp_path_factory):
    """Every set-up on every benchmark of the small world, scored through the runner with each clip decoded and each
    model loaded once (:func:`bench.devkit.train.evaluate.score_world`), then `foilbench score` run again on each
    (the same command: the run is complete, nothing is scored): {(benchmark, run name): run folder}, and what
    `score` said on stderr per run."""
    out = tmp_path_factory.mktemp("constant")
    models = {name: Model(tiny(model), family, protocol) for name, (model, family, protocol) in SETUPS.items()}
    score_world(models, sample, out, log=out / "scoring.log")
    folders, said = {}, {}
    for benchmark, s in sample.items():
        options = [x for k, v in s.loader_options.items() for x in ("-o", f"{k}={v}")]
        for name, model in models.items():
            folder = out / f"{benchmark}-{folder_name(name)}"
            with contextlib.redirect_stderr(io.StringIO()) as err:
                code = main(["score", benchmark, str(s.data_path), "--video-root", str(s.video_root), *options,
                             "--model", model.path, "--family", model.family, "--protocol", model.protocol,
                             "--name", name, "--out", str(folder), "--quiet"])
            assert code == 0 and "already complete" in err.getvalue(), err.getvalue()
            folders[benchmark, name], said[benchmark, name] = folder, err.getvalue()
    return folders, said


def _runs(scored, *names):
    folders, _ = scored
    return {key: read_run(path) for key, path in folders.items() if key[1] in names}


def test_score_warns_in_one_line_about_every_constant_run(scored):
    folders, said = scored
    for (benchmark, name), text in said.items():
        warned = [line for line in text.splitlines() if "decided by a tie" in line]
        if name in SEEING:
            assert len(warned) == 1, (benchmark, name, text)  # every item, or all but the clips ranked per text
            assert "likely causes: constant output, a prompt the model ignores, or 16-bit rounding" in warned[0]
        else:  # the seeing models warn exactly when their own ties are notable
            assert bool(warned) == bool(tie_line(read_run(folders[benchmark, name]))), (benchmark, name)


def test_metrics_never_star_a_constant_model(scored, capsys):
    folders, _ = scored
    for (benchmark, name), run in _runs(scored, *SEEING).items():
        table = run_table(run, SETTINGS)
        starred = table[table["significant"] | table["significant_holm"]]
        assert starred.empty, (benchmark, name, starred[["metric", "by", "subset", "value", "p_value"]])
        assert (table["n_tie"] > 0).any(), (benchmark, name)
        shown = format_table(table)
        assert not re.search(r"\d\*", shown), shown
        assert main(["metrics", str(folders[benchmark, name]), "--bootstrap", "50"]) == 0
        assert "decided by a tie" in capsys.readouterr().out


def test_the_reports_headline_and_paper_tables_never_star_it(scored, tmp_path):
    runs = _runs(scored, *SETUPS)
    shown_ties = 0
    for benchmark in HEADLINES:
        paths = [str(r.path) for (b, _), r in runs.items() if b == benchmark]
        report = open_report(benchmark, paths, tmp_path, formats=("png",), n_boot=200)
        report.headline(HEADLINES[benchmark])
        headline = headline_table(tmp_path, [benchmark])
        rows = headline.data.set_index("run")
        for name in SEEING:
            cell = headline.shown.loc[name, headline.shown.columns[0]]
            assert "*" not in cell, (benchmark, name, cell)
            ties = notable(int(rows.loc[name, "n_tie"]), int(rows.loc[name, "n"]))
            assert ("ties" in cell and "strict" in cell) == ties, (benchmark, name, cell)
            shown_ties += ties
        constant = report.metrics[report.metrics["run"].isin(list(SEEING))]
        for by in dict.fromkeys(constant["by"]):
            table = score_table(constant, list(dict.fromkeys(constant["metric"])), by=by)
            cells = table.shown.loc[[r for r in table.shown.index if r in SEEING]]
            assert not cells.map(lambda c: bool(re.match(r"[\d.]+\*", str(c)))).any().any(), (benchmark, by)
    assert shown_ties >= len(HEADLINES)  # most constant runs' headline numbers are all ties, and say so


def test_controls_and_compare_never_find_it_better_than_a_model_that_sees(scored):
    runs = _runs(scored, *SETUPS)
    for benchmark in HEADLINES:
        for constant, seeing in SEEING.items():
            full, blind = runs[benchmark, seeing], runs[benchmark, constant]
            # the constant model as the seeing model's own blind control: same model, protocol and prompt
            blind.manifest = replace(blind.manifest, model=full.manifest.model, prompt=full.manifest.prompt,
                                     frame_policy={"name": "none"}, control="blind")
            table = controls_table([full, blind], ["foil_type"])
            assert len(table) and (table["with control"] <= table["full"] + 1e-12).all(), (benchmark, constant)
            assert (table["tied control"] == table["n"]).all()
            long, _ = item_outcomes({seeing: full, constant: blind})
            overall = pair_table(long).iloc[0]
            assert overall["accuracy_b"] == 0.0 and overall["only_b"] == 0 and overall["tied_b"] == overall["n"]
            assert any(f"{constant} tied every item" in note for note in tie_notes(long))


def test_the_demos_console_table_and_answer_bias_never_show_it_knowing(scored):
    folders, _ = scored
    runs = list(_runs(scored, *SETUPS).values())
    pooled = pool_runs(runs, "foil_type")
    mine = pooled[pooled["run"].isin(list(SEEING))]
    assert len(mine) and not mine["above"].any() and (mine["accuracy"] == 0).all()
    assert (mine["tied"] == mine["n"]).all()
    text = foil_type_table(pooled, list(SEEING))
    assert "*" not in text and text.splitlines()[-2].split()[1:] == [str(mine.loc[mine["run"] == r, "n"].sum())
                                                                     for r in SEEING]  # the tied row: every item
    warned = tie_lines(runs)
    assert {line.strip().split(" on ")[0] for line in warned[1:]} >= set(SEEING)
    bias = answer_bias([path for (_, name), path in folders.items() if name in ("constant Yes/No", "constant A/B")])
    for row in bias[bias["measure"] != "P(Yes)"].itertuples():
        assert math.isnan(row.value) and row.tied == row.n > 0
    assert all("not a bias" in line for line in bias_lines(bias[bias["measure"] != "P(Yes)"]))
    p_yes = bias[bias["measure"] == "P(Yes)"]
    assert p_yes["value"].tolist() == pytest.approx([50.0])
    seen = answer_bias([path for (_, name), path in folders.items() if name in ("Yes/No", "A/B")])
    assert pd.notna(seen.loc[seen["measure"] == "share A", "value"]).all()
