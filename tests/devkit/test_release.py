"""The released models: the default seed's full build shipped with the code, which data homes start from, and the
demo's comparison of its models with them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.devkit.demo import build_estimate, released_line
from bench.devkit.train import build, crosscheck, pinned

NAMES = ["clip-world", "xclip-world"]


def _model(folder: Path, name: str, weights: bytes, *, seed: int = build.DEFAULT_SEED, seconds: float = 12.0) -> None:
    folder.mkdir(parents=True)
    (folder / "model.safetensors").write_bytes(weights)
    stamp = {**build._stamp(name, seed, build.FULL), "built": {"seconds": seconds}}
    (folder / build.STAMP).write_text(json.dumps(stamp))


@pytest.fixture
def release(tmp_path, monkeypatch):
    """A scratch release of two models (weights files and stamps only) and no recorded machines; the pinned build
    replaced by one that writes other weights and records what it was asked."""
    monkeypatch.setattr(build, "RELEASED", tmp_path / "released")
    monkeypatch.setattr(crosscheck, "RECORDS", tmp_path / "crosscheck.json")
    for name in NAMES:
        _model(build.RELEASED / name, name, f"released {name}".encode(), seconds=30.0)
    asked = []

    def fake_build(names, home, seed, scale, progress):
        asked.append(list(names))
        for name in build.needed(names):
            if not build.is_current(name, home, seed=seed, scale=build.Scale(**scale)):
                target = build.models_home(home) / name
                if target.exists():
                    raise AssertionError(f"{name} is in the way of the build")
                _model(target, name, f"built {name}".encode(), seed=seed)

    monkeypatch.setattr(pinned, "build", fake_build)
    return asked


def test_the_release_is_this_builds_default_seed_at_full_scale_built_pinned():
    # a recipe change bumps VERSION, and this fails until the default seed's models are built and released again
    assert set(build.released()) == set(build.MODELS)
    for name in build.MODELS:
        built = json.loads((build.RELEASED / name / build.STAMP).read_text())["built"]
        assert built["env"] == pinned.PINNED and built["mkl_branch"] == pinned.MKL_BRANCH and not built["onednn"]
        assert "released" not in built and built["seconds"] > 0


def test_a_fresh_data_home_starts_from_the_released_copies(release, tmp_path):
    home = tmp_path / "home"
    assert build_estimate(NAMES, home) == \
        "copying the released clip-world, xclip-world: the bytes the README's lessons were measured with"
    folders = build.trained_models(["xclip-world"], home, progress=False)  # and the CLIP it starts from
    assert release == []  # nothing built
    for name in NAMES:
        assert build.fingerprint(build.models_home(home) / name) == build.released()[name]
        assert build.from_release(name, home)
    assert folders == {"xclip-world": build.models_home(home) / "xclip-world"}
    assert build_estimate(NAMES, home) == "already here"
    assert released_line(NAMES, home).startswith("the released models, the bytes the README's lessons were measured")


def test_train_builds_in_place_of_the_released_copies_and_says_what_the_release_took(release, tmp_path):
    home = tmp_path / "home"
    build.trained_models(NAMES, home, progress=False)
    assert build_estimate(NAMES, home, train=True) == ("building clip-world, xclip-world now: the released build "
                                                       "took 60 s on the 2-core machine that built it; never built in "
                                                       "this data home")
    build.trained_models(NAMES, home, progress=False, train=True)
    assert release == [NAMES]
    assert not any(build.from_release(name, home) for name in NAMES)
    assert build.fingerprint(build.models_home(home) / "clip-world") != build.released()["clip-world"]
    assert build_estimate(NAMES, home, train=True) == "already here"  # built here: nothing to replace
    line = released_line(NAMES, home)
    assert line.startswith("not the released bytes") and "recorded on" not in line
    mine = {name: build.fingerprint(build.models_home(home) / name) for name in NAMES}
    crosscheck.RECORDS.write_text(json.dumps({"Another CPU": {"version": build.VERSION, "models": mine}}))
    assert "; the bytes recorded on Another CPU)" in released_line(NAMES, home)


def test_a_model_built_with_the_released_bytes_says_so(release, tmp_path):
    home = tmp_path / "home"
    for name in NAMES:
        _model(build.models_home(home) / name, name, f"released {name}".encode())
    assert released_line(NAMES, home).startswith("built here, the same bytes as the released models")


def test_another_seed_is_built_and_another_version_is_not_released(release, tmp_path):
    home = tmp_path / "home"
    build.trained_models(["clip-world"], home, seed=build.DEFAULT_SEED + 1, progress=False)
    assert release == [["clip-world"]] and not build.from_release("clip-world", home)
    stamp = json.loads((build.RELEASED / "clip-world" / build.STAMP).read_text())
    (build.RELEASED / "clip-world" / build.STAMP).write_text(json.dumps({**stamp, "version": "0"}))
    assert set(build.released()) == {"xclip-world"}
    assert released_line(NAMES, home) == f"no released models of build {build.VERSION} to compare them with"


def test_release_copies_the_default_seeds_full_build_and_refuses_another(release, tmp_path):
    home = tmp_path / "home"
    build.trained_models(NAMES, home, progress=False, train=True)
    assert build.release(NAMES, home) == build.RELEASED
    assert build.released() == {name: build.fingerprint(build.models_home(home) / name) for name in NAMES}
    other = tmp_path / "other"
    build.trained_models(["clip-world"], other, seed=build.DEFAULT_SEED + 1, progress=False)
    with pytest.raises(ValueError, match="is not build .*'s default seed at full scale"):
        build.release(["clip-world"], other)
    copied = tmp_path / "copied"
    build.trained_models(NAMES, copied, progress=False)
    assert all(build.from_release(name, copied) for name in NAMES)
    build.release(NAMES, copied)  # releasing copies of the release: the same bytes, and no mark of a copy
    assert not any("released" in json.loads((build.RELEASED / n / build.STAMP).read_text())["built"] for n in NAMES)


def test_the_build_benchmark_trains_and_never_copies_the_release(release, tmp_path, monkeypatch):
    from bench.devkit.perf import build as perf_build
    from bench.devkit.world import split

    monkeypatch.setattr(split, "training_split", lambda *args, **kwargs: None)  # the split: not what is timed
    seconds, each = perf_build.timed_build("clip-world", tmp_path / "home", build.FULL)
    assert release == [["clip-world"]] and not build.from_release("clip-world", tmp_path / "home")
    assert each["clip-world"][1] == build.fingerprint(build.models_home(tmp_path / "home") / "clip-world") != \
        build.released()["clip-world"]
