"""Writing report tables (CSV, Markdown, HTML fragment) and figures (PNG, SVG through vl-convert) into an output
folder."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bench.report.tables import Table, table_html, table_markdown

FORMATS = ("png", "svg")


def check_formats(formats: Sequence[str]) -> tuple[str, ...]:
    """The figure formats, checked: each among :data:`FORMATS`, at least one."""
    unknown = [f for f in formats if f not in FORMATS]
    if unknown or not formats:
        raise ValueError(f"figure formats must be among {', '.join(FORMATS)}, got {', '.join(formats) or 'none'}")
    return tuple(formats)


def save_table(table: Table, out: str | Path, name: str, title: str = "", caption: str = "") -> list[Path]:
    """``<name>.csv`` (the numbers as computed), ``<name>.md``, ``<name>.html`` and ``<name>.tex`` (as printed;
    LaTeX with booktabs, :mod:`bench.report.latex`); returns the paths."""
    from bench.report.latex import table_latex

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, html_path = out / f"{name}.csv", out / f"{name}.md", out / f"{name}.html"
    table.data.to_csv(csv_path, index=False)
    md_path.write_text(table_markdown(table, title, caption))
    html_path.write_text(table_html(table, title, caption) + "\n")
    tex_path = out / f"{name}.tex"
    tex_path.write_text(table_latex(table, title, caption, f"tab:{name}"))
    return [csv_path, md_path, html_path, tex_path]


def save_chart(chart, out: str | Path, name: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The chart as ``<name>.png`` / ``<name>.svg`` (rendered offline by vl-convert); returns the paths."""
    import vl_convert as vlc

    formats = check_formats(formats)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    spec = chart.to_json()
    paths = []
    for fmt in formats:
        path = out / f"{name}.{fmt}"
        if fmt == "png":
            path.write_bytes(vlc.vegalite_to_png(spec, scale=2))
        else:
            path.write_text(vlc.vegalite_to_svg(spec))
        paths.append(path)
    return paths
