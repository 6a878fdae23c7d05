"""The trained models' build (tiny scale: a few videos, a step or two): a folder the backends load by path and the
runner scores, cached by its stamp, rebuilt when the version changes, the same weights from the same seed; and the
by-foil-type table and the answer-bias measures derived from stored runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file

from bench.devkit.threads import torch_threads
from bench.devkit.train import build, pinned
from bench.devkit.train.build import STAMP, Scale, trained_model
from bench.devkit.train.evaluate import Model, answer_bias, score_world
from bench.devkit.train.models import PIXELS
from bench.metrics.pooled import item_scores
from bench.scoring.families import load_backend
from bench.store import read_run
from fixtures_pinned import pinned_mkl_branch

pytestmark = pytest.mark.slow  # model builds

TINY = Scale(videos_per_kind=2, pairs=4, steps=0.01)


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return tmp_path_factory.mktemp("home")


@pytest.fixture(scope="module")
def clip_world(home):
    return trained_model("clip-world", home, scale=TINY, progress=False)


def _weights(folder) -> dict[str, np.ndarray]:
    return load_file(str(folder / "model.safetensors"))


def test_a_build_is_a_checkpoint_the_backend_loads_by_path_and_the_runner_scores(clip_world, sample, tmp_path):
    backend = load_backend("contrastive", str(clip_world))
    assert type(backend.model).__name__ == "CLIPModel"
    runs = score_world({"clip": Model(str(clip_world), "contrastive", "similarity", limit=6)}, sample, tmp_path,
                       benchmarks=["vitatecs"])
    rows = item_scores(read_run(runs[0]))
    assert len(rows) == 6 and rows["foil_type"].notna().all() and rows["value"].isin([0.0, 1.0]).all()


def test_the_cache_is_reused_and_a_version_bump_rebuilds(clip_world, home):
    stamp = clip_world / STAMP
    before = stamp.stat().st_mtime_ns
    assert trained_model("clip-world", home, scale=TINY, progress=False) == clip_world
    assert stamp.stat().st_mtime_ns == before
    stamp.write_text(json.dumps({**json.loads(stamp.read_text()), "version": build.VERSION + "-before"}))
    trained_model("clip-world", home, scale=TINY, progress=False)
    assert json.loads(stamp.read_text())["version"] == build.VERSION
    assert stamp.stat().st_mtime_ns != before


def test_a_build_records_its_pinned_kernels_and_how_long_it_took(clip_world, home):
    built = json.loads((clip_world / STAMP).read_text())["built"]
    assert built["env"] == pinned.PINNED and built["threads"] == build.THREADS and built["seconds"] > 0
    if "avx2" in Path("/proc/cpuinfo").read_text().split():
        assert built["cpu_capability"] == pinned.CAPABILITY
    assert built["onednn"] is False
    if pinned.mkl_branch() is not None:  # torch carries MKL (x86-64 wheels): the branch MKL itself says it ran
        assert built["mkl_branch"] == pinned_mkl_branch()
    assert build.build_seconds("clip-world", home) == built["seconds"]
    assert build.build_seconds("xclip-world", home / "nowhere") is None


def test_the_same_seed_gives_the_same_bytes_whatever_kernels_the_caller_asks_for(clip_world, tmp_path, monkeypatch):
    """The build's child pins its kernels: a caller set to torch's plain kernels, MKL's AUTO branch (what MKL runs on
    an AMD CPU asked for AVX2) and oneDNN's widest kernels still gets the same file, byte for byte."""
    monkeypatch.setenv("ATEN_CPU_CAPABILITY", "default")
    monkeypatch.setenv("MKL_CBWR", "AUTO")
    monkeypatch.setenv("DNNL_MAX_CPU_ISA", "ALL")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    again = trained_model("clip-world", tmp_path, scale=TINY, progress=False)
    assert (again / "model.safetensors").read_bytes() == (clip_world / "model.safetensors").read_bytes()


