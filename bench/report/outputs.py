"""Writing report tables (CSV, Markdown, HTML) and figures (PNG, SVG through vl-convert) into an output folder."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import pandas as pd

FORMATS = ("png", "svg")


def save_table(table: pd.DataFrame, out: str | Path, name: str, title: str = "") -> list[Path]:
    """``<name>.csv`` (numbers as computed), ``<name>.md`` and ``<name>.html`` (for reading); returns the paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path, html_path = out / f"{name}.csv", out / f"{name}.md", out / f"{name}.html"
    table.to_csv(csv_path, index=False)
    heading = f"### {title}\n\n" if title else ""
    md_path.write_text(heading + (table.to_markdown(index=False) if len(table) else "_no rows_") + "\n")
    html_path.write_text((f"<h3>{title}</h3>\n" if title else "") + table.to_html(index=False, na_rep="") + "\n")
    return [csv_path, md_path, html_path]


def save_chart(chart, out: str | Path, name: str, formats: Sequence[str] = FORMATS) -> list[Path]:
    """The chart as ``<name>.png`` / ``<name>.svg`` (rendered offline by vl-convert); returns the paths."""
    import vl_convert as vlc

    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise ValueError(f"figure formats must be among {FORMATS}, got {unknown}")
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
