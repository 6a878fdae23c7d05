"""The broken-annotation corpus, generated here from small valid files of every benchmark: each fault must come out
of ``foilbench summary`` as exit code 2 and one line naming the file, the line or key (and field) and the problem,
never a traceback. Then what must still load (byte-order marks, exact repeats, links out of the video root) and the
loader options."""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pandas as pd
import pytest
from fixtures_videocon import LLM_HEADER, LLM_ROWS, write_csv
from fixtures_vinoground import ROWS as VINO_ROWS
from fixtures_vinoground import video_entries, write_vinoground

from bench.cli import main
from bench.loaders import load

MARK = "MARK"  # every base file has one caption starting with it: the target of the byte-level faults
BOM = b"\xef\xbb\xbf"


@dataclass
class Fault:
    """A broken file and what the one-line error must say about it."""

    benchmark: str
    data: Path  # what the command is given
    file: Path  # the file the error names
    where: str | None  # the place, as the message writes it
    problem: str  # a regular expression the problem matches
    argv: list[str] = field(default_factory=list)
    pattern: bool = False  # ``where`` is a regular expression (a column left open)


def _write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def _line_of(path: Path, token: bytes) -> int:
    data = path.read_bytes()
    return data.count(b"\n", 0, data.index(token)) + 1


def _latin1(text: str) -> bytes:
    """The MARK caption with an 'é' written as Latin-1 (byte 0xe9) in an otherwise UTF-8 file."""
    return text.encode("utf-8").replace(MARK.encode(), b"M\xe9RK", 1)


def _keep(text):
    return text


# ---- valid base files (each mutated by the cases) -----------------------------------------------------------------

def _vilma_record(caption: str) -> dict:
    return {"dataset": "star", "video_file": "clip1", "caption": caption, "foils": ["a dog sleeps"],
            "mturk": {"caption": 3, "foil": 0}, "start_time": 1.0, "end_time": 3.0, "time_unit": "sec",
            "proficiency": {"caption": "there is a dog", "foils": ["there is no dog"],
                            "human": {"caption": 1, "foil": 0}}}


def vilma(tmp: Path, change: Callable[[dict], None] = lambda records: None, text=_keep) -> Path:
    """``relations.json`` with records r0 and r1 (r1's caption starts with MARK)."""
    records = {"r0": _vilma_record("a dog runs"), "r1": _vilma_record(f"{MARK} a dog jumps")}
    change(records)
    return _write(tmp / "relations.json", text(json.dumps(records, indent=1)))


def _vitatecs_rows() -> list[dict]:
    return [{"src_dataset": "MSRVTT", "video_name": f"video{i}.mp4", "caption": caption,
             "counterfactual": "a man walks away from a car", "aspect": "Direction"}
            for i, caption in enumerate(["a man walks to a car", f"{MARK} a man runs to a car"])]


def vitatecs(tmp: Path, change: Callable[[list], None] = lambda rows: None, text=_keep) -> Path:
    """``Direction.jsonl``: two lines, the second with MARK."""
    rows = _vitatecs_rows()
    change(rows)
    return _write(tmp / "Direction.jsonl", text("".join(json.dumps(r) + "\n" for r in rows)))


def _velociti_rows() -> list[dict]:
    return [{"video_id": "v_abc_seg_0_10", "test_name": "agent_bind", "event": "Ev1", "pos": "A man runs.",
             "neg": "A woman runs.", "in_subset": True},
            {"video_id": "v_def_seg_10_20", "test_name": "control", "event": "Ev2", "pos": f"{MARK} A dog sits.",
             "neg": "A cat flies.", "in_subset": False}]


def velociti(tmp: Path, fmt: str = "json", change: Callable[[list], None] = lambda rows: None, text=_keep) -> Path:
    """The current release as ``velociti.<fmt>`` (json, jsonl, csv, parquet): two rows, the second with MARK."""
    rows = _velociti_rows()
    change(rows)
    path = tmp / f"velociti.{fmt}"
    if fmt == "parquet":
        path.parent.mkdir(parents=True, exist_ok=True)
        pd.DataFrame(rows).to_parquet(path)
        return path
    content = {"json": lambda: json.dumps(rows, indent=1),
               "jsonl": lambda: "".join(json.dumps(r) + "\n" for r in rows),
               "csv": lambda: pd.DataFrame(rows).to_csv(index=False)}[fmt]()
    return _write(path, text(content))


