"""The generated sample suite: deterministic, loadable in each benchmark's format with every subtest, labelled with
foil types, and true of its videos (captions read back from the decoded pixels by ``tests/world_reader.py``)."""

from __future__ import annotations

import argparse
import collections
import csv
import json
import math
import re
import shlex
from functools import lru_cache
from pathlib import Path

import decord
import numpy as np
import pytest

import bench.devkit.world.benchmarks as benchmarks
from bench.cli import main
from bench.commands.sample import register
from bench.devkit.world import ensure_sample, generate_sample
from bench.devkit.world.stories import FOIL_TYPES, times
from bench.devkit.world import suite as world_suite
from bench.devkit.world.mvp import SUBSETS as MVP_SUBSETS
from bench.devkit.world.tvbench import TASKS as TVBENCH_TASKS
from bench.devkit.world.suite import STAMP, VERSION, WRITERS, Writer, chosen
from bench.items import Clip, Item
from bench.loaders import load, tempcompass, temporalbench, tvbench, velociti, vinoground, vitatecs
from bench.registry import names
from bench.scoring.prompts import PROMPTS
from world_reader import Reader

# ViLMA's thirteen subtest files (shared/BENCHMARKS.md 1.1)
VILMA_SUBTESTS = {f"counting-{level}-spelled-{unit}" for level in ("easy", "hard") for unit in ("pts", "sec")} | {
    "SRL_Action_Replacement_Top_1000", "SRL_Actor_Swapping", "relations", "rare-actions-verb-foils",
    "rare-actions-noun-foils"} | {f"change-state-{kind}" for kind in ("action", "prestate", "poststate", "inverse")}
ALL = {"vilma": {"valid_only": False, "time_unit": None}}  # loader options that keep every item


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    return generate_sample(tmp_path_factory.mktemp("s") / "suite", benchmarks=list(WRITERS))


def _items(suite, name, **options):
    s = suite[name]
    return load(name, s.data_path, video_root=s.video_root, **{**s.loader_options, **options})


@lru_cache(maxsize=None)
def _decoded(path: str) -> tuple[np.ndarray, float]:
    reader = decord.VideoReader(path)
    return reader.get_batch(list(range(len(reader)))).asnumpy(), reader.get_avg_fps()


@lru_cache(maxsize=None)
def _video_reader(path: str) -> Reader:
    frames, fps = _decoded(path)
    return Reader.of(frames, fps)


def _reader(clip: Clip, seconds: tuple[float, float | None] | None = None) -> Reader:
    """The frames of a clip's window (``pts``: frame slice; seconds: both ends included, as torchvision reads)."""
    whole = _video_reader(clip.path)
    blobs, fps = whole.frames, whole.fps
    if clip.unit == "pts":
        lo, hi = int(clip.start or 0), len(blobs) if clip.end is None else int(clip.end)
    else:
        start, end = seconds or clip.window_seconds()
        lo = math.ceil((start or 0) * fps - 1e-6)
        hi = len(blobs) if end is None else min(len(blobs), math.floor(end * fps + 1e-6) + 1)
    return Reader(blobs[lo:hi], fps)


def _velociti_event(item: Item) -> tuple[float, float]:
    """VELOCITI's events are the 2-s parts of the video: Ev1 = [0, 2) s, ..."""
    events = [int(n) for n in re.findall(r"Ev(\d+)", item.labels["event"])]
    return 2.0 * (min(events) - 1), 2.0 * max(events) - 1e-3


def test_every_benchmark_loads_with_all_videos_every_subtest_and_a_foil_type_per_item(suite):
    expected = {"vilma": VILMA_SUBTESTS, "vitatecs": set(vitatecs.ASPECTS), "velociti": set(velociti.TESTS),
                "videocon": {"llm", "human", "ssv2_temporal", "atp_hard"}, "vinoground": set(vinoground.MAJORS),
                "mvp": set(MVP_SUBSETS), "temporalbench": {"short", "long"}, "tempcompass": set(tempcompass.ASPECTS),
                "tvbench": {tvbench.NAMES[stem] for stem in TVBENCH_TASKS}}  # the world asks six of TVBench's ten
    assert set(suite) == set(names())
    for name in suite:
        items = _items(suite, name, **ALL.get(name, {}))
        assert {it.subset for it in items} == expected[name], name
        assert all(c.exists for it in items for c in it.clips), name
        assert all(it.labels["foil_type"] in FOIL_TYPES for it in items), name
        with Path(suite[name].loader_options["labels"]).open(newline="") as fh:
            labelled = [row["item_id"] for row in csv.DictReader(fh)]
        assert sorted(labelled) == sorted(it.item_id for it in items), name
    videocon = _items(suite, "videocon")
    assert {it.labels["misalignment"] for it in videocon if it.subset == "llm"} == set(
        benchmarks.VIDEOCON_MISALIGNMENTS)
    assert sorted(it.labels["type"] for it in videocon if it.subset == "atp_hard") == ["TC", "TN", "TP", "TP"]
    assert {it.labels["hard"] for it in videocon if it.subset == "human"} == {True, False}