def test_the_build_child_runs_no_onednn_primitive(tmp_path, monkeypatch, capfd):
    """oneDNN picks its convolution kernels by the CPU: the child switches it off. Its verbose log (which a plain
    process prints for a convolution, checked first) shows no primitive run in a build."""
    probe = "import torch; torch.nn.functional.conv2d(torch.randn(2, 3, 16, 16), torch.randn(4, 3, 8, 8), stride=8)"
    verbose = {**os.environ, "ONEDNN_VERBOSE": "1"}
    shown = subprocess.run([sys.executable, "-c", probe], env=verbose, capture_output=True, text=True).stdout
    assert "primitive,exec" in shown
    monkeypatch.setenv("ONEDNN_VERBOSE", "1")
    capfd.readouterr()
    trained_model("clip-world", tmp_path, scale=TINY, progress=False)
    assert "primitive,exec" not in capfd.readouterr().out


def test_a_build_trains_through_patch_products_and_runs_no_convolution(tmp_path, monkeypatch):
    """The build computes the patch embeddings as matrix products (bench.devkit.train.patches); run in this process
    (as the pinned child runs it) under torch's profiler, a CLIP build runs no convolution, while its saved model's
    own forward does."""
    from torch.profiler import ProfilerActivity, profile

    monkeypatch.setenv(pinned.INSIDE, "1")  # build here, as the child does, so the profiler sees the training
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        folder = trained_model("clip-world", tmp_path, scale=TINY, progress=False)
    ran = {e.key: e.count for e in prof.key_averages()}
    assert ran.get("aten::convolution", 0) == 0 and ran.get("aten::addmm", 0) > 0
    backend = load_backend("contrastive", str(folder), device="cpu", dtype="float32")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        backend.model.get_image_features(pixel_values=torch.zeros(1, 3, PIXELS, PIXELS))
    assert any(e.key == "aten::convolution" for e in prof.key_averages())


def test_a_world_run_scored_before_its_model_was_rebuilt_is_scored_again(home, sample, tmp_path, capsys):
    model = trained_model("clip-world", home / "rebuilt", scale=TINY, progress=False)
    world = {"clip": Model(str(model), "contrastive", "similarity", limit=4)}
    first = read_run(score_world(world, sample, tmp_path / "runs", benchmarks=["vitatecs"])[0])
    assert first.manifest.revision.startswith("files:")
    resumed = read_run(score_world(world, sample, tmp_path / "runs", benchmarks=["vitatecs"])[0])
    assert resumed.manifest.revision == first.manifest.revision
    assert "scoring it again" not in capsys.readouterr().err
    assert trained_model("clip-world", home / "rebuilt", scale=TINY, seed=1, progress=False) == model  # in place
    rescored = read_run(score_world(world, sample, tmp_path / "runs", benchmarks=["vitatecs"])[0])
    assert "scoring it again" in capsys.readouterr().err
    assert rescored.manifest.revision != first.manifest.revision
    fresh = read_run(score_world(world, sample, tmp_path / "fresh", benchmarks=["vitatecs"])[0])
    assert rescored.pair["score"].tolist() == fresh.pair["score"].tolist()  # the rebuilt model's scores, not stale
    assert rescored.pair["score"].tolist() != first.pair["score"].tolist()


def test_the_same_seed_gives_the_same_weights_and_another_seed_others(clip_world, tmp_path):
    again = trained_model("clip-world", tmp_path / "again", scale=TINY, progress=False)
    other = trained_model("clip-world", tmp_path / "other", scale=TINY, seed=1, progress=False)
    first, second, third = _weights(clip_world), _weights(again), _weights(other)
    assert first.keys() == second.keys()
    assert all(np.array_equal(first[k], second[k]) for k in first)
    assert not all(np.array_equal(first[k], third[k]) for k in first)


def test_an_unknown_model_is_a_one_line_error(home):
    with pytest.raises(ValueError, match="unknown trained model 'gpt'.*clip-world"):
        trained_model("gpt", home)