def velociti_v1(tmp: Path, text=_keep) -> Path:
    """A v1 subset CSV (``action_adv.csv``: cap1, cap2, ev, gt, video_id), the second row with MARK."""
    content = ("cap1,cap2,ev,gt,video_id\n"
               "A man runs quickly.,A man runs slowly.,Ev1,cap1,v_abc_seg_0_10\n"
               f"A dog walks.,{MARK} A dog walks fast.,Ev2,cap2,v_def_seg_10_20\n")
    return _write(tmp / "action_adv.csv", text(content))


def videocon(tmp: Path, rows: list[list] | None = None, text=_keep) -> Path:
    """``videocon_llm_entailment.csv``, the third row's caption starting with MARK."""
    rows = [list(r) for r in (rows or LLM_ROWS)]
    rows[1][2] = f"{MARK} {rows[1][2]}"
    path = write_csv(tmp / "videocon_llm_entailment.csv", [LLM_HEADER] + rows)
    return _write(path, text(path.read_text(encoding="utf-8")))


def _vino_rows() -> list[list]:
    rows = [list(r) for r in VINO_ROWS]
    rows[1][6] = f"{MARK} {rows[1][6]}"
    return rows


def vinoground(tmp: Path, name: str = "vinoground.csv", text=_keep, entries=None) -> Path:
    """``vinoground.csv`` and its score JSONs (pair 1's positive caption starts with MARK); ``text`` changes the
    file ``name``, ``entries`` replaces the video-score entries."""
    csv_path = write_vinoground(tmp, _vino_rows())
    if entries is not None:
        _write(tmp / "vinoground_videoscore.json", json.dumps(entries, indent=1))
    target = tmp / name
    _write(target, text(target.read_text(encoding="utf-8")))
    return csv_path


# ---- the corpus ---------------------------------------------------------------------------------------------------

CASES: dict[str, Callable[[Path], Fault]] = {}


def case(function: Callable[[Path], Fault]) -> Callable[[Path], Fault]:
    CASES[function.__name__] = function
    return function


def _not_utf8(benchmark: str, write: Callable[[Path], Path], broken: str | None = None) -> Callable[[Path], Fault]:
    def make(tmp: Path) -> Fault:
        data = write(tmp)
        file = tmp / broken if broken else data
        offset = file.read_bytes().index(b"M\xe9RK") + 1
        return Fault(benchmark, data, file, f"line {_line_of(file, b'M' + bytes([0xe9]))}",
                     rf"not UTF-8 text: byte 0xe9 at byte offset {offset} \(invalid continuation byte\)")
    return make


for _name, _bench, _write_broken, _broken in [
    ("vilma", "vilma", lambda t: vilma(t, text=_latin1), None),
    ("vitatecs", "vitatecs", lambda t: vitatecs(t, text=_latin1), None),
    ("velociti_json", "velociti", lambda t: velociti(t, "json", text=_latin1), None),
    ("velociti_jsonl", "velociti", lambda t: velociti(t, "jsonl", text=_latin1), None),
    ("velociti_csv", "velociti", lambda t: velociti(t, "csv", text=_latin1), None),
    ("velociti_v1", "velociti", lambda t: velociti_v1(t, text=_latin1), None),
    ("videocon", "videocon", lambda t: videocon(t, text=_latin1), None),
    ("vinoground_csv", "vinoground", lambda t: vinoground(t, text=_latin1), None),
    ("vinoground_json", "vinoground", lambda t: vinoground(t, "vinoground_textscore.json", _latin1),
     "vinoground_textscore.json"),
]:
    CASES[f"latin1_{_name}"] = _not_utf8(_bench, _write_broken, _broken)


def _deep(text: str) -> str:
    return text.replace(f'"{MARK}', "[" * 100_000 + "]" * 100_000 + f', "{MARK}', 1)


@case
def deep_nesting_vilma(tmp):
    path = vilma(tmp, text=_deep)
    return Fault("vilma", path, path, rf"line {_line_of(path, b'[[[')} column \d+",
                 "JSON nested more than 500 levels deep", pattern=True)


@case
def deep_nesting_vitatecs(tmp):
    path = vitatecs(tmp, text=_deep)
    return Fault("vitatecs", path, path, f"line {_line_of(path, b'[[[')}", "JSON nested more than 500 levels deep")