def test_the_small_suite_stays_small_and_covers_the_required_foil_types(suite):
    found = collections.Counter()
    for name in suite:
        items = _items(suite, name)
        per_format = collections.Counter(it.labels.get("format") for it in items if it.role == "main")
        assert max(per_format.values()) <= 30, name  # TempCompass asks each of its questions in four formats
        found.update(it.labels["foil_type"] for it in items)
    assert {"order", "direction", "action", "attribute", "count", "relation"} <= set(found)


def test_vilma_has_valid_and_invalid_items_in_both_time_units(suite):
    main = [it for it in _items(suite, "vilma", **ALL["vilma"]) if it.role == "main"]
    records = {f"{path.stem}/{key}": record for path in suite["vilma"].data_path.glob("*.json")
               for key, record in json.loads(path.read_text()).items()}
    invalid = {i for i, r in records.items() if r["mturk"]["caption"] < 2 or r["proficiency"]["human"]["caption"] != 1}
    assert {it.item_id for it in main if not it.labels["valid"]} == invalid
    assert 0 < len(invalid) < len(main) / 3
    assert len(_items(suite, "vilma", time_unit=None)) == 2 * (len(main) - len(invalid))
    pts = {it.item_id.split("/", 1)[1]: it.clips[0] for it in main if it.subset.endswith("-pts")}
    sec = {it.item_id.split("/", 1)[1]: it.clips[0] for it in main if it.subset.endswith("-sec")}
    assert pts.keys() == sec.keys() and pts
    for key, clip in pts.items():
        assert (clip.unit, clip.fps) == ("pts", 30.0) and sec[key].unit == "sec"
        assert clip.window_seconds() == pytest.approx(sec[key].window_seconds(), abs=1e-3)
        assert clip.path == sec[key].path and "/quva/normalized_videos/" in clip.path
        assert _decoded(clip.path)[1] == pytest.approx(30.0)
    assert {it.labels["source"] for it in main} == {"QUVA", "something-something-v2", "coin", "star", "VidSitu",
                                                     "RareAct"}
    assert all(len(it.texts) == 3 for it in main if it.subset.startswith("SRL_Action") and it.labels["class"] in (
        "moves", "jumps"))


@pytest.mark.slow
def test_vilmas_foil_classes_and_predicted_words_are_the_words_its_foils_put_in(tmp_path):
    from bench.devkit.world.benchmarks import write_vilma

    write_vilma(tmp_path, size="full")  # the small suite has two noun foils: too few to catch a mismatch
    noun = json.loads((tmp_path / "data" / "rare-actions-noun-foils.json").read_text()).values()
    for record in noun:
        assert record["classes_foil"][0] in record["foils"][0].split() and record["class"] in record["caption"].split()
    changes = [record["proficiency"] for path in (tmp_path / "data").glob("change-state-*.json")
               for record in json.loads(path.read_text()).values()]
    for proficiency in changes:
        foil = proficiency["foils"][0].lower().rstrip(".").split()
        assert proficiency["predicted_word"] in foil and proficiency["mask_target"] not in foil
    assert noun and changes


def _counting_rule_broken(records) -> list[str]:
    """Keys of ViLMA counting records that break the paper's rule (section 3): easy captions count 1-3 and foils
    more, up to 10; difficult captions count more than 3 and foils 1-3."""
    broken = []
    for key, record in records:
        caption, foil = record["class"], record["classes_foil"][0]
        small = (True, False) if key.startswith("counting-easy") else (False, True)
        if (caption <= 3, foil <= 3) != small or min(caption, foil) < 1 or max(caption, foil) > 10:
            broken.append(key)
    return broken