def test_answer_bias_reads_p_yes_and_the_share_of_a_from_stored_runs(home, sample, tmp_path):
    qwen = trained_model("qwen2vl-world", home, scale=TINY, progress=False)
    model = {p: Model(str(qwen), "videollm", p, limit=3) for p in ("entail", "mc")}
    paths = score_world(model, sample, tmp_path, benchmarks=["velociti"])
    bias = answer_bias(paths).set_index("measure")
    entail, choice = read_run(paths[0]).pair, read_run(paths[1]).choice
    assert bias.loc["P(Yes)", "value"] == pytest.approx(100 * entail["score"].mean())
    decided = entail["score"] != 0.5  # P(Yes) = P(No): a tie, neither answer
    assert bias.loc["share Yes", "value"] == pytest.approx(100 * (entail["score"] > 0.5).sum() / decided.sum())
    assert bias.loc["share Yes", "tied"] == int((~decided).sum())
    tied = np.array([np.sum(np.asarray(lg) == max(lg)) > 1 for lg in choice["logits"]])
    first = np.array([o[0] == c for o, c in zip(choice["options"], choice["choice"])])
    assert bias.loc["share A", "value"] == pytest.approx(100 * first[~tied].mean())
    assert (bias.loc["share A", "n"], bias.loc["share A", "tied"]) == (len(choice), int(tied.sum()))


def test_the_video_llm_learns_in_its_tower_and_its_language_model_and_sees_the_clip_in_one_temporal_patch(home):
    import torch
    from transformers import Qwen2VLForConditionalGeneration

    from bench.devkit.train import videollm
    from bench.devkit.train.models import build_qwen2vl, qwen_tokenizer
    from bench.devkit.world.split import training_split

    folder = trained_model("qwen2vl-world", home, scale=TINY, progress=False)
    assert (build.models_home(home) / "xclip-world" / STAMP).is_file()  # its teacher, built first
    model = Qwen2VLForConditionalGeneration.from_pretrained(folder)
    processor = load_backend("videollm", str(folder)).processor
    assert model.config.vision_config.temporal_patch_size == build.FRAMES
    assert processor.video_processor.temporal_patch_size == build.FRAMES
    trained = model.state_dict()
    split = training_split(build.models_home(home) / ".split", TINY.videos_per_kind, TINY.pairs, build.DEFAULT_SEED)
    torch.manual_seed(build.DEFAULT_SEED)  # the build's seed, set before the untrained model is made
    initial = build_qwen2vl(qwen_tokenizer(videollm.corpus(split)), build.FRAMES)[0].state_dict()
    for part in (".visual.", ".language_model."):
        keys = [k for k in trained if part in k]
        assert sum(not torch.allclose(trained[k], initial[k]) for k in keys) >= len(keys) // 2, part


def test_a_build_gives_the_same_weights_whatever_torchs_thread_count(clip_world, tmp_path):
    import torch

    threads = torch.get_num_threads()
    built = {}
    for count in (1, 3):
        with torch_threads(count):
            built[count] = _weights(trained_model("clip-world", tmp_path / str(count), scale=TINY, progress=False))
    assert torch.get_num_threads() == threads
    reference = _weights(clip_world)
    assert all(np.array_equal(built[1][k], reference[k]) and np.array_equal(built[3][k], reference[k])
               for k in reference)


def test_the_demos_estimate_comes_from_the_last_builds_measured_time(clip_world, home, tmp_path):
    from bench.devkit.demo import build_estimate

    seconds = build.build_seconds("clip-world", home)
    assert build_estimate(["clip-world"], home) == \
        f"rebuilding clip-world: about {seconds:.0f} s, as their last build here took"  # tiny, not the demo's scale
    assert "never built in this data home" in build_estimate(["qwen2vl-world"], tmp_path)
    assert build.needed(["qwen2vl-world-biased"]) == \
        ["clip-world", "xclip-world", "qwen2vl-world", "qwen2vl-world-biased"]