@case
def huge_csv_field_velociti_v1(tmp):
    path = velociti_v1(tmp, text=lambda t: t.replace(MARK, "x" * 200_000))
    return Fault("velociti", path, path, "line 3", r"a field longer than 131,072 characters")


@case
def unclosed_quote_videocon(tmp):
    path = videocon(tmp, rows=LLM_ROWS * 800, text=lambda t: t.replace(MARK, '"' + MARK, 1))
    return Fault("videocon", path, path, f"line {_line_of(path, MARK.encode())}",
                 r"a field longer than 131,072 characters \(an unclosed quote")


def _row(rows, n, **values):
    rows[n].update(values)


@case
def velociti_event_null(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, event=None))
    return Fault("velociti", path, path, "row 1", r"field 'event' must be an event name \('Ev3'\) or a list of them, "
                                                  "got None")


@case
def velociti_event_number(tmp):
    path = velociti(tmp, "jsonl", change=lambda rows: _row(rows, 1, event=3))
    return Fault("velociti", path, path, "line 2", "field 'event' must be an event name")


@case
def velociti_event_object(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, event={"Ev1": 1}))
    return Fault("velociti", path, path, "row 1", "field 'event' must be an event name")


@case
def velociti_pos_null(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, pos=None))
    return Fault("velociti", path, path, "row 1", "field 'pos' must be a non-empty string, got None")


@case
def velociti_test_name_list(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, test_name=["control"]))
    return Fault("velociti", path, path, "row 1", "field 'test_name' must be a non-empty string")


@case
def velociti_in_subset_nan(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, in_subset=float("nan")))
    return Fault("velociti", path, path, "row 1, field 'in_subset'", "NaN is not a number JSON allows")


@case
def velociti_video_id_number(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, video_id=7))
    return Fault("velociti", path, path, "row 1", "field 'video_id' must be a non-empty string, got 7")


def _record(records, key="r1", **values):
    records[key].update(values)


@case
def vilma_caption_number(tmp):
    path = vilma(tmp, change=lambda r: _record(r, caption=5))
    return Fault("vilma", path, path, "key 'r1'", "field 'caption' must be str, got int 5")


@case
def vilma_caption_empty(tmp):
    path = vilma(tmp, change=lambda r: _record(r, caption=" "))
    return Fault("vilma", path, path, "key 'r1'", "field 'caption' is empty")


@case
def vilma_foils_string(tmp):
    path = vilma(tmp, change=lambda r: _record(r, foils="a cat"))
    return Fault("vilma", path, path, "key 'r1'", "field 'foils' must be list")


@case
def vilma_mturk_null(tmp):
    path = vilma(tmp, change=lambda r: _record(r, mturk=None))
    return Fault("vilma", path, path, "key 'r1'", "field 'mturk' must be dict, got NoneType")


@case
def vilma_proficiency_list(tmp):
    path = vilma(tmp, change=lambda r: _record(r, proficiency=[]))
    return Fault("vilma", path, path, "key 'r1'", "field 'proficiency' must be dict, got list")


@case
def vilma_start_time_text(tmp):
    path = vilma(tmp, change=lambda r: _record(r, start_time="3"))
    return Fault("vilma", path, path, "key 'r1'", "field 'start_time' must be a finite number or null, got '3'")


@case
def vilma_time_unit_list(tmp):
    path = vilma(tmp, change=lambda r: _record(r, time_unit=["sec"]))
    return Fault("vilma", path, path, "key 'r1'", r"time_unit must be 'sec' or 'pts', got \['sec'\]")


@case
def vilma_record_not_object(tmp):
    path = vilma(tmp, change=lambda r: r.update(r1=[1, 2]))
    return Fault("vilma", path, path, "key 'r1'", "expected an object, got list")


@case
def vitatecs_caption_null(tmp):
    path = vitatecs(tmp, change=lambda rows: rows[1].update(caption=None))
    return Fault("vitatecs", path, path, "line 2", "field 'caption' must be str, got NoneType None")


@case
def vitatecs_line_not_object(tmp):
    path = vitatecs(tmp, text=lambda t: t + '["a", "list"]\n')
    return Fault("vitatecs", path, path, "line 3", "expected a JSON object, got list")


def _entries(change: Callable[[list], None]) -> list[dict]:
    entries = video_entries(_vino_rows())
    change(entries)
    return entries


def _pos_entry() -> int:
    return [e["idx"] for e in video_entries(_vino_rows())].index("1_pos")


