"""The fingerprints of a build's stages that tell where two machines' builds part (bench.devkit.train.crosscheck)."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from pathlib import PurePosixPath

import pytest

import bench
from bench.devkit.train import build, crosscheck, pinned
from bench.paths import PROJECT_ROOT
from bench.devkit.world.split import training_split


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    return training_split(tmp_path_factory.mktemp("split") / ".split", videos_per_kind=1, pairs=1)


def test_the_pinned_kernels_give_the_same_fingerprints_in_two_children():
    first, second = crosscheck.in_child("kernels"), crosscheck.in_child("kernels")
    assert first == second
    assert set(first) == set(crosscheck._kernels())
    assert len(set(first.values())) == len(first)  # every kernel fingerprints its own output


@pytest.mark.skipif(pinned.mkl_branch() is None, reason="this torch carries no MKL")
def test_the_childs_matrix_product_is_mkls_pinned_branch_not_the_callers(monkeypatch):
    # a caller that asks MKL for its COMPATIBLE branch (SSE2 sums) still gets a child on the pinned branch, whose
    # products differ from COMPATIBLE's
    pinned_product = crosscheck.in_child("kernels")["matrix product (MKL)"]
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    assert crosscheck.in_child("kernels")["matrix product (MKL)"] == pinned_product
    monkeypatch.setattr(pinned, "PINNED", {**pinned.PINNED, "MKL_CBWR": "COMPATIBLE"})
    assert crosscheck.in_child("kernels")["matrix product (MKL)"] != pinned_product


def test_split_and_decoding_fingerprints_follow_the_files(split, tmp_path):
    files, decoded = crosscheck.split_files(split), crosscheck.decoded_clips(split)
    assert (files, decoded) == (crosscheck.split_files(split), crosscheck.decoded_clips(split))
    copy = training_split(tmp_path / ".split", videos_per_kind=1, pairs=1)  # written again: the same bytes
    assert crosscheck.split_files(copy) == files
    video = copy.root / sorted({e.video for e in copy.examples})[0]
    other = copy.root / sorted({e.video for e in copy.examples})[1]
    video.write_bytes(other.read_bytes())
    assert crosscheck.split_files(copy) != files
    assert crosscheck.decoded_clips(copy) != decoded


def test_compare_names_each_stage_and_each_kernel_and_model():
    mine = {"split files": "a", "decoded clips": "b", "processed frames": {"clip-world": "p"},
            "kernels": {"mm": "1", "exp": "2"}, "models": {"clip-world": "x"}}
    theirs = {"split files": "a", "decoded clips": "c", "processed frames": {"clip-world": "p"},
              "kernels": {"mm": "1", "exp": "3"}, "models": {"clip-world": "x", "xclip-world": "y"}}
    assert crosscheck.compare(mine, theirs) == [
        ("split files", "same"), ("decoded clips", "differs"), ("processed frames: clip-world", "same"),
        ("kernels: exp", "differs"), ("kernels: mm", "same"), ("models: clip-world", "same"),
        ("models: xclip-world", "not recorded")]


def test_the_command_says_where_this_machine_first_differs_from_each_recorded_one(monkeypatch, tmp_path, capsys):
    mine = {"cpu": "this CPU", "version": crosscheck.VERSION, "torch": "t", "split files": "a",
            "decoded clips": "b", "processed frames": {}, "kernels": {"mm": "1"}, "models": {}}
    monkeypatch.setattr(crosscheck, "record", lambda home: mine)
    monkeypatch.setattr(crosscheck, "RECORDS", tmp_path / "records.json")
    crosscheck.RECORDS.write_text(json.dumps({
        "other": {**mine, "cpu": "other CPU", "decoded clips": "z", "kernels": {"mm": "2"}},
        "old": {**mine, "version": "0"}}))
    assert crosscheck.main(["--record", "here"]) == 0
    out = capsys.readouterr().out
    assert "against other (other CPU): first differs at decoded clips" in out
    assert "differs      kernels: mm" in out
    assert "against old: recorded at build 0, not compared" in out
    assert json.loads(crosscheck.RECORDS.read_text())["here"] == mine
    crosscheck.main([])
    assert "against here (this CPU): no stage differs" in capsys.readouterr().out


def test_the_readmes_models_are_compared_by_their_fingerprints(monkeypatch, tmp_path):
    monkeypatch.setattr(crosscheck, "RECORDS", tmp_path / "none.json")
    monkeypatch.setattr(crosscheck, "reference", lambda: {"clip-world": "x"})
    readme = crosscheck.machines()["the README's models"]
    assert readme["models"] == {"clip-world": "x"} and readme["version"] == crosscheck.VERSION
    monkeypatch.setattr(crosscheck, "reference", lambda: {})
    assert crosscheck.machines() == {}


def test_processed_frames_are_each_built_models_processor_output_on_the_splits_clips(split, tmp_path, monkeypatch):
    from bench.devkit import tiny

    folder = tiny.build_clip(tmp_path / "models" / "clip-world")
    monkeypatch.setattr(crosscheck, "default_split", lambda home: split)
    monkeypatch.setattr(crosscheck, "models", lambda home: {"clip-world": "its fingerprint"})
    first = crosscheck.processed(tmp_path)
    assert list(first) == ["clip-world"] and crosscheck.processed(tmp_path) == first
    config = next(folder.glob("*processor*config.json"))
    settings = json.loads(config.read_text())
    image = settings.get("image_processor", settings)
    image["image_mean"] = [0.0, 0.0, 0.0]
    config.write_text(json.dumps(settings))
    assert crosscheck.processed(tmp_path) != first  # another normalisation, other prepared frames


def test_the_recorded_fingerprints_ship_with_the_package():
    # the demo and the crosscheck command read both files at run time: an install from a wheel must carry them
    patterns = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    root = PurePosixPath(bench.__file__).parent
    for path in (crosscheck.RECORDS, build.REFERENCE):
        inside = PurePosixPath(path).relative_to(root).as_posix()
        assert path.is_file() and any(fnmatch.fnmatch(inside, p) for p in patterns["bench"]), inside