def test_an_xclip_started_from_a_clip_holds_every_clip_tensor_and_keeps_its_own_temporal_parts(tmp_path):
    import torch

    from bench.devkit.train.models import RENAMED, build_clip, build_xclip, clip_tokenizer, start_from

    tokenizer = clip_tokenizer(tmp_path / "vocab")
    torch.manual_seed(0)
    clip, processor = build_clip(tokenizer)
    clip.save_pretrained(tmp_path / "clip")
    xclip = build_xclip(tokenizer, 8)[0]
    before = {k: v.clone() for k, v in xclip.state_dict().items()}
    copied = start_from(xclip, tmp_path / "clip")
    after = xclip.state_dict()
    theirs = {k.replace(*next(iter(RENAMED.items()))): v for k, v in clip.state_dict().items()}
    assert sorted(theirs) == copied  # every tensor of the CLIP, none left behind
    assert all(torch.equal(after[k], theirs[k]) for k in copied)
    own = [k for k in after if k not in theirs]
    assert own and all(k.startswith(("mit.", "prompts_")) or ".message_" in k for k in own)
    assert all(torch.equal(after[k], before[k]) for k in own)


def test_the_built_xclip_keeps_the_built_clips_tower_and_learns_past_it(clip_world, home):
    from bench.devkit.train.models import RENAMED

    xclip = _weights(trained_model("xclip-world", home, scale=TINY, progress=False))
    clip = {k.replace(*next(iter(RENAMED.items()))): v for k, v in _weights(clip_world).items()}
    key = "text_model.embeddings.token_embedding.weight"  # frozen in training: still the CLIP's after the build
    assert np.array_equal(xclip[key], clip[key])
    tower = [k for k in xclip if k.startswith("vision_model.") and k in clip]
    assert tower and all(np.array_equal(xclip[k], clip[k]) for k in tower)  # the tower fixed: the CLIP's
    learnt = [k for k in ("visual_projection.weight", "text_model.final_layer_norm.weight") if k in clip]
    assert learnt and any(not np.array_equal(xclip[k], clip[k]) for k in learnt)


def test_a_background_build_hands_each_model_over_once_built_and_its_bytes_are_the_builds(clip_world, home,
                                                                                          tmp_path):
    building = build.Background(["xclip-world"], tmp_path / "bg", scale=TINY, log=tmp_path / "build.log", poll=0.05)
    try:
        assert building.todo == ["clip-world", "xclip-world"] and building.child is not None
        assert building.ready("clip-world") == build.models_home(tmp_path / "bg") / "clip-world"
        folder = building.ready("xclip-world")
        assert building.wait() > 0
    finally:
        building.close()
    assert build.fingerprint(folder) == build.fingerprint(trained_model("xclip-world", home, scale=TINY,
                                                                        progress=False))
    again = build.Background(["xclip-world"], tmp_path / "bg", scale=TINY)
    assert again.child is None and again.wait() == 0 and again.ready("xclip-world") == folder