@case
def vinoground_gt_number(tmp):
    data = vinoground(tmp, entries=_entries(lambda e: e[_pos_entry()].update(GT=1)))
    return Fault("vinoground", data, tmp / "vinoground_videoscore.json", f"entry {_pos_entry()}",
                 "'GT' must be 'A' or 'B', got 1")


@case
def vinoground_video_name_null(tmp):
    data = vinoground(tmp, entries=_entries(lambda e: e[_pos_entry()].update(video_name=None)))
    return Fault("vinoground", data, tmp / "vinoground_videoscore.json", f"entry {_pos_entry()}",
                 "'video_name' must be a non-empty string, got None")


@case
def vinoground_idx_list(tmp):
    data = vinoground(tmp, entries=_entries(lambda e: e[_pos_entry()].update(idx=["1_pos"])))
    return Fault("vinoground", data, tmp / "vinoground_videoscore.json", f"entry {_pos_entry()}",
                 "'idx' must look like")


@case
def vinoground_entry_not_object(tmp):
    data = vinoground(tmp, entries=_entries(lambda e: e.__setitem__(_pos_entry(), "1_pos")))
    return Fault("vinoground", data, tmp / "vinoground_videoscore.json", f"entry {_pos_entry()}",
                 "expected an object, got str")


@case
def vilma_start_nan(tmp):
    path = vilma(tmp, change=lambda r: _record(r, start_time=float("nan")))
    return Fault("vilma", path, path, "key 'r1', field 'start_time'", "NaN is not a number JSON allows")


@case
def vilma_end_infinity(tmp):
    path = vilma(tmp, change=lambda r: _record(r, end_time=float("inf")))
    return Fault("vilma", path, path, "key 'r1', field 'end_time'", "Infinity is not a number JSON allows")


@case
def vilma_end_minus_infinity_in_proficiency(tmp):
    path = vilma(tmp, change=lambda r: r["r1"]["proficiency"].update(score=float("-inf")))
    return Fault("vilma", path, path, "key 'r1', field 'proficiency.score'", "Infinity is not a number JSON allows")


@case
def vilma_start_overflows_to_infinity(tmp):
    path = vilma(tmp, text=lambda t: t.replace('"start_time": 1.0', '"start_time": 1e999'))
    return Fault("vilma", path, path, "key 'r0'", "field 'start_time' must be a finite number or null, got inf")


@case
def vilma_negative_start(tmp):
    path = vilma(tmp, change=lambda r: _record(r, start_time=-5))
    return Fault("vilma", path, path, "key 'r1'", r"field 'start_time' must be >= 0 \(or -1 for none\), got -5")


@case
def vinoground_start_nan(tmp):
    data = vinoground(tmp, text=lambda t: t.replace(",0,5,", ",nan,5,", 1))
    return Fault("vinoground", data, data, f"line {_line_of(data, b',nan,')}",
                 "'pos_start' must be a finite number of seconds >= 0, got 'nan'")


@case
def vinoground_end_infinity(tmp):
    data = vinoground(tmp, text=lambda t: t.replace(",0,5,", ",0,inf,", 1))
    return Fault("vinoground", data, data, f"line {_line_of(data, b',inf,')}",
                 "'pos_end' must be a finite number of seconds >= 0, got 'inf'")


def _control(character: str, escape: bool) -> Callable[[str], str]:
    written = json.dumps(character)[1:-1] if escape else character
    return lambda text: text.replace(MARK, "M" + written + "RK", 1)


@case
def nul_escaped_in_vitatecs_caption(tmp):
    path = vitatecs(tmp, text=_control("\x00", escape=True))
    return Fault("vitatecs", path, path, "line 2, field 'caption'", r"control character U\+0000 \(NUL\) at character 1")


@case
def escape_in_vilma_foil(tmp):
    path = vilma(tmp, change=lambda r: _record(r, foils=["a dog\x1b sleeps"]))
    return Fault("vilma", path, path, "key 'r1', field 'foils[0]'", r"control character U\+001B \(escape\)")


@case
def bell_in_vilma_proficiency_caption(tmp):
    path = vilma(tmp, change=lambda r: r["r1"]["proficiency"].update(caption="there\x07 is a dog"))
    return Fault("vilma", path, path, "key 'r1', field 'proficiency.caption'", r"control character U\+0007")


