"""What every loader shares: one error type that names the file and place, and strict readers."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Iterable, Iterator


class LoaderError(ValueError):
    """A benchmark file that does not match its released format.

    The message names the file, the line or key, and what was expected.
    """

    def __init__(self, path: str | Path, where: str | None, problem: str):
        self.path = str(path)
        self.where = where
        self.problem = problem
        place = f"{self.path}" + (f", {where}" if where else "")
        super().__init__(f"{place}: {problem}")


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def read_json(path: Path) -> Any:
    """Parse a JSON file; an empty or malformed file, or a repeated key, raises :class:`LoaderError`."""
    text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise LoaderError(path, None, "the file is empty, expected JSON")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        raise LoaderError(path, f"line {err.lineno} column {err.colno}", f"malformed JSON: {err.msg}") from None
    except _DuplicateKey as dup:
        raise LoaderError(path, f"key {dup.args[0]!r}", "duplicate key (item ids must be unique)") from None


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for every non-blank line (1-based numbers); each must be a JSON object."""
    found = False
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise LoaderError(path, f"line {number}", f"malformed JSON: {err.msg}") from None
            if not isinstance(obj, dict):
                raise LoaderError(path, f"line {number}", f"expected a JSON object, got {type(obj).__name__}")
            found = True
            yield number, obj
    if not found:
        raise LoaderError(path, None, "the file is empty, expected one JSON object per line")


def read_csv_rows(path: Path, required: Iterable[str], header: bool = True,
                  names: list[str] | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, row)`` of a CSV file, checking that the ``required`` columns are present.

    ``line_number`` is the file line where the row starts (quoted fields may span lines). Without a header,
    ``names`` gives the columns.
    """
    required = list(required)
    with path.open(encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, fieldnames=None if header else names)
        if header:
            if reader.fieldnames is None:
                raise LoaderError(path, None, f"the file is empty, expected a CSV header with {required}")
            missing = [c for c in required if c not in reader.fieldnames]
            if missing:
                raise LoaderError(path, "line 1 (header)",
                                  f"missing column(s) {missing}; expected {required}, found {reader.fieldnames}")
        found = False
        start = reader.line_num + 1
        for row in reader:
            if None in row or any(v is None for k, v in row.items() if k in required):
                raise LoaderError(path, f"line {start}", f"wrong number of fields: {row!r}")
            found = True
            yield start, row
            start = reader.line_num + 1
        if not found:
            raise LoaderError(path, None, "the file has no data rows")


def require(record: dict, key: str, kinds: type | tuple[type, ...], path: Path, where: str) -> Any:
    """``record[key]``, checked to exist and to be of ``kinds``; else a :class:`LoaderError`."""
    if key not in record:
        raise LoaderError(path, where, f"missing field {key!r}")
    value = record[key]
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in _as_tuple(kinds):
        names = "/".join(k.__name__ for k in _as_tuple(kinds))
        raise LoaderError(path, where, f"field {key!r} must be {names}, got {type(value).__name__} {value!r}")
    return value


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def files_in(path: Path, suffixes: tuple[str, ...], what: str) -> list[Path]:
    """``[path]`` for a file, else the sorted files of a folder with one of ``suffixes``; none is an error."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder ({what})")
    if path.is_file():
        return [path]
    found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    if not found:
        raise LoaderError(path, None, f"no {what} files ({', '.join(suffixes)}) in this folder")
    return found