def _counting_records(folder: Path) -> list[tuple[str, dict]]:
    """(key, record) of every ViLMA counting file in ``folder`` whose windows are in seconds."""
    return [(key, record) for path in sorted(folder.glob("counting-*-spelled-sec.json"))
            for key, record in json.loads(path.read_text()).items()]


def test_vilmas_counting_subtests_put_the_small_numbers_where_the_paper_does(suite):
    records = _counting_records(suite["vilma"].data_path)
    assert {key.split("-")[1] for key, _ in records} == {"easy", "hard"}
    assert _counting_rule_broken(records) == []
    for key, record in records:  # the caption and the foil say the numbers the record's classes give
        said = [record["template"].replace("<number> times", times(n)) for n in (record["class"],
                                                                                 *record["classes_foil"])]
        assert said == [record["caption"], *record["foils"]], key


def test_the_counting_rule_is_the_released_files_rule(realdata):
    """The world's rule is the one every released counting record follows (959 easy, 895 difficult)."""
    records = _counting_records(realdata / "vilma")
    if not records:
        pytest.skip("ViLMA's counting files are not among the real annotation files")
    assert _counting_rule_broken(records) == []


def _long_video_holds(clip: Clip, text: str) -> bool:
    """A long TemporalBench video is two stories in turn, its caption two sentences: each true of its half."""
    whole = _video_reader(clip.path)
    half = len(whole.frames) // 2
    parts = text.removesuffix(".").split(". ")
    assert len(parts) == 2, text
    return all(Reader(whole.frames[k * half:(k + 1) * half], whole.fps).holds(part) for k, part in enumerate(parts))


@pytest.mark.parametrize("name", ["vilma", "vitatecs", "velociti", "videocon", "vinoground", "mvp", "temporalbench"])
def test_every_caption_is_true_of_its_video_and_every_foil_false(suite, name):
    checked = 0
    for item in _items(suite, name, **ALL.get(name, {})):
        for c, clip in enumerate(item.clips):
            for t, text in enumerate(item.texts):
                if name == "velociti":  # pos: true of its events; neg: false of the whole video
                    holds = _reader(clip, _velociti_event(item) if t == 0 else (0.0, None)).holds(text)
                elif name == "temporalbench" and item.subset == "long":
                    holds = _long_video_holds(clip, text)
                else:
                    holds = _reader(clip).holds(text)
                assert holds == (t in item.truth[c]), (item.item_id, c, text)
                checked += 1
    assert checked >= 2 * len(_items(suite, name))


def test_mvp_pairs_ask_one_question_with_opposite_answers_and_mini_is_every_other_pair(suite):
    full, mini = _items(suite, "mvp"), _items(suite, "mvp", split="mini")
    assert all(it.truth[0] != it.truth[1] and len(it.texts) == 2 for it in full)
    assert [it.item_id for it in mini] == [it.item_id for it in full if int(it.item_id.rsplit("_", 1)[1]) % 2 == 0]
    assert {it.labels["source"] for it in full} == {s for _, sources in MVP_SUBSETS.values() for s in sources}


def test_temporalbench_questions_are_the_released_prompt_with_the_true_caption_at_gt(suite):
    root = suite["temporalbench"].data_path
    for name in ("temporalbench_short_qa.json", "temporalbench_long_qa.json"):
        for entry in json.loads((root / name).read_text()):
            lines = entry["question"].split("\n")
            assert lines[0] == "Which caption best describes this video?" and lines[1][:3] == "A. "
            assert entry["idx"].startswith(entry["video_name"] + "_") and entry["GT"] in ("A", "B")
    items = _items(suite, "temporalbench")
    assert {it.labels["category"] for it in items if it.subset == "short"} <= set(temporalbench.CATEGORIES)
    assert max(collections.Counter(it.labels["video_name"] for it in items).values()) >= 2  # MBA groups


def test_counting_windows_decide_the_count(suite):
    items = [it for it in _items(suite, "vilma", **ALL["vilma"])
             if it.subset.startswith("counting") and it.role == "main"]
    assert items
    for it in items:
        assert not _reader(Clip(it.clips[0].path)).holds(it.texts[0]), it.item_id  # more jumps outside the window