@case
def nul_in_vilma_key(tmp):
    path = vilma(tmp, change=lambda r: r.update({"r\x002": _vilma_record("a bird sings")}))
    return Fault("vilma", path, path, r"key 'r\x002'", r"in the key itself: control character U\+0000 \(NUL\)")


@case
def raw_control_in_vilma_json(tmp):
    path = vilma(tmp, text=_control("\x01", escape=False))
    return Fault("vilma", path, path, rf"line {_line_of(path, MARK[0].encode() + bytes([1]))} column \d+",
                 "malformed JSON: Invalid control character", pattern=True)


@case
def c1_control_in_velociti_jsonl(tmp):
    path = velociti(tmp, "jsonl", text=_control("\x85", escape=False))
    return Fault("velociti", path, path, "line 2, field 'pos'", r"control character U\+0085")


@case
def lone_surrogate_in_velociti_json(tmp):
    path = velociti(tmp, "json", text=lambda t: t.replace(MARK, "M\\ud800RK", 1))
    return Fault("velociti", path, path, "row 1, field 'pos'", r"unpaired surrogate U\+D800")


@case
def nul_in_velociti_csv(tmp):
    path = velociti(tmp, "csv", text=_control("\x00", escape=False))
    return Fault("velociti", path, path, "line 3", r"field 'pos': control character U\+0000 \(NUL\)")


@case
def nul_in_velociti_parquet(tmp):
    path = velociti(tmp, "parquet", change=lambda rows: _row(rows, 1, neg="A cat\x00 flies."))
    return Fault("velociti", path, path, "row 1", r"field 'neg': control character U\+0000 \(NUL\)")


@case
def form_feed_in_videocon_caption(tmp):
    path = videocon(tmp, text=_control("\x0c", escape=False))
    return Fault("videocon", path, path, f"line {_line_of(path, b'M' + bytes([12]))}",
                 r"field 'caption': control character U\+000C \(form feed\)")


@case
def nul_in_velociti_v1_caption(tmp):
    path = velociti_v1(tmp, text=_control("\x00", escape=False))
    return Fault("velociti", path, path, "line 3", r"field 'cap2': control character U\+0000")


@case
def bell_in_vinoground_caption(tmp):
    data = vinoground(tmp, text=_control("\x07", escape=False))
    return Fault("vinoground", data, data, f"line {_line_of(data, b'M' + bytes([7]))}",
                 r"field 'pos_cap': control character U\+0007")


@case
def duplicate_vilma_key(tmp):
    path = vilma(tmp, text=lambda t: t.replace('"r0"', '"r1"', 1))
    return Fault("vilma", path, path, "key 'r1'", r"duplicate key \(item ids must be unique\)")


@case
def duplicate_vinoground_index(tmp):
    data = vinoground(tmp, text=lambda t: t.replace("\n1,", "\n0,", 1))
    return Fault("vinoground", data, data, "line 3", r"duplicate index 0 \(first at line 2\)")


def _outside(field: str, relative: str, root: str = "the video root") -> str:
    return (rf"field '{field}': video path '{re.escape(relative)}' leaves {root}.*; pass -o "
            r"allow_outside_root=true to allow it$")


@case
def vitatecs_video_climbs_out(tmp):
    path = vitatecs(tmp, change=lambda rows: rows[1].update(video_name="../../outside/private.mp4"))
    return Fault("vitatecs", path, path, "line 2", _outside("video_name", "MSRVTT/../../outside/private.mp4"),
                 ["--video-root", str(tmp / "videos")])


@case
def velociti_absolute_video_id(tmp):
    path = velociti(tmp, change=lambda rows: _row(rows, 1, video_id=str(tmp.parent / "outside" / "private")))
    return Fault("velociti", path, path, "row 1", _outside("video_id", f"{tmp.parent}/outside/private.mp4"),
                 ["--video-root", str(tmp / "videos")])


@case
def velociti_absolute_video_id_without_root(tmp):
    path = velociti(tmp, "jsonl", change=lambda rows: _row(rows, 0, video_id="/outside/private"))
    return Fault("velociti", path, path, "line 1",
                 _outside("video_id", "/outside/private.mp4", r"the current folder \(no video root given\)"))


@case
def videocon_video_climbs_out(tmp):
    rows = [list(r) for r in LLM_ROWS]
    rows[2][0] = "../../outside/private.mp4"
    path = videocon(tmp, rows=rows)
    return Fault("videocon", path, path, "line 4", _outside("videopath", "../../outside/private.mp4"),
                 ["--video-root", str(tmp / "videos")])


