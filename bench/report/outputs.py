"""Writing report tables (CSV, Markdown, an HTML page styled like the report's index) and figures (PNG, SVG through
vl-convert, axis and legend labels at :data:`LABEL_SIZE`) into an output folder."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Sequence

from bench.report.tables import STYLE, Table, table_html, table_markdown

FORMATS = ("png", "svg")
RENDER_SCALE = 2  # PNG pixels per CSS pixel: the index shows a figure at its width / RENDER_SCALE, never squeezed
LABEL_SIZE = 11   # axis and legend labels, in CSS pixels at that width
PAGE_STYLE = """
body{font-family:system-ui,sans-serif;max-width:88em;margin:1.5em auto;padding:0 1.5em;color:#222}
h1{margin-bottom:.2em} h2{border-bottom:2px solid #ccc;padding-bottom:.2em;margin-top:2em}
nav a{margin-right:1em} .meta{color:#555} .links{font-size:12px;margin-left:.6em}
.fb-figure{margin:1em 0 2em;overflow-x:auto} .fb-figure img{max-width:none;height:auto;border:1px solid #eee}
.fb-figure figcaption{max-width:60em;margin:.3em 0} .failed{color:#b00020;font-weight:bold}
.headline td small{display:block;color:#666;font-size:11px} .headline td small.ties{color:#a15c00}
""".strip()
BODY_START, BODY_END = "<!-- table -->", "<!-- /table -->"


def page_html(title: str, body: str, head: str = "") -> str:
    """A whole HTML page in the report's style (the index's and every table's own page)."""
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<style>{PAGE_STYLE}\n{STYLE}</style></head><body>{head}\n{body}\n</body></html>")


def table_fragment(page: str) -> str:
    """The table inside a table's page written by :func:`save_table` (to place it in the index)."""
    start, end = page.find(BODY_START), page.find(BODY_END)
    return page[start + len(BODY_START):end].strip() if start >= 0 and end > start else page


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """The figure formats, checked: each among :data:`FORMATS`, at least one."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"figure formats must be among {', '.join(FORMATS)}, got {', '.join(formats) or 'none'}")
    return tuple(formats)


def save_table(table: Table, out: str | Path, name: str, title: str = "", caption: str = "") -> list[Path]:
    """``<name>.csv`` (the numbers as computed), ``<name>.md``, ``<name>.html`` (as printed, a page styled like the
    report's index, linking back to it) and ``<name>.tex`` (LaTeX with booktabs, :mod:`bench.report.latex`); returns
    the paths."""
    from bench.report.latex import table_latex

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, html_path = out / f"{name}.csv", out / f"{name}.md", out / f"{name}.html"
    table.data.to_csv(csv_path, index=False)
    md_path.write_text(table_markdown(table, title, caption))
    back = "<p class='meta'><a href='../index.html'>Foilbench report</a> · <a href='" + f"{name}.csv'>CSV</a></p>"
    body = f"{BODY_START}\n{table_html(table, title, caption)}\n{BODY_END}"
    html_path.write_text(page_html(title or name, body, back) + "\n")
    tex_path = out / f"{name}.tex"
    tex_path.write_text(table_latex(table, title, caption, f"tab:{name}"))
    return [csv_path, md_path, html_path, tex_path]


def save_chart(chart, out: str | Path, name: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The chart as ``<name>.png`` (at :data:`RENDER_SCALE`) / ``<name>.svg`` (rendered offline by vl-convert), axis
    and legend labels at :data:`LABEL_SIZE`; returns the paths."""
    import vl_convert as vlc

    formats = check_formats(formats)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = chart.configure_axis(labelFontSize=LABEL_SIZE, titleFontSize=LABEL_SIZE + 1).configure_legend(
        labelFontSize=LABEL_SIZE, titleFontSize=LABEL_SIZE + 1).to_json()
    paths = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        if fmt == "png":
            path.write_bytes(vlc.vegalite_to_png(spec, scale=RENDER_SCALE))
        else:
            path.write_text(vlc.vegalite_to_svg(spec))
        paths.append(path)
    return paths
