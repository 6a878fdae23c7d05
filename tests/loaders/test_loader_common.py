"""The strict readers every loader uses, and the summary command's option parsing."""

from __future__ import annotations

import pytest

from bench.commands.options import parse_options
from bench.loaders.common import LoaderError, files_in, read_csv_rows, read_json, read_jsonl, require


def test_truncated_json_names_file_and_line(tmp_path):
    path = tmp_path / "t.json"
    path.write_text('{"a": {"caption": "x",\n "foils": [')
    with pytest.raises(LoaderError, match=r"t\.json, line 2 column \d+: malformed JSON"):
        read_json(path)


def test_empty_files_are_errors(tmp_path):
    for name, reader in [("e.json", read_json), ("e.jsonl", lambda p: list(read_jsonl(p)))]:
        path = tmp_path / name
        path.write_text("\n")
        with pytest.raises(LoaderError, match=f"{name}: the file is empty"):
            reader(path)


def test_jsonl_reports_line_numbers_of_bad_lines(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text('{"x": 1}\n\n[1, 2]\n')
    with pytest.raises(LoaderError, match=r"a\.jsonl, line 3: expected a JSON object, got list"):
        list(read_jsonl(path))
    path.write_text('{"x": 1}\n{"x": \n')
    with pytest.raises(LoaderError, match=r"line 2: malformed JSON"):
        list(read_jsonl(path))


def test_csv_missing_columns_and_ragged_rows(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(LoaderError, match=r"c\.csv, line 1 \(header\): missing column\(s\) \['c'\]"):
        list(read_csv_rows(path, ["a", "c"]))
    path.write_text('a,b\n1,2\n"multi\nline",3\n4\n')
    rows = read_csv_rows(path, ["a", "b"])
    assert next(rows) == (2, {"a": "1", "b": "2"})
    assert next(rows) == (3, {"a": "multi\nline", "b": "3"})
    with pytest.raises(LoaderError, match="line 5: wrong number of fields"):
        next(rows)


def test_csv_without_rows_or_header(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,b\n")
    with pytest.raises(LoaderError, match="no data rows"):
        list(read_csv_rows(path, ["a"]))
    path.write_text("")
    with pytest.raises(LoaderError, match="expected a CSV header"):
        list(read_csv_rows(path, ["a"]))


def test_require_checks_presence_and_type(tmp_path):
    rec = {"caption": "x", "n": True, "k": 3}
    assert require(rec, "caption", str, tmp_path, "key '0'") == "x"
    with pytest.raises(LoaderError, match="key '0': missing field 'foils'"):
        require(rec, "foils", list, tmp_path, "key '0'")
    with pytest.raises(LoaderError, match="field 'n' must be int, got bool"):
        require(rec, "n", int, tmp_path, "key '0'")
    assert require(rec, "k", (int, float), tmp_path, "key '0'") == 3


def test_files_in_folder_and_errors(tmp_path):
    (tmp_path / "b.json").write_text("{}")
    (tmp_path / "a.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("")
    assert [p.name for p in files_in(tmp_path, (".json",), "ViLMA")] == ["a.json", "b.json"]
    with pytest.raises(FileNotFoundError, match="no such file"):
        files_in(tmp_path / "nope", (".json",), "ViLMA")
    with pytest.raises(LoaderError, match=r"no VITATECS files \(\.jsonl\)"):
        files_in(tmp_path, (".jsonl",), "VITATECS")


def test_parse_options():
    assert parse_options(["valid_only=false", "k=3", "split=test"]) == {"valid_only": False, "k": 3, "split": "test"}
    with pytest.raises(ValueError, match="KEY=VALUE"):
        parse_options(["oops"])