@case
def vilma_video_climbs_out(tmp):
    path = vilma(tmp, change=lambda r: _record(r, video_file="../../../outside/private"))
    return Fault("vilma", path, path, "key 'r1'", _outside("video_file", "star/../../../outside/private.mp4"),
                 ["--video-root", str(tmp / "videos")])


@case
def vinoground_concatenated_video_climbs_out(tmp):
    data = vinoground(tmp, entries=_entries(lambda e: e[_pos_entry()].update(video_name="../../outside/1.mp4")))
    return Fault("vinoground", data, tmp / "vinoground_videoscore.json", f"entry {_pos_entry()}",
                 _outside("video_name", "../../outside/1.mp4"), ["--video-root", str(tmp / "videos")])


@case
def empty_vitatecs_file(tmp):
    path = _write(tmp / "Direction.jsonl", "\n\n")
    return Fault("vitatecs", path, path, None, "the file is empty")


@case
def empty_velociti_json(tmp):
    path = _write(tmp / "velociti.json", "")
    return Fault("velociti", path, path, None, "the file is empty, expected JSON")


@case
def velociti_json_not_a_list(tmp):
    path = _write(tmp / "velociti.json", '{"rows": []}')
    return Fault("velociti", path, path, None, "expected a JSON list of rows")


@case
def truncated_vilma_json(tmp):
    path = vilma(tmp, text=lambda t: t[: t.index(MARK)])
    last_line = path.read_bytes().count(b"\n") + 1
    return Fault("vilma", path, path, rf"line {last_line} column \d+", "malformed JSON: Unterminated string",
                 pattern=True)


@case
def unrecognised_videocon_header(tmp):
    path = write_csv(tmp / "mystery.csv", [["who", "what"], ["me", "this"]])
    return Fault("videocon", path, path, "line 1", r"not a VideoCon annotation file: header \['who', 'what'\]")


def _fifo(benchmark: str, name: str) -> Callable[[Path], Fault]:
    def make(tmp: Path) -> Fault:
        os.mkfifo(tmp / name)
        return Fault(benchmark, tmp / name, tmp / name, None, "not a regular file")
    return make


for _bench, _name in [("vilma", "relations.json"), ("vitatecs", "Direction.jsonl"), ("velociti", "velociti.csv"),
                      ("videocon", "videocon_llm_entailment.csv"), ("vinoground", "vinoground.csv")]:
    CASES[f"fifo_{_bench}"] = _fifo(_bench, _name)


def _run(argv: list[str]) -> int:
    """``main(argv)`` on a daemon thread, so a reader that blocks (on a FIFO) fails the test instead of hanging it."""
    result: list[int] = []
    worker = threading.Thread(target=lambda: result.append(main(argv)), daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert result, f"foilbench {' '.join(argv)} did not finish (blocked on a file?)"
    return result[0]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_fault_is_one_line_naming_the_file_and_place(name, tmp_path, capsys):
    fault = CASES[name](tmp_path)
    code = _run(["summary", fault.benchmark, str(fault.data), *fault.argv])
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert code == 2, captured.err
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    where = "" if fault.where is None else ", " + (fault.where if fault.pattern else re.escape(fault.where))
    assert re.match(re.escape(f"foilbench summary: error: {fault.file}") + where + ": ", lines[0]), lines[0]
    assert re.search(fault.problem, lines[0]), lines[0]


# ---- what must still load ----------------------------------------------------------------------------------------

BOM_CASES = {
    "vilma": ("vilma", vilma, None),
    "vitatecs": ("vitatecs", vitatecs, None),
    "velociti_json": ("velociti", lambda t: velociti(t, "json"), None),
    "velociti_jsonl": ("velociti", lambda t: velociti(t, "jsonl"), None),
    "velociti_csv": ("velociti", lambda t: velociti(t, "csv"), None),
    "velociti_v1": ("velociti", velociti_v1, None),
    "videocon": ("videocon", videocon, None),
    "vinoground_csv": ("vinoground", vinoground, None),
    "vinoground_textscore": ("vinoground", vinoground, "vinoground_textscore.json"),
    "vinoground_videoscore": ("vinoground", vinoground, "vinoground_videoscore.json"),
}


@pytest.mark.parametrize("name", sorted(BOM_CASES))
def test_a_byte_order_mark_is_read_as_utf8_sig(name, tmp_path):
    benchmark, write, other = BOM_CASES[name]
    plain = load(benchmark, write(tmp_path / "plain"))
    data = write(tmp_path / "bom")
    target = tmp_path / "bom" / other if other else data
    target.write_bytes(BOM + target.read_bytes())
    marked = load(benchmark, data)
    assert marked.to_frame().drop(columns="videos").equals(plain.to_frame().drop(columns="videos"))
    assert [n.replace("bom", "plain") for n in marked.notes] == plain.notes
    if name == "velociti_v1":
        assert marked.notes[0] == "action_adv.csv: 2 rows (v1 subset)"


def _repeat_line(path: Path, line: int) -> Path:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines + [lines[line - 1]]))
    return path


