"""The five papers' reported numbers as tidy data, read from the package CSVs ``bench/papers/*.csv``.

One row per reported number: ``paper, table, caption, model, model_group, subset, metric, value, note``. ``table`` and
``caption`` cite where the number is printed; ``value`` is in the paper's unit (percentages stay percentages).
Statistics tables leave ``model`` empty. Example::

    published("ViLMA", table="Table 2", metric="P+T")      # tidy rows
    wide(published("Vinoground", table=2))                 # model x (subset, metric), as printed
"""

from __future__ import annotations

import csv
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

COLUMNS = ("paper", "table", "caption", "model", "model_group", "subset", "metric", "value", "note")
KEY = ("paper", "table", "model", "subset", "metric")
REQUIRED = ("paper", "table", "caption", "metric", "value")


class PublishedDataError(ValueError):
    """A transcribed-table CSV that breaks the format; the message names the file and line."""

    def __init__(self, path: str | Path, line: int | None, problem: str):
        place = f"{path}" + (f", line {line}" if line is not None else "")
        super().__init__(f"{place}: {problem}")


def papers_dir() -> Path:
    """The folder of the transcribed tables inside the installed package."""
    return Path(str(resources.files("bench") / "papers"))


def read_table_file(path: str | Path) -> pd.DataFrame:
    """Read and check one paper's CSV: exact header, numeric values, required cells, one paper, unique keys."""
    path = Path(path)
    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise PublishedDataError(path, 1, f"header must be exactly {','.join(COLUMNS)}, found {header}")
        records: list[dict[str, Any]] = []
        seen: dict[tuple, int] = {}
        for line, cells in enumerate(reader, start=2):
            if len(cells) != len(COLUMNS):
                raise PublishedDataError(path, line, f"expected {len(COLUMNS)} fields, found {len(cells)}")
            record: dict[str, Any] = dict(zip(COLUMNS, cells))
            for column in REQUIRED:
                if not record[column].strip():
                    raise PublishedDataError(path, line, f"empty {column!r}")
            try:
                record["value"] = float(record["value"])
            except ValueError:
                raise PublishedDataError(path, line, f"value {record['value']!r} is not a number") from None
            key = tuple(record[c] for c in KEY)
            if key in seen:
                raise PublishedDataError(path, line, f"duplicate key {key} (first on line {seen[key]})")
            seen[key] = line
            records.append(record)
    if not records:
        raise PublishedDataError(path, None, "no rows")
    papers = {r["paper"] for r in records}
    if len(papers) != 1:
        raise PublishedDataError(path, None, f"one paper per file expected, found {sorted(papers)}")
    return pd.DataFrame.from_records(records, columns=list(COLUMNS))


@lru_cache(maxsize=4)
def _all_tables(folder: str) -> pd.DataFrame:
    files = sorted(Path(folder).glob("*.csv"))
    if not files:
        raise PublishedDataError(folder, None, "no transcribed paper tables (*.csv) found")
    return pd.concat([read_table_file(f) for f in files], ignore_index=True)


def _table_label(table: int | str) -> str:
    return f"Table {table}" if isinstance(table, int) or str(table).isdigit() else str(table)


def _match(frame: pd.DataFrame, column: str, wanted: Any) -> pd.Series:
    values = [wanted] if isinstance(wanted, (str, int, float)) else list(wanted)
    return frame[column].isin([str(v) for v in values])


def published(paper: str | None = None, table: int | str | None = None, *, folder: str | Path | None = None,
              **filters: str | Iterable[str]) -> pd.DataFrame:
    """Reported numbers, filtered; rows keep the papers' order.

    ``paper`` is matched case-insensitively ("vilma" or "ViLMA"); ``table`` is "Table 2" or 2; any other column
    (``model``, ``model_group``, ``subset``, ``metric``, ``note``, ``caption``) filters on one value or a list of
    values. An unknown paper, table or column raises ``ValueError`` listing what exists.
    """
    frame = _all_tables(str(Path(folder) if folder else papers_dir()))
    mask = pd.Series(True, index=frame.index)
    if paper is not None:
        names = {p.lower(): p for p in frame["paper"].unique()}
        if paper.lower() not in names:
            raise ValueError(f"unknown paper {paper!r}; transcribed papers: {sorted(names.values())}")
        mask &= frame["paper"] == names[paper.lower()]
    if table is not None:
        label = _table_label(table)
        tables = frame.loc[mask, "table"].unique()
        if label not in tables:
            where = f" in {paper!r}" if paper else ""
            raise ValueError(f"no {label!r}{where}; tables: {sorted(tables, key=_order)}")
        mask &= frame["table"] == label
    for column, wanted in filters.items():
        if column not in COLUMNS or column in ("paper", "table", "value"):
            allowed = [c for c in COLUMNS if c not in ("paper", "table", "value")]
            raise ValueError(f"unknown filter {column!r}; filter on one of {allowed}")
        mask &= _match(frame, column, wanted)
    return frame[mask].reset_index(drop=True)


def _order(table: str) -> tuple[int, str]:
    number = table.rsplit(" ", 1)[-1]
    return (int(number), table) if number.isdigit() else (10**6, table)


def papers_index(folder: str | Path | None = None) -> pd.DataFrame:
    """One row per transcribed table: paper, table, caption, rows (number of values)."""
    frame = published(folder=folder)
    index = (frame.groupby(["paper", "table"], sort=False)
             .agg(caption=("caption", "first"), rows=("value", "size")).reset_index())
    index["order"] = index["table"].map(_order)
    index["paper_key"] = index["paper"].str.lower()
    return index.sort_values(["paper_key", "order"]).drop(columns=["order", "paper_key"]).reset_index(drop=True)


def wide(frame: pd.DataFrame) -> pd.DataFrame:
    """One table's rows as printed: models down, (subset, metric) across, both in order of first appearance."""
    tables = frame[["paper", "table"]].drop_duplicates()
    if len(tables) != 1:
        raise ValueError(f"wide() needs the rows of exactly one table, got {len(tables)}: "
                         f"{[tuple(t) for t in tables.itertuples(index=False)]}")
    models = list(dict.fromkeys(frame["model"]))
    columns = list(dict.fromkeys(zip(frame["subset"], frame["metric"])))
    table = frame.pivot(index="model", columns=["subset", "metric"], values="value")
    return table.reindex(index=models, columns=pd.MultiIndex.from_tuples(columns, names=["subset", "metric"]))
