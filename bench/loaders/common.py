"""What every loader shares: one error type that names the file and place, strict readers, video
paths kept inside the video root, and the rule for rows that repeat an earlier row.

The readers decode UTF-8 (a leading byte-order mark is dropped, as ``utf-8-sig`` does) and refuse, each with the
file, the line (or JSON key / row) and the field: bytes that are not UTF-8, malformed or too deeply nested JSON,
``NaN`` / ``Infinity`` (not JSON), CSV fields over the ``csv`` module's limit, and control characters in any text
(only newline, carriage return and tab are allowed).

Exact repeats: a record with an id of its own (a ViLMA key, a Vinoground index) that repeats is an error; a row with
no id that repeats an earlier row exactly (VELOCITI, VITATECS, VideoCon) is kept as released, because the official
scripts count every row, and listed in the loader's notes (:class:`Repeats`).
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any, Callable, Hashable, Iterable, Iterator

from bench.items import BAD_CHARACTER, OutsideRoot, bad_character, resolve_video

BOM = b"\xef\xbb\xbf"
# Raw JSON text that may decode to a bad character (escapes; raw C0 characters in strings are a JSON error already).
SUSPECT_JSON = re.compile(r"[\x7f-\x9f]|\\u00[0189][0-9a-fA-F]|\\u007[fF]|\\u[dD][89a-fA-F]|\\[bf]")
# Strings and brackets of a JSON text, to find where it nests too deeply (Python's parser recurses per level).
JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
DEEP = 500


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


def read_text(path: Path) -> str:
    """The file as text: UTF-8 with an optional byte-order mark; other bytes name their line and byte offset.

    Only regular files are opened (a FIFO would block, a device never end).
    """
    if not path.is_file():
        raise LoaderError(path, None, "no such file" if not path.exists() else "not a regular file")
    data = path.read_bytes()
    skip = len(BOM) if data.startswith(BOM) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as err:
        offset = skip + err.start
        line = data.count(b"\n", 0, offset) + 1
        raise LoaderError(path, f"line {line}", f"not UTF-8 text: byte 0x{data[offset]:02x} at byte offset {offset} "
                                                f"({err.reason}); save the file as UTF-8") from None


# ---- JSON ---------------------------------------------------------------------------------------------------------

class _NonFinite(float):
    """``NaN`` / ``Infinity`` as Python's json would accept them, marked so that they can be found and refused."""