@pytest.mark.parametrize("benchmark, write, line", [
    ("videocon", videocon, 3),
    ("vitatecs", vitatecs, 2),
    ("velociti", lambda t: velociti(t, "jsonl"), 1),
    ("velociti", velociti_v1, 2),
])
def test_an_exact_repeat_row_is_kept_as_released_and_noted(tmp_path, benchmark, write, line):
    once = load(benchmark, write(tmp_path / "once"))
    path = _repeat_line(write(tmp_path / "twice"), line)
    twice = load(benchmark, path)
    assert len(twice) == len(once) + 1
    repeat = len(path.read_text().splitlines())
    assert (f"1 row(s) repeat an earlier row exactly and are kept as released (the official scripts count every "
            f"row): {path.name} line {repeat} (= {path.name} line {line})") in twice.notes
    assert not any("repeat" in note for note in once.notes)


def test_paths_out_of_the_root_load_when_allowed(tmp_path, capsys):
    path = vitatecs(tmp_path, change=lambda rows: rows[1].update(video_name="../../outside/private.mp4"))
    root = tmp_path / "videos"
    assert main(["summary", "vitatecs", str(path), "--video-root", str(root), "-o", "allow_outside_root=true"]) == 0
    assert "2 distinct files" in capsys.readouterr().out
    items = load("vitatecs", path, video_root=root, allow_outside_root=True)
    assert items.items[1].clips[0].path == str(root / "MSRVTT/../../outside/private.mp4")


def test_a_link_inside_the_root_may_point_anywhere(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "video1.mp4").write_bytes(b"x")
    root = tmp_path / "videos"
    root.mkdir()
    (root / "MSRVTT").symlink_to(outside)
    items = load("vitatecs", vitatecs(tmp_path), video_root=root)
    assert [it.clips[0].exists for it in items] == [False, True]


# ---- loader options ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("benchmark, write", [("vilma", vilma), ("vitatecs", vitatecs), ("velociti", velociti),
                                              ("videocon", videocon), ("vinoground", vinoground)])
def test_an_unknown_loader_option_lists_the_loader_options(tmp_path, capsys, benchmark, write):
    assert main(["summary", benchmark, str(write(tmp_path)), "-o", "bogus=1"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"foilbench summary: error: the {benchmark} loader has no option 'bogus'; its options "
                               "(with their defaults): ")
    assert "allow_outside_root=false (true/false)" in lines[0]


@pytest.mark.parametrize("options, message", [
    (["valid_only=maybe"], "the vilma loader's option 'valid_only' must be true/false, got 'maybe'"),
    (["time_unit=3"], "the vilma loader's option 'time_unit' must be text or null, got 3"),
    (["allow_outside_root=1"], "the vilma loader's option 'allow_outside_root' must be true/false, got 1"),
    (["valid_only=true", "valid_only=false"], "option 'valid_only' given twice"),
    (["valid_only"], "option must look like KEY=VALUE, got 'valid_only'"),
])
def test_bad_loader_option_values_are_one_line(tmp_path, capsys, options, message):
    argv = ["summary", "vilma", str(vilma(tmp_path))]
    for option in options:
        argv += ["-o", option]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip() == f"foilbench summary: error: {message}"


def test_options_are_checked_on_every_path_to_a_loader(tmp_path):
    from bench.registry import spec

    path = vilma(tmp_path)
    for call in (lambda: load("vilma", path, bogus=1), lambda: spec("vilma").load(path, bogus=1)):
        with pytest.raises(ValueError, match="the vilma loader has no option 'bogus'"):
            call()
    assert len(spec("vilma").load(path, valid_only=False)) == 4
