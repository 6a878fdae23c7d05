"""``foilbench probe`` and its core with the tiny offline models: the scores in the order given, the run's own number
for the same clip, texts and frames, the controls as frame policies, warm models and the memory check, and the kept
probes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main
from bench.config import DataSource, ScoreConfig
from bench.frames import policy
from bench.frames.controls import CONTROLS, control_policy
from bench.paths import HOME_ENV
from bench.scoring import warm
from bench.scoring.probe import probe, run_setup
from bench.frames import seeded
from bench.scoring.runner import score
from bench.scoring.warm import TooBig, WarmModels, weight_bytes
from bench.store import read_run
from bench.store.probes import append_probes, probes_path, read_probes

REPO = Path(__file__).resolve().parents[2]
# tiny model -> (family, the protocols a run asks it through)
RUNS = {"clip": ("contrastive", ("similarity",)), "xclip": ("xclip", ("similarity",)),
        "qwen2vl": ("videollm", ("entail",)), "gpt2": ("textlm", ("loglik",))}


@pytest.fixture(scope="module")
def models():
    found = WarmModels()
    yield found
    found.clear()


@pytest.fixture(scope="module")
def velociti(sample):
    s = sample["velociti"]
    return DataSource.of("velociti", s.data_path, s.video_root, s.loader_options)


@pytest.fixture()
def home(tmp_path, monkeypatch):
    monkeypatch.setenv(HOME_ENV, str(tmp_path / "home"))
    return tmp_path / "home"


def _video(velociti) -> str:
    return velociti.load().items[0].clips[0].path


@pytest.mark.parametrize("model", list(RUNS))
def test_a_probe_scores_what_the_run_stores_for_the_same_clip_texts_and_frames(model, tiny, velociti, models,
                                                                               tmp_path):
    family, protocols = RUNS[model]
    frames = "uniform:k=4" if model == "xclip" else "uniform:k=8"
    for protocol in protocols:
        run = read_run(score(ScoreConfig(velociti, tiny(model), family=family, protocol=protocol, frame_policy=frames,
                                         limit=3, out=tmp_path / protocol, progress=False)))
        setup = run_setup(run.manifest)
        for item in run.items()[:3]:
            found = probe(video=item.clips[0], texts=item.texts, models=models, **setup)
            stored = run.pair[(run.pair["item_id"] == item.item_id) & (run.pair["clip"].isin([0, -1]))]
            expected = stored.sort_values("text")["score"].tolist()
            assert len(expected) == len(item.texts)
            # a probe scores one item, the run a batch: float32 sums differ with the batch's shape (on an AVX-512 CPU,
            # X-CLIP by 1.2e-5 relative), far below what another text, clip or frame gives
            assert found.scores == pytest.approx(expected, rel=1e-4, abs=1e-6), (model, item.item_id)


def test_json_lists_the_texts_in_the_order_given(tiny, velociti, home, capsys):
    video = _video(velociti)
    texts = ["a person walks to the left", "a person walks to the right", "nobody is there"]
    outputs = []
    for order in (texts, texts[::-1]):
        assert main(["probe", "--model", tiny("clip"), video, *order, "--json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert [row["text"] for row in outputs[0]] == texts
    assert [row["text"] for row in outputs[1]] == texts[::-1]
    assert outputs[1] == outputs[0][::-1]
    assert len({row["score"] for row in outputs[0]}) == len(texts)


def test_a_bad_video_is_one_line_before_the_model_loads(tiny, tmp_path, home, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise AssertionError("the model loaded")

    monkeypatch.setattr("bench.scoring.families.load_backend", refuse)
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all" * 100)
    for path, reason in ((tmp_path / "missing.mp4", "no such file"), (tmp_path, "not a regular file"),
                         (broken, "")):
        assert main(["probe", "--model", tiny("clip"), str(path), "a text"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"foilbench probe: error: cannot read the video {path}: {reason}")
        assert err.count("\n") == 1


def _env(home: Path) -> dict:
    import os

    return {**os.environ, HOME_ENV: str(home), "PYTHONPATH": str(REPO)}


@pytest.mark.parametrize("args, message", [
    (["--control", "reversed", "--frames", "single"], "the reversed-frames control reorders frames"),
    (["--frames", "none"], "the contrastive family (similarity) needs frames"),
    (["--prompt", "yes-no"], "the contrastive family asks no question"),
    (["--frames", "uniform:k=0"], "frame policy 'uniform': k must be a positive integer"),
    (["--start", "3", "--end", "1"], "--end (1.0) must be after --start (3.0)"),
])
def test_bad_options_are_one_line_errors(args, message, tiny, velociti, home, capsys):
    assert main(["probe", "--model", tiny("clip"), _video(velociti), "a text", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"foilbench probe: error: {message}") and "\n" not in err


def test_each_control_is_the_frame_policy_it_names(tiny, velociti, models):
    base = policy("uniform", k=4)
    assert control_policy("as-is", base) == base
    assert control_policy("reversed", base) == policy("uniform", k=4, order="reverse")
    assert control_policy("shuffled", base) == policy("uniform", k=4, order="shuffle")
    assert control_policy("one-frame", base) == policy("single", mode="middle", repeat=4)
    assert control_policy("blind", base) == policy("none")
    assert control_policy("blind", base, blind_ok=False) == policy("single", mode="middle", blank=True, repeat=4)
    item = velociti.load().items[0]
    for name in CONTROLS:
        if name == "blind":
            continue
        by_control = probe(tiny("xclip"), item.clips[0], item.texts, frame_policy=base, control=name, models=models)
        by_policy = probe(tiny("xclip"), item.clips[0], item.texts, frame_policy=control_policy(name, base),
                          models=models)
        assert by_control.scores == by_policy.scores
        assert by_control.control == name
        assert by_control.frame_policy == seeded(control_policy(name, base), 0).describe()
    as_is, backwards = (probe(tiny("xclip"), item.clips[0], item.texts, control=c, models=models).scores
                        for c in ("as-is", "reversed"))
    assert as_is != backwards  # X-CLIP's temporal layers read the order of its frames
    blind = probe(tiny("qwen2vl"), item.clips[0], item.texts, control="blind", models=models)
    assert blind.frame_policy == {"name": "none"} and all(0 < s < 1 for s in blind.scores)


def test_models_stay_warm_and_one_too_big_is_named_not_loaded(tiny, velociti, monkeypatch):
    models = WarmModels()
    video = _video(velociti)
    probe(tiny("clip"), video, ["a"], models=models)
    backend = next(iter(models._warm.values())).backend
    probe(tiny("clip"), video, ["b"], models=models)
    assert len(models) == 1 and next(iter(models._warm.values())).backend is backend
    need = warm.need_bytes(tiny("qwen2vl"), "auto", "cpu")
    monkeypatch.setattr(warm, "free_bytes", lambda device: need - models.held(device) - 1)
    with pytest.raises(TooBig, match=r"^qwen2vl needs about \d+\.\d GiB on cpu, \d+\.\d GiB free: not loaded$"):
        probe(tiny("qwen2vl"), video, ["a"], models=models)
    assert len(models) == 1  # nothing let go for a model that cannot fit anyway
    fits_alone = warm.need_bytes(tiny("gpt2"), "auto", "cpu")
    monkeypatch.setattr(warm, "free_bytes", lambda device: fits_alone if not models._warm else fits_alone - 1)
    probe(tiny("gpt2"), video, ["a"], models=models)
    assert [k[1] for k in models._warm] == ["textlm"]  # memory short: the clip model was let go first
    models.clear()


def test_the_need_of_a_model_is_its_parameters_at_the_loading_dtype(tiny):
    folder = Path(tiny("clip"))
    stored = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    as_float32 = weight_bytes(folder, 4)
    assert as_float32 == weight_bytes(folder, None) and 0.9 * stored < as_float32 <= stored  # saved as float32
    assert weight_bytes(folder, 2) == as_float32 // 2
    assert weight_bytes(folder.parent / "no-such-model", 4) is None


@pytest.mark.slow
def test_probes_are_kept_and_read_back_after_a_restart(tiny, velociti, home):
    video = _video(velociti)
    texts = ["a person walks", "a person runs"]
    done = subprocess.run([sys.executable, "-m", "bench", "probe", "--model", tiny("clip"), video, *texts, "--json",
                           "--control", "shuffled"], capture_output=True, text=True, cwd=REPO, env=_env(home))
    assert done.returncode == 0, done.stderr
    assert "Loading weights" not in done.stderr  # transformers' own bars stay out of the command's output
    printed = json.loads(done.stdout)
    kept = read_probes()  # this process did not write them: as after a restart
    assert kept["text"].tolist() == texts and kept["score"].tolist() == [row["score"] for row in printed]
    assert set(kept["control"]) == {"shuffled"} and set(kept["model"]) == {tiny("clip")}
    assert set(kept["video"]) == {video} and kept["frames"][0] == "uniform:k=8,order=shuffle,seed=0"
    assert probes_path() == home / "probes.parquet"
    second = probe(tiny("clip"), video, ["a third text"], start=0.5, end=1.5)
    append_probes(second.records())
    again = read_probes()
    assert again["text"].tolist() == texts + ["a third text"]
    assert again["start"].iloc[-1] == 0.5 and again["end"].iloc[-1] == 1.5 and again["time"].is_monotonic_increasing
    subprocess.run([sys.executable, "-m", "bench", "probe", "--model", tiny("clip"), video, "x", "--no-keep"],
                   capture_output=True, cwd=REPO, env=_env(home), check=True)
    assert len(read_probes()) == 3
