"""The ``labels=PATH`` loader option: extra label columns joined onto any benchmark's items."""

from __future__ import annotations

import pytest

from bench.cli import main
from bench.loaders import LoaderError, load


def _vitatecs(tmp_path, n=3):
    data = tmp_path / "Direction.jsonl"
    data.write_text("".join('{"src_dataset": "MSRVTT", "video_name": "video%d.mp4", "caption": "a b", '
                            '"counterfactual": "b a", "aspect": "Direction"}\n' % i for i in range(n)))
    return data


def test_label_columns_are_joined_by_item_id(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,foil_type,difficulty\nDirection/2,direction,hard\nDirection/1,order,\n")
    items = load("vitatecs", _vitatecs(tmp_path), labels=str(labels))
    assert [(it.labels["foil_type"], it.labels["difficulty"]) for it in items] == [
        ("order", None), ("direction", "hard"), (None, None)]
    assert items.notes[-1] == "labels.csv: foil_type, difficulty joined onto 2 of 3 items"
    column = items.to_frame()["foil_type"]
    assert list(column[:2]) == ["order", "direction"] and column.isna().tolist() == [False, False, True]


def test_rows_of_items_left_out_by_a_loader_filter_are_counted_not_fatal(sample):
    s = sample["vilma"]
    everything = load("vilma", s.data_path, valid_only=False, time_unit=None, **s.loader_options)
    default = load("vilma", s.data_path, **s.loader_options)
    assert len(default) < len(everything)
    assert f"{len(everything) - len(default)} rows name items not loaded" in default.notes[-1]


@pytest.mark.parametrize("content, where, problem", [
    ("id,foil_type\nDirection/1,order\n", "line 1", "missing column"),
    ("item_id,foil_type\nDirection/1,order\nDirection/1,action\n", "line 3", "duplicate item id 'Direction/1'"),
    ("item_id,foil_type\nDirecton/1,order\nDirecton/2,order\n", "line 2", "'Directon/1' is not an item of"),
    ("item_id,subset\nDirection/1,x\n", "line 1", "would overwrite"),
    ("item_id,source\nDirection/1,x\n", "line 1", "would overwrite"),
])
def test_a_bad_labels_file_is_a_one_line_error_naming_the_file_and_line(tmp_path, content, where, problem):
    labels = tmp_path / "labels.csv"
    labels.write_text(content)
    with pytest.raises(LoaderError) as err:
        load("vitatecs", _vitatecs(tmp_path), labels=str(labels))
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"{labels}, {where}") and problem in message


def test_the_option_reaches_every_command_that_loads(tmp_path, capsys):
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,foil_type\nDirection/1,order\n")
    data = _vitatecs(tmp_path)
    assert main(["summary", "vitatecs", str(data), "-o", f"labels={labels}"]) == 0
    assert "foil_type joined onto 1 of 3 items" in capsys.readouterr().out
    assert main(["summary", "vitatecs", str(data), "-o", f"labels={tmp_path / 'none.csv'}"]) == 2
    assert "none.csv: no such labels file" in capsys.readouterr().err
