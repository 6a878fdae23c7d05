"""Typed configuration end to end: families read from model configs, protocols per family, the seed reaching the
seeded frame policies, and runs that describe themselves (a copied run gives the same metrics)."""

from __future__ import annotations

import json
import shutil

import pytest

from bench.config import DataSource, Manifest, ScoreConfig
from bench.frames import parse_policy
from bench.scoring.families import check_protocol, infer_family
from bench.frames import seeded
from bench.scoring.plan import select_items
from bench.scoring.runner import score
from bench.scoring.shared import Shared
from bench.store import read_run


def _source(sample, name):
    s = sample[name]
    return DataSource.of(name, s.data_path, s.video_root, s.loader_options)


@pytest.mark.parametrize("model, family", [("clip", "contrastive"), ("xclip", "xclip"), ("qwen2vl", "videollm"),
                                           ("llava_onevision", "videollm"), ("gpt2", "textlm")])
def test_the_family_is_read_from_the_model_config(tiny, model, family):
    assert infer_family(tiny(model)) == family


def test_families_serve_their_protocols_only(tmp_path):
    assert check_protocol("videollm", None) == "entail" and check_protocol("videollm", "mc") == "mc"
    with pytest.raises(ValueError, match="serves the similarity protocol"):
        check_protocol("contrastive", "entail")
    with pytest.raises(ValueError, match="unknown model family"):
        check_protocol("diffusion", None)
    with pytest.raises(ValueError, match="pass --family"):
        infer_family(str(tmp_path / "nowhere"))


def test_the_seed_reaches_seeded_frame_policies_unless_given():
    assert seeded(parse_policy("consecutive:k=4"), 7).describe() == {"name": "consecutive", "k": 4, "seed": 7}
    assert seeded(parse_policy("consecutive:k=4,seed=1"), 7).describe()["seed"] == 1
    assert seeded(parse_policy("uniform:k=4"), 7).describe() == {"name": "uniform", "k": 4}


def test_runs_with_other_seeds_sample_other_frames(sample, tiny, tmp_path):
    found = {}
    for seed in (1, 2):
        out = score(ScoreConfig(_source(sample, "velociti"), tiny("clip"), frame_policy="consecutive:k=2", seed=seed,
                                limit=2, out=tmp_path / f"seed{seed}", progress=False))
        run = read_run(out)
        assert run.manifest.frame_policy["seed"] == seed and run.manifest.seed == seed
        found[seed] = sorted(run.scored["frames"])
    assert found[1] != found[2]


@pytest.mark.slow
def test_runs_sharing_what_they_can_decode_load_and_read_once_with_the_same_scores(sample, tiny, tmp_path,
                                                                                    monkeypatch):
    from bench.scoring import families

    source = _source(sample, "velociti")
    shared = Shared()
    runs, loads, load = {}, [], families.load_backend
    monkeypatch.setattr(families, "load_backend", lambda *a, **k: loads.append(a) or load(*a, **k))
    reads, read = [], DataSource.load
    monkeypatch.setattr(DataSource, "load", lambda self: reads.append(self) or read(self))
    for frames_policy in ("uniform:k=2", "uniform:k=2,order=reverse", "uniform:k=2"):
        for given in (shared, None):
            out = tmp_path / f"{frames_policy}-{given is None}-{len(runs)}"
            config = ScoreConfig(source, tiny("clip"), frame_policy=frames_policy, limit=3, out=out, progress=False)
            runs[out.name] = read_run(score(config, given)).pair["score"].tolist()
    asked = [(clip.path, clip.start, clip.end) for it in select_items(read(source).items, 3) for clip in it.clips]
    frames = shared.frames
    assert frames.misses == len(set(asked)) and frames.hits == 3 * len(asked) - len(set(asked))
    assert len(loads) == 1 + 3 and len(reads) == 1 + 3  # once shared, once per run not sharing
    values = list(runs.values())
    assert values[0] == values[1] == values[4] == values[5] and values[2] == values[3]


def test_shared_sources_give_each_run_its_own_list(sample):
    source, shared = _source(sample, "vitatecs"), Shared()
    first = shared.load(source)
    first.items.pop()
    assert len(shared.load(source).items) == len(source.load().items) == len(first.items) + 1


