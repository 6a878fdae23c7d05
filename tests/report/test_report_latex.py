"""Report tables as LaTeX: booktabs rules, grouped headers, escaped cells, intervals in \\scriptsize, the published
rows beside ours, and a .tex beside every saved table."""

from __future__ import annotations

import pandas as pd

from bench.published import published
from bench.report.latex import cell, escape, table_latex
from bench.report.outputs import save_table
from bench.report.tables import Table, beside_published, plain_table, score_table
from tests.report.test_report_tables import metric_rows


def test_an_interval_is_set_small_after_its_value():
    assert cell("61.7* [48.2, 73.9]") == r"61.7* {\scriptsize [48.2, 73.9]}"
    assert cell("61.7") == "61.7" and cell(float("nan")) == ""
    assert escape("50% of A & B_c #1 {x} ~ ^") == r"50\% of A \& B\_c \#1 \{x\} \textasciitilde{} \textasciicircum{}"


def test_a_score_table_has_booktabs_rules_grouped_headers_and_every_cell():
    table = score_table(metric_rows(), ["P", "T"], by="test")
    tex = table_latex(table, "ViLMA & us", "Accuracy", "tab:vilma")
    assert tex.count(r"\toprule") == tex.count(r"\midrule") == tex.count(r"\bottomrule") == 1
    assert r"\caption{\textbf{ViLMA \& us} Accuracy}" in tex and r"\label{tab:vilma}" in tex
    assert r"\multicolumn{2}{c}" in tex and r"\cmidrule(lr)" in tex
    for value in table.shown.to_numpy().ravel():
        assert cell(value) in tex
    rows = [line for line in tex.splitlines() if line.endswith(r"\\") and not line.startswith((" &", "&"))]
    assert len(rows) >= len(table.shown)


def test_published_rows_stand_beside_ours_as_in_the_html():
    paper = published("ViLMA", table="Table 2")
    table = beside_published(metric_rows(tests=["Action Counting", "Situation Awareness"]), paper, by=["test"])
    tex = table_latex(table)
    assert "ours & run a" in tex and "ours & run b" in tex
    for model in paper.model.unique():
        assert escape(model) in tex


def test_every_saved_table_has_its_tex(tmp_path):
    paths = save_table(plain_table(pd.DataFrame({"word": ["a_b"], "n": [3]})), tmp_path, "words", "Words")
    assert [p.suffix for p in paths] == [".csv", ".md", ".html", ".tex"]
    assert r"a\_b & 3 \\" in (tmp_path / "words.tex").read_text()
    assert r"\emph{No rows.}" in table_latex(Table(pd.DataFrame(), pd.DataFrame()))