def test_generation_is_deterministic(suite, tmp_path):
    again = generate_sample(tmp_path / "again", benchmarks=list(WRITERS))
    root_a, root_b = suite["vilma"].video_root.parents[1], again["vilma"].video_root.parents[1]
    files = sorted(p.relative_to(root_a) for p in root_a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(root_b) for p in root_b.rglob("*") if p.is_file())
    videos = 0
    for rel in files:
        assert (root_a / rel).read_bytes() == (root_b / rel).read_bytes(), rel
        if rel.suffix in (".mp4", ".webm", ".avi"):
            assert np.array_equal(_decoded(str(root_a / rel))[0], _decoded(str(root_b / rel))[0]), rel
            videos += 1
    assert videos >= 40 and sum((root_a / rel).stat().st_size for rel in files) < 5_000_000


def test_another_seed_draws_another_world(suite, tmp_path):
    other = generate_sample(tmp_path / "other", seed=1)
    assert (other["vitatecs"].data_path / "Direction.jsonl").read_text() != (
        suite["vitatecs"].data_path / "Direction.jsonl").read_text()


def test_vinoground_questions_follow_the_documented_format(suite):
    root = suite["vinoground"].data_path
    pairs = _items(suite, "vinoground")
    text_q = json.loads((root / "vinoground_textscore.json").read_text())
    video_q = json.loads((root / "vinoground_videoscore.json").read_text())
    assert [q["idx"] for q in text_q] == [f"{i}_{s}" for i in range(len(pairs)) for s in ("pos", "neg")]
    assert [q["idx"] for q in video_q] == [q["idx"] for q in text_q]
    for item in pairs:
        i = int(item.item_id)
        pos, neg = item.texts
        for k, (side, gt) in enumerate((("pos", "A"), ("neg", "B"))):
            tq, vq = text_q[2 * i + k], video_q[2 * i + k]
            assert tq["question"] == PROMPTS["vinoground-text"].format(option_a=pos, option_b=neg)
            assert tq["question"].split("\n")[1:3] == [f"A. {pos}", f"B. {neg}"]
            assert vq["question"].split("\n")[1] == f"Caption: {item.texts[k]}"
            assert vq["question"].split("\n")[2:4] == ["A. The first fragment (before black frame)",
                                                       "B. The second fragment (after black frame)"]
            assert (tq["GT"], vq["GT"]) == (gt, gt)
            assert tq["video_name"] == f"vinoground_videos/{i}_{side}.mp4"
            assert vq["video_name"] == f"vinoground_videos_concated/{i}.mp4"


def test_vinoground_concatenated_videos_are_pos_black_gap_neg(suite):
    root = suite["vinoground"].data_path
    for i, item in enumerate(_items(suite, "vinoground")):
        frames, fps = _decoded(str(root / item.labels["video_pos_video"]))
        pos, neg = (_decoded(c.path)[0] for c in item.clips)
        black = frames.reshape(len(frames), -1).max(axis=1) < 30
        gap = int(round(2 * fps))
        assert len(frames) == len(pos) + gap + len(neg)
        assert black[len(pos):len(pos) + gap].all() and black.sum() == gap
        assert np.abs(frames[:len(pos)].astype(int) - pos).mean() < 2
        assert np.abs(frames[len(pos) + gap:].astype(int) - neg).mean() < 2


def test_velociti_events_are_two_second_parts_of_short_videos(suite):
    items = _items(suite, "velociti")
    for it in items:
        frames, fps = _decoded(it.clips[0].path)
        start, end = (int(n) for n in re.search(r"_seg_(\d+)_(\d+)$", it.labels["video_id"]).groups())
        assert len(frames) / fps == pytest.approx(end - start)
        assert _velociti_event(it)[1] <= end - start
    events = {it.labels["event"] for it in items}
    assert "(Ev1, Ev2)" in events and events - {"(Ev1, Ev2)"} and events <= {"Ev1", "Ev2", "(Ev1, Ev2)"}
    assert {it.labels["in_subset"] for it in items} == {True, False}