class _DuplicateKey(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise _DuplicateKey(key)
        seen[key] = value
    return seen


def _non_finite(value: Any) -> str | None:
    if isinstance(value, _NonFinite):
        return f"{'NaN' if value != value else 'Infinity'} is not a number JSON allows (numbers must be finite)"
    return None


def _text_problem(value: Any) -> str | None:
    return bad_character(value) if isinstance(value, str) else None


def _find(data: Any, problem_of: Callable[[Any], str | None]) -> tuple[list, str] | None:
    """The path to the first value or key of a parsed document that ``problem_of`` objects to, and the objection."""
    stack: list[tuple[list, Any]] = [([], data)]
    while stack:
        steps, value = stack.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                problem = problem_of(key)
                if problem:
                    return steps + [key], f"in the key itself: {problem}"
            stack.extend((steps + [key], item) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((steps + [i], item) for i, item in reversed(list(enumerate(value))))
        else:
            problem = problem_of(value)
            if problem:
                return steps, problem
    return None


def _where(steps: list, top: str | None, prefix: str | None) -> str | None:
    """``key 'k', field 'a.b[1]'`` / ``row 3, field 'a'`` (``top`` names the first step) or ``line 4, field 'a'``."""
    parts = [prefix] if prefix else []
    if steps and top:
        first, steps = steps[0], steps[1:]
        parts.append(f"{top} {first!r}" if isinstance(first, str) else f"{top} {first}")
    if steps:
        name = "".join(f"[{s}]" if isinstance(s, int) else (f".{s}" if i else s) for i, s in enumerate(steps))
        parts.append(f"field {name!r}")
    return ", ".join(parts) or None


def _deep_place(text: str) -> str | None:
    """The line and column where a JSON text first nests more than :data:`DEEP` levels."""
    depth = 0
    for token in JSON_TOKENS.finditer(text):
        depth += 1 if token.group() in "[{" else -1 if token.group() in "]}" else 0
        if depth > DEEP:
            line = text.count("\n", 0, token.start()) + 1
            return f"line {line} column {token.start() - text.rfind(chr(10), 0, token.start())}"
    return None


def _parse_json(path: Path, text: str, where: str | None, row_name: str) -> Any:
    """``json.loads`` that names the place of every problem (``where`` is the JSONL line, None for a JSON file)."""
    constants: list[str] = []

    def constant(name: str) -> float:
        constants.append(name)
        return _NonFinite(name.replace("Infinity", "inf"))

    try:
        data = json.loads(text, parse_constant=constant, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as err:
        place = where or f"line {err.lineno} column {err.colno}"
        raise LoaderError(path, place, f"malformed JSON: {err.msg}") from None
    except RecursionError:
        raise LoaderError(path, where or _deep_place(text), f"JSON nested more than {DEEP} levels deep, too deep to "
                                                            "read (the released files nest a few levels)") from None
    except _DuplicateKey as dup:
        if where is None:
            raise LoaderError(path, f"key {dup.args[0]!r}", "duplicate key (item ids must be unique)") from None
        raise LoaderError(path, where, f"duplicate field {dup.args[0]!r}") from None
    top = None if where else ("key" if isinstance(data, dict) else row_name)
    checks = ([_non_finite] if constants else []) + ([_text_problem] if SUSPECT_JSON.search(text) else [])
    for check in checks:
        found = _find(data, check)
        if found:
            raise LoaderError(path, _where(found[0], top, where), found[1])
    return data


def read_json(path: Path, row_name: str = "row") -> Any:
    """Parse a JSON file; an empty or malformed file, a repeated key or a bad value raises :class:`LoaderError`.

    The place of a bad value is ``key 'k', field 'a.b'`` for an object at the top, ``<row_name> 3, field 'a'`` for
    a list.
    """
    text = read_text(path)
    if not text.strip():
        raise LoaderError(path, None, "the file is empty, expected JSON")
    return _parse_json(path, text, None, row_name)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """Yield ``(line_number, object)`` for every non-blank line (1-based numbers); each must be a JSON object."""
    found = False
    for number, line in enumerate(read_text(path).split("\n"), start=1):  # not splitlines: U+2028 is no newline
        if not line.strip():
            continue
        obj = _parse_json(path, line, f"line {number}", "row")
        if not isinstance(obj, dict):
            raise LoaderError(path, f"line {number}", f"expected a JSON object, got {type(obj).__name__}")
        found = True
        yield number, obj
    if not found:
        raise LoaderError(path, None, "the file is empty, expected one JSON object per line")


# ---- CSV ----------------------------------------------------------------------------------------------------------

def csv_header(path: Path) -> list[str]:
    """The first record of a CSV file (its header, or its first row), read as :func:`read_csv_rows` reads it."""
    try:
        return next(csv.reader(io.StringIO(read_text(path), newline="")), [])
    except csv.Error as err:
        raise LoaderError(path, "line 1", _csv_problem(err)) from None


def _csv_problem(err: csv.Error) -> str:
    text = str(err)
    if "field larger than field limit" in text:
        return (f"a field longer than {csv.field_size_limit():,} characters (an unclosed quote swallowing the lines "
                "after it?)")
    return f"malformed CSV: {text}"


def read_csv_rows(path: Path, required: Iterable[str], header: bool = True,
                  names: list[str] | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield ``(line_number, row)`` of a CSV file, checking that the ``required`` columns are present.

    ``line_number`` is the file line where the row starts (quoted fields may span lines). Without a header,
    ``names`` gives the columns.
    """
    required = list(required)
    text = read_text(path)
    check_characters = BAD_CHARACTER.search(text) is not None
    reader = csv.DictReader(io.StringIO(text, newline=""), fieldnames=None if header else names)
    start = 1
    try:
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
            if check_characters:
                _check_fields(row, path, f"line {start}")
            found = True
            yield start, row
            start = reader.line_num + 1
    except csv.Error as err:
        raise LoaderError(path, f"line {start}", _csv_problem(err)) from None
    if not found:
        raise LoaderError(path, None, "the file has no data rows")


def _check_fields(row: dict, path: Path, where: str) -> None:
    for key, value in row.items():
        for text, what in ((key, "column name"), (value, "field")):
            problem = bad_character(text) if isinstance(text, str) else None
            if problem:
                raise LoaderError(path, where, f"{what} {key!r}: {problem}")


def check_strings(record: dict, path: Path, where: str) -> None:
    """Refuse control characters in the string values of a row read by other means (Parquet)."""
    _check_fields({k: v for k, v in record.items() if isinstance(v, str)}, path, where)


# ---- fields -------------------------------------------------------------------------------------------------------

def require(record: dict, key: str, kinds: type | tuple[type, ...], path: Path, where: str) -> Any:
    """``record[key]``, checked to exist and to be of ``kinds``; else a :class:`LoaderError`."""
    if key not in record:
        raise LoaderError(path, where, f"missing field {key!r}")
    value = record[key]
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in _as_tuple(kinds):
        names = "/".join(k.__name__ for k in _as_tuple(kinds))
        raise LoaderError(path, where, f"field {key!r} must be {names}, got {type(value).__name__} {value!r}")
    return value


def require_text(record: dict, key: str, path: Path, where: str) -> str:
    """``record[key]``, checked to be a string with some non-blank character."""
    value = require(record, key, str, path, where)
    if not value.strip():
        raise LoaderError(path, where, f"field {key!r} is empty; expected a sentence")
    return value


def _as_tuple(kinds: type | tuple[type, ...]) -> tuple[type, ...]:
    return kinds if isinstance(kinds, tuple) else (kinds,)


def files_in(path: Path, suffixes: tuple[str, ...], what: str) -> list[Path]:
    """``[path]`` for a file, else the sorted files of a folder with one of ``suffixes``; none is an error."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder ({what})")
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise LoaderError(path, None, f"not a regular file or folder; expected {what} annotation files")
    found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix.lower() in suffixes)
    if not found:
        raise LoaderError(path, None, f"no {what} files ({', '.join(suffixes)}) in this folder")
    return found


class Repeats:
    """Rows (without ids of their own) that repeat an earlier row exactly: kept as released, listed in the notes."""

    def __init__(self) -> None:
        self.first: dict[Hashable, str] = {}
        self.repeats: list[str] = []

    def add(self, row: Hashable, origin: str) -> None:
        """Record ``row`` (its full content) read at ``origin`` ("file line n")."""
        first = self.first.setdefault(row, origin)
        if first != origin:
            self.repeats.append(f"{origin} (= {first})")

    def notes(self) -> list[str]:
        """The note listing the repeats (none when there are none)."""
        if not self.repeats:
            return []
        shown = ", ".join(self.repeats[:10]) + (f" and {len(self.repeats) - 10} more" if len(self.repeats) > 10 else "")
        return [f"{len(self.repeats)} row(s) repeat an earlier row exactly and are kept as released (the official "
                f"scripts count every row): {shown}"]


# ---- videos -------------------------------------------------------------------------------------------------------

class VideoRoot:
    """The folder the annotation's video paths are relative to; a path that leaves it (``..``, an absolute path) is
    refused unless ``allow_outside`` (the loader option ``allow_outside_root``). Symbolic links inside the root may
    point anywhere: the check is on the path as written."""

    def __init__(self, folder: str | Path | None, allow_outside: bool = False):
        self.folder = folder
        self.allow_outside = allow_outside

    def resolve(self, relative: str, path: Path, where: str | None, field: str) -> tuple[str, bool | None]:
        """``(video path, exists)`` of an annotation's video (see :func:`bench.items.resolve_video`)."""
        problem = bad_character(relative)
        if problem:
            raise LoaderError(path, where, f"field {field!r}: {problem}")
        try:
            return resolve_video(self.folder, relative, allow_outside=self.allow_outside)
        except OutsideRoot as err:
            raise LoaderError(path, where, f"field {field!r}: {err}; pass -o allow_outside_root=true to allow it") \
                from None
