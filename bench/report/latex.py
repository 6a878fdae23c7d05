"""Report tables as LaTeX for a paper: a ``table`` float with booktabs rules, grouped headers spanned with
``\\multicolumn`` and ``\\cmidrule``, every cell escaped, and an interval printed small after its value:
``61.7* [48.2, 73.9]`` becomes ``61.7* {\\scriptsize [48.2, 73.9]}``. The cells are the table's ``shown`` ones, so a
table of published rows carries ours beside them exactly as the HTML does. Needs ``\\usepackage{booktabs}``."""

from __future__ import annotations

import re
from itertools import groupby

import pandas as pd

from bench.report.tables import Table

SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
           "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}
INTERVAL = re.compile(r"\s*(\[[^\]]*\])")


def escape(text: object) -> str:
    """``text`` with LaTeX's special characters escaped."""
    return "".join(SPECIAL.get(c, c) for c in str(text))


def cell(value: object) -> str:
    """One cell: escaped, an interval ``[a, b]`` set in ``\\scriptsize``; empty for a missing value."""
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    return INTERVAL.sub(lambda m: r" {\scriptsize " + escape(m.group(1)) + "}", escape(value))


def _header_rows(columns: pd.Index, offset: int) -> list[str]:
    """The header lines: for grouped columns a spanning row with ``\\cmidrule`` under each group, then the names."""
    if not isinstance(columns, pd.MultiIndex):
        return [" & ".join([""] * offset + [escape(c) for c in columns]) + r" \\"]
    lines = []
    for level in range(columns.nlevels - 1):
        spans, rules, position = [], [], offset + 1
        for name, run in groupby(columns.get_level_values(level)):
            width = len(list(run))
            spans.append(rf"\multicolumn{{{width}}}{{c}}{{{escape(name)}}}" if width > 1 else escape(name))
            if width > 1 and str(name):
                rules.append(rf"\cmidrule(lr){{{position}-{position + width - 1}}}")
            position += width
        lines.append(" & ".join([""] * offset + spans) + r" \\" + (" " + " ".join(rules) if rules else ""))
    lines.append(" & ".join([""] * offset + [escape(c) for c in columns.get_level_values(-1)]) + r" \\")
    return lines


def table_latex(table: Table, title: str = "", caption: str = "", label: str = "") -> str:
    """The table as a LaTeX ``table`` float (booktabs), its title and caption in ``\\caption``, notes below."""
    shown = table.shown
    head = [r"\begin{table}[t]", r"\centering", r"\small"]
    text = " ".join(x for x in (rf"\textbf{{{escape(title)}}}" if title else "", escape(caption)) if x)
    if text:
        head.append(rf"\caption{{{text}}}")
    if label:
        head.append(rf"\label{{{escape(label)}}}")
    if shown.empty:
        return "\n".join(head + [r"\emph{No rows.}", r"\end{table}"]) + "\n"
    with_index = type(shown.index) is not pd.RangeIndex
    offset = (shown.index.nlevels if with_index else 0)
    spec = "l" * offset + "r" * len(shown.columns)
    body = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", *_header_rows(shown.columns, offset), r"\midrule"]
    for key, row in zip(shown.index, shown.itertuples(index=False)):
        keys = (list(key) if isinstance(key, tuple) else [key]) if with_index else []
        body.append(" & ".join([escape(k) for k in keys] + [cell(v) for v in row]) + r" \\")
    body += [r"\bottomrule", r"\end{tabular}"]
    notes = [rf"\par\smallskip{{\footnotesize {escape(n)}}}" for n in table.notes]
    return "\n".join(head + body + notes + [r"\end{table}"]) + "\n"