def test_a_model_too_big_for_the_memory_free_is_refused_before_it_loads(sample, tiny, tmp_path, monkeypatch):
    from bench.scoring import families, warm

    loads = []
    monkeypatch.setattr(warm, "free_bytes", lambda device: 0)
    monkeypatch.setattr(families, "load_backend", lambda *a, **k: loads.append(a))
    with pytest.raises(warm.TooBig, match="needs about"):
        score(ScoreConfig(_source(sample, "velociti"), tiny("clip"), limit=2, out=tmp_path / "run", progress=False))
    assert not loads


def test_a_blind_similarity_run_is_refused_before_loading(sample, tmp_path):
    with pytest.raises(ValueError, match="needs frames"):
        score(ScoreConfig(_source(sample, "velociti"), str(tmp_path / "unused"), family="contrastive",
                          frame_policy="none", out=tmp_path / "run", progress=False))
    assert not (tmp_path / "run").exists()


def test_a_stored_run_that_cannot_be_resumed_is_refused_before_the_model_loads(sample, tiny, tmp_path, monkeypatch):
    from bench.scoring import families
    from bench.store import RunMismatch

    model = tmp_path / "model"
    shutil.copytree(tiny("clip"), model)
    source = _source(sample, "vitatecs")

    def config(**changes):
        return ScoreConfig(source, str(model), **{"limit": 2, "out": tmp_path / "run", "progress": False, **changes})

    first = read_run(score(config())).pair["score"].tolist()
    loads, load = [], families.load_backend
    monkeypatch.setattr(families, "load_backend", lambda *a, **k: loads.append(a) or load(*a, **k))
    assert read_run(score(config())).pair["score"].tolist() == first and not loads  # complete: no model loaded
    changes = {"seed": {"seed": 1}, "limit": {"limit": 3}, "frame_policy": {"frame_policy": "uniform:k=3"}}
    for what, changed in changes.items():
        with pytest.raises(RunMismatch, match=what):
            score(config(**changed))
    weights = model / "model.safetensors"
    weights.write_bytes(weights.read_bytes())  # rebuilt in place: same bytes, a new file
    with pytest.raises(RunMismatch, match="revision"):
        score(config())
    assert not loads


def test_a_copied_run_gives_the_same_metrics_without_the_annotation_files(sample, tiny, tmp_path, capsys):
    from bench.cli import main

    data = tmp_path / "vitatecs"
    shutil.copytree(sample["vitatecs"].data_path, data)
    source = DataSource.of("vitatecs", data, sample["vitatecs"].video_root)
    items = source.load().items
    original = score(ScoreConfig(source, tiny("clip"), out=tmp_path / "run", progress=False))
    assert main(["metrics", str(original), "--json", "--bootstrap", "50"]) == 0
    before = json.loads(capsys.readouterr().out)["rows"]
    shutil.copytree(original, tmp_path / "elsewhere")
    shutil.rmtree(original)
    shutil.rmtree(data)
    assert main(["metrics", str(tmp_path / "elsewhere"), "--json", "--bootstrap", "50"]) == 0
    after = json.loads(capsys.readouterr().out)["rows"]
    assert after == before and len(after) > 0
    assert read_run(tmp_path / "elsewhere").items() == items


def test_a_limited_run_is_measured_on_the_items_it_was_asked(sample, tiny, tmp_path, capsys):
    from bench.cli import main

    out = score(ScoreConfig(_source(sample, "vitatecs"), tiny("clip"), limit=2, out=tmp_path / "run",
                            progress=False))
    assert len(read_run(out).items()) == 2
    assert main(["metrics", str(out), "--json", "--bootstrap", "20"]) == 0
    payload = json.loads(capsys.readouterr().out)
    overall = next(r for r in payload["rows"] if r["by"] == "all")
    assert overall["n"] == 2 and overall["n_missing"] == 0
    assert not any("no score at all" in note for note in payload["runs"][0]["notes"])


def test_manifest_identity_and_round_trip():
    m = Manifest(benchmark="vilma", data_path="/d", model="m", measure="p_yes", family="videollm",
                 protocol="entail", extra={"status": "complete"})
    again = Manifest.from_dict(json.loads(json.dumps(m.to_dict())))
    assert again.identity() == m.identity() and again.extra["status"] == "complete"
    assert Manifest.from_dict({**m.to_dict(), "protocol": "mc"}).identity() != m.identity()
