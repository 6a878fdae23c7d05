"""``foilbench probe`` with the demo's trained X-CLIP: it prefers the true caption of order items, and the foil
once the frames are reversed (the lesson a teacher shows with one command)."""

from __future__ import annotations

import json

import pytest
from scipy.stats import binomtest

from bench.cli import main
from bench.devkit.train.build import trained_model
from bench.loaders import load
from bench.paths import HOME_ENV

pytestmark = pytest.mark.slow
ITEMS = 30


def _preferences(model: str, items, control: str, capsys) -> list[bool]:
    """Per item, whether X-CLIP scores the true caption above the foil under ``control``."""
    found = []
    for item in items:
        clip = item.clips[0]
        start, end = clip.window_seconds()
        true = item.truth[0][0]
        foil = next(t for t in range(len(item.texts)) if t != true)
        window = (["--start", str(start)] if start is not None else []) + (["--end", str(end)] if end is not None
                                                                           else [])
        assert main(["probe", "--model", model, clip.path, item.texts[true], item.texts[foil], "--control", control,
                     "--json", *window]) == 0
        caption, wrong = json.loads(capsys.readouterr().out)
        assert (caption["text"], wrong["text"]) == (item.texts[true], item.texts[foil])
        found.append(caption["score"] > wrong["score"])
    return found


def test_xclip_prefers_the_caption_of_order_items_and_the_foil_once_reversed(trained_world, tmp_path, monkeypatch,
                                                                            capsys):
    home, samples = trained_world
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))  # the probes are kept here, not in the shared home
    s = samples["vitatecs"]
    items = [it for it in load("vitatecs", s.data_path, video_root=s.video_root, **s.loader_options)
             if it.labels.get("foil_type") == "order" and len(it.clips) == 1][:ITEMS]
    assert len(items) >= 10
    model = str(trained_model("xclip-world", home, progress=False))
    as_is = _preferences(model, items, "as-is", capsys)
    reversed_ = _preferences(model, items, "reversed", capsys)
    assert binomtest(sum(as_is), len(as_is), 0.5, alternative="greater").pvalue < 0.01, as_is
    assert binomtest(sum(reversed_), len(reversed_), 0.5, alternative="less").pvalue < 0.01, reversed_
