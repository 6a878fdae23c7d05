"""Families added by other packages through the ``foilbench.backends`` entry points: found, listed, used by
``score`` and ``probe``; a broken one left out with one line; and the example package of examples/ installed from the
checkout (offline, into a temporary folder) and scoring a tiny OpenCLIP model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.scoring import families

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "foilbench-openclip"


def fake_distribution(folder: Path, name: str, points: dict[str, str], module: str = "") -> None:
    """An installed distribution in ``folder`` (its dist-info and, if given, its module's source)."""
    info = folder / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[foilbench.backends]\n" + "".join(f"{k} = {v}\n"
                                                                              for k, v in points.items()))
    if module:
        (folder / f"{name}.py").write_text(module)


@pytest.fixture()
def installed(tmp_path, monkeypatch):
    """Install fake distributions on ``sys.path`` for one test (the entry points read afresh before and after)."""
    monkeypatch.syspath_prepend(str(tmp_path))
    forget()
    yield lambda name, points, module="": (fake_distribution(tmp_path, name, points, module), forget())
    forget()


def forget() -> None:
    """Read the installed packages' entry points afresh."""
    families._entry_points.cache_clear()
    families._plugins.cache_clear()


def test_a_package_adds_a_family_and_a_broken_one_is_left_out_with_its_reason(installed):
    installed("fake_family", {"fake": "fake_family:FAMILY", "misnamed": "fake_family:FAMILY",
                              "broken": "no_such_module:FAMILY"},
              "from bench.scoring.families import Family\n"
              "FAMILY = Family('fake', 'fake_family:Backend', ('similarity',), 'a fake family', ('fake_type',))\n")
    found = families.families()
    assert list(found)[:len(families.FAMILIES)] == list(families.FAMILIES) and found["fake"].protocols == (
        "similarity",)
    assert families.plugins()["fake"][1] == "fake_family"
    assert "misnamed" not in found and "broken" not in found
    problems = families.plugin_problems()
    assert any("'broken' of fake_family cannot be loaded (ModuleNotFoundError" in p for p in problems)
    assert any("'misnamed' of fake_family" in p and "must name a Family called 'misnamed'" in p for p in problems)
    assert families.check_protocol("fake", None) == "similarity"
    with pytest.raises(ValueError, match=r"unknown model family 'broken'.*cannot be loaded"):
        families.check_protocol("broken", None)
    assert "fake" in families.family_names()

    from types import SimpleNamespace

    assert families.family_of_config(SimpleNamespace(model_type="fake_type")) == "fake"


def test_a_package_cannot_take_a_built_in_familys_name(installed):
    installed("thief", {"videollm": "thief:FAMILY"},
              "from bench.scoring.families import Family\n"
              "FAMILY = Family('videollm', 'thief:Backend', ('entail',), 'not the real one')\n")
    assert families.families()["videollm"] is families.FAMILIES["videollm"]
    assert any("'videollm' of thief" in p for p in families.plugin_problems())


def tiny_open_clip(folder: Path) -> Path:
    """A 1-layer OpenCLIP model on 32-px images, in open_clip's ``local-dir:`` layout (open_clip's own CLIP
    tokenizer, shipped with it)."""
    import open_clip
    import torch
    from safetensors.torch import save_file

    config = {"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16,
                                              "patch_size": 8},
              "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}
    torch.manual_seed(0)
    model = open_clip.CLIP(**config)
    folder.mkdir(parents=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, folder / "open_clip_model.safetensors")
    (folder / "open_clip_config.json").write_text(json.dumps({"model_cfg": config, "preprocess_cfg": {}}))
    return folder


def _foilbench(args: list[str], target: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(REPO)]), "FOILBENCH_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True, text=True, cwd=REPO, env=env,
                          timeout=600)


@pytest.mark.slow
def test_the_example_package_installs_from_the_checkout_and_scores_through_score_and_probe(sample, tmp_path):
    target, source = tmp_path / "site", tmp_path / "source"
    shutil.copytree(EXAMPLE, source)  # setuptools builds in the source folder: the checkout stays as it is
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                                "--no-index", "--target", str(target), str(source)], capture_output=True, text=True,
                               timeout=600)
    assert installed.returncode == 0, installed.stderr
    assert (target / "foilbench_openclip" / "backend.py").is_file()
    model = tiny_open_clip(tmp_path / "openclip")
    home = tmp_path / "home"

    listed = _foilbench(["models", "--json"], target, home)
    assert listed.returncode == 0, listed.stderr
    row = next(r for r in json.loads(listed.stdout) if r["family"] == "openclip")
    assert row["source"] == "entry point of foilbench-openclip" and row["protocols"] == ["similarity"]
    assert not row["tested"]

    s = sample["vitatecs"]
    done = _foilbench(["score", "vitatecs", str(s.data_path), "--video-root", str(s.video_root), "--model", str(model),
                       "--family", "openclip", "--frames", "uniform:k=4", "--limit", "2", "--quiet", "--out",
                       str(tmp_path / "run")], target, home)
    assert done.returncode == 0, done.stderr
    from bench.store import read_run

    run = read_run(tmp_path / "run")
    assert run.failures.empty and run.manifest.family == "openclip"
    assert run.manifest.details["package"] == "foilbench-openclip"
    item = run.items()[0]
    stored = run.pair[run.pair["item_id"] == item.item_id].sort_values("text")["score"].tolist()
    assert len(stored) == len(item.texts) and len(set(stored)) == len(stored)

    probed = _foilbench(["probe", "--model", str(model), "--family", "openclip", "--frames", "uniform:k=4",
                         item.clips[0].path, *item.texts, "--json", "--no-keep"], target, home)
    assert probed.returncode == 0, probed.stderr
    assert [r["score"] for r in json.loads(probed.stdout)] == pytest.approx(stored, rel=1e-4, abs=1e-6)
    assert plain_open_clip(model, item) == pytest.approx(stored, abs=1e-5)


def plain_open_clip(folder: Path, item) -> list[float]:
    """The item's scores straight through open_clip: the normalised frame embeddings averaged and normalised, the
    cosine with each normalised text embedding."""
    import open_clip
    import torch
    from PIL import Image

    from bench.frames import policy, sample_frames

    model, _, preprocess = open_clip.create_model_and_transforms(f"local-dir:{folder}")
    tokenizer = open_clip.get_tokenizer(f"local-dir:{folder}")
    frames = sample_frames(item.clips[0], policy("uniform", k=4)).array
    with torch.no_grad():
        images = torch.stack([preprocess(Image.fromarray(f)) for f in frames])
        video = torch.nn.functional.normalize(model.encode_image(images), dim=-1).mean(0)
        video = torch.nn.functional.normalize(video, dim=-1)
        texts = torch.nn.functional.normalize(model.encode_text(tokenizer(list(item.texts))), dim=-1)
    return (texts @ video).tolist()