@pytest.mark.slow
def test_ensure_sample_generates_once_and_regenerates_when_outdated(tmp_path, monkeypatch):
    out = tmp_path / "sample"
    sets = ensure_sample(out)
    stamp = out / STAMP
    assert stamp.read_text().split()[0] == VERSION
    mtime = stamp.stat().st_mtime_ns
    assert ensure_sample(out)["vilma"].data_path == sets["vilma"].data_path
    assert stamp.stat().st_mtime_ns == mtime
    stamp.write_text("0")
    (out / "stray.txt").write_text("from the outdated suite")
    ensure_sample(out)
    assert stamp.read_text().split()[0] == VERSION and not (out / "stray.txt").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["sample"]
    mtime = stamp.stat().st_mtime_ns
    ensure_sample(out, seed=3)
    assert stamp.stat().st_mtime_ns != mtime and stamp.read_text().split()[1:] == ["small", "3"]
    monkeypatch.setenv("FOILBENCH_HOME", str(tmp_path / "home"))
    assert ensure_sample()["vitatecs"].data_path == tmp_path / "home" / "sample-small" / "vitatecs" / "data"


def test_a_crash_while_generating_leaves_the_old_suite_and_no_half_written_one(tmp_path, monkeypatch):
    out = tmp_path / "sample"
    ensure_sample(out)
    (out / STAMP).write_text("0")

    def broken(root: Path, size: str, seed: int = 0) -> None:
        (root / "partial.json").write_text("{")
        raise RuntimeError("disk full")

    monkeypatch.setitem(WRITERS, "vinoground", Writer(broken, data=".", videos="."))
    with pytest.raises(RuntimeError, match="disk full"):
        ensure_sample(out)
    assert [p.name for p in tmp_path.iterdir()] == ["sample"]
    assert (out / STAMP).read_text() == "0" and not list(out.rglob("partial.json"))
    assert (out / "vinoground" / "vinoground.csv").is_file()


def _fake_writers(monkeypatch) -> None:
    """Writers that only leave a marker file: the suite's bookkeeping tested without rendering videos."""
    def marker(root: Path, size: str, seed: int = 0) -> None:
        (root / "written").write_text(f"{size} {seed}")

    fakes = {"one": Writer(marker), "two": Writer(marker), "later": Writer(marker, default=False)}
    monkeypatch.setattr(world_suite, "WRITERS", fakes)


def test_the_default_suite_is_the_demos_world_and_others_are_added_on_demand(tmp_path, monkeypatch):
    assert chosen() == ["vilma", "vitatecs", "velociti", "videocon", "vinoground"]  # the demo's five
    _fake_writers(monkeypatch)
    out = tmp_path / "sample"
    assert list(ensure_sample(out)) == ["one", "two"]
    assert (out / STAMP).read_text() == f"{VERSION} small 0" and not (out / "later").exists()
    sets = ensure_sample(out, benchmarks=["later"])
    assert list(sets) == ["later"] and (out / "later" / "written").is_file()
    assert (out / STAMP).read_text() == f"{VERSION} small 0 one,two,later"  # the suite kept what it held
    stamp = (out / STAMP).stat().st_mtime_ns
    assert list(ensure_sample(out)) == ["one", "two"] and (out / STAMP).stat().st_mtime_ns == stamp
    assert list(ensure_sample(out, benchmarks=["two", "later"])) == ["two", "later"]
    assert (out / STAMP).stat().st_mtime_ns == stamp  # all there: nothing rewritten
    with pytest.raises(ValueError, match="the generated world writes no 'nope'; it writes one, two, later"):
        ensure_sample(out, benchmarks=["nope"])


def test_sample_command_prints_a_working_load_command_per_benchmark(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="foilbench")
    register(parser.add_subparsers())
    args = parser.parse_args(["sample", "--out", str(tmp_path / "s")])
    assert args.func(args) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == list(WRITERS)
    for line in lines:
        command = shlex.split(line)[1:]
        assert command[:2] == ["foilbench", "summary"] and "labels=" in line and main(command[1:]) == 0
        assert ", 0 missing on disk" in capsys.readouterr().out
    stamp = tmp_path / "s" / STAMP
    mtime = stamp.stat().st_mtime_ns
    args.func(args)
    assert stamp.stat().st_mtime_ns == mtime
    args.func(parser.parse_args(["sample", "--out", str(tmp_path / "s"), "--force"]))
    assert stamp.stat().st_mtime_ns != mtime