def test_a_failed_background_build_is_one_line_naming_its_log(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")  # the child cannot make its models folder here
    building = build.Background(["clip-world"], blocked, scale=TINY, log=tmp_path / "build.log", poll=0.05)
    with pytest.raises(RuntimeError, match=r"building clip-world failed \(exit \d+; its messages are in .*build.log\)"):
        building.ready("clip-world")
    assert (tmp_path / "build.log").stat().st_size > 0


def test_a_shrunk_build_keeps_a_usable_split_and_refuses_a_share_outside_0_1():
    assert build.shrunk(1.0) == build.FULL
    assert build.shrunk(0.001) == Scale(2, 4, 0.001)
    with pytest.raises(ValueError, match="share in"):
        build.shrunk(2.0)


def test_the_built_video_llm_ties_a_and_b_blind_reads_the_clip_and_its_biased_copy_leans(home):
    """The constructed Qwen2-VL: asked A/B without the video its two letters tie exactly (each letter copies a match
    share that is 0 without a clip), with the clip they do not; the text layers never write the reserved dimensions;
    the build records what its fit measured; the biased copy answers A and Yes by its lean more."""
    from transformers import Qwen2VLForConditionalGeneration

    from bench.devkit.train import videollm
    from bench.scoring import prompts

    folder = trained_model("qwen2vl-world-biased", home, scale=TINY, progress=False)
    built = build.models_home(home) / "qwen2vl-world"
    fit = json.loads((built / STAMP).read_text())["built"]["fit"]
    assert 0 <= fit["pairs_matched"] <= 1 and fit["beta"] > 0 and 0 <= fit["read_a"] <= 1
    processor = load_backend("videollm", str(built)).processor
    questions = videollm.Questions(processor)
    clip = np.random.default_rng(0).integers(0, 255, (build.FRAMES, 84, 84, 3), dtype=np.uint8)
    question = prompts.render_choice(prompts.PROMPTS["vitatecs-mc"], ["a red circle moves left", "a blue square"],
                                     "vitatecs-mc")
    letters = {}
    for name, path in (("built", built), ("biased", folder)):
        model = Qwen2VLForConditionalGeneration.from_pretrained(path).eval()
        for seen in (True, False):
            kwargs = {"videos": [clip]} if seen else {}
            inputs = processor(text=[questions.render(question, seen)], return_tensors="pt", **kwargs)
            with torch.no_grad():
                logits = model(**inputs).logits[0, -1]
            letters[name, seen] = (float(logits[questions.answer["A"]]), float(logits[questions.answer["B"]]))
        layers = model.model.language_model.layers[:2]
        assert all(float(layer.self_attn.o_proj.weight[videollm.RESERVED:].detach().abs().max()) == 0 for layer in layers)
        assert float(model.get_input_embeddings().weight[:, videollm.RESERVED:videollm.SINK].detach().abs().max()) == 0
    a, b = letters["built", False]
    assert a == b  # blind: an exact tie
    assert letters["built", True][0] != letters["built", True][1]  # the clip is read
    lean = (letters["biased", False][0] - letters["biased", False][1])
    assert lean == pytest.approx(10 * build.LEAN, rel=0.02)  # the lean, in logits (10 per unit of match share)


def test_closing_a_background_build_stops_the_child_and_leaves_no_half_built_folder(tmp_path):
    building = build.Background(["clip-world"], tmp_path / "bg", scale=TINY, log=tmp_path / "build.log")
    building.close()
    assert building.finished is not None and building.child.returncode != 0
    left = build.models_home(tmp_path / "bg")
    assert not left.exists() or not [p for p in left.iterdir() if p.name.startswith(".clip-world-")]


def test_a_build_started_from_a_background_job_stops_mid_build_on_close(tmp_path):
    """A shell starts a background job (``foilbench demo &``) with SIGINT ignored, and its children inherit that: the
    child must still stop when the demo closes it while it builds, and drop its half-built folder."""
    ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        building = build.Background(["clip-world"], tmp_path / "bg", scale=TINY, log=tmp_path / "build.log")
    finally:
        signal.signal(signal.SIGINT, ignored)
    left = build.models_home(tmp_path / "bg")

    def half_built() -> list[Path]:
        return [p for p in left.iterdir() if p.name.startswith(".clip-world-")] if left.exists() else []

    deadline = time.monotonic() + 120
    while not half_built() and building.finished is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert half_built(), "the child should have begun the model before it is closed"
    building.close()
    assert building.finished is not None and building.child.returncode != 0
    assert not half_built() and not (left / "clip-world").exists()


def test_the_text_questions_made_on_their_own_thread_give_the_weights_of_questions_made_in_turn(home, tmp_path,
                                                                                               monkeypatch):
    """The Video-LLM's build draws and lays out its text layers' questions on a thread of its own while its tower
    trains (:func:`bench.devkit.threads.ahead`): the same draws from the same generator, so the same bytes as drawing
    each step's questions when the step comes."""
    from bench.devkit.train import videollm

    trained_model("qwen2vl-world", home, scale=TINY, progress=False)  # its teacher, the X-CLIP, built first
    root = build.models_home(home)
    spec = build.MODELS["qwen2vl-world"]
    weights = {}
    for way, ahead in (("on a thread", videollm.ahead), ("in turn", lambda items, name="": items)):
        monkeypatch.setattr(videollm, "ahead", ahead)
        out = tmp_path / way.replace(" ", "-")
        build._build(spec, out, None, root / spec.teacher, None, root, build.DEFAULT_SEED, TINY, False, "qwen2vl-world")
        weights[way] = _weights(out)
    assert weights["on a thread"].keys() == weights["in turn"].keys()
    assert all(np.array_equal(weights["on a thread"][k], weights["in turn"][k]) for k in weights["in turn"])
