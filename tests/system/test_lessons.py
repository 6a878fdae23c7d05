"""System tests on the generated world with the trained models, through the public commands: a pipeline that
reverses frames, swaps caption and foil or flips a metric's sign fails them.

The models are built once per session (:func:`bench.devkit.train.build.trained_model`, about 35 minutes on two cores)
into a session data home that `foilbench demo`'s test shares, and one test builds another seed's CLIP and X-CLIP;
each set-up scores an even spread of each benchmark's items (``--limit --spread``), enough for the intervals these
tests read.
"""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from scipy import stats

from bench.cli import main
from bench.devkit.train.build import DEFAULT_SEED, MODELS, trained_model

pytestmark = pytest.mark.slow  # builds the world's trained models

ORDERED = ("vitatecs", "velociti", "videocon", "vinoground")  # the benchmarks with order foils
PER_BENCHMARK = 300


def _score(world, tmp, benchmark: str, model: str, protocol: str, name: str, *, frames: str = "uniform:k=8",
           data=None, limit: int | None = PER_BENCHMARK):
    """Score ``limit`` items spread over the benchmark's file (None: every item) and return the run's folder."""
    s = world[benchmark]
    options = [x for k, v in s.loader_options.items() for x in ("-o", f"{k}={v}")]
    spread = ["--limit", str(limit), "--spread"] if limit is not None else []
    out = tmp / f"{benchmark}-{name}"
    assert main(["score", benchmark, str(data or s.data_path), "--video-root", str(s.video_root), *options,
                 "--model", str(model), "--family", MODELS[model.name].family, "--protocol", protocol,
                 "--frames", frames, *spread, "--name", name, "--out", str(out), "--quiet"]) == 0
    return out


def _pooled(capsys, runs, label: str = "foil_type") -> dict[tuple[str, str], dict]:
    capsys.readouterr()
    assert main(["metrics", *map(str, runs), "--pool", label, "--json"]) == 0
    return {(r["run"], r["value"]): r for r in json.loads(capsys.readouterr().out)["rows"]}


def _forward_and_reversed(world, tmp, model, prefix: str = "") -> list:
    """The model's runs on the benchmarks with order foils, named ``<prefix>forward`` and, its frames reversed,
    ``<prefix>reversed``."""
    return [_score(world, tmp, b, model, "similarity", prefix + name, frames=frames)
            for name, frames in (("forward", "uniform:k=8"), ("reversed", "uniform:k=8,order=reverse"))
            for b in ORDERED]


def _reads_order(pooled: dict, prefix: str = "") -> tuple[dict, dict]:
    """The forward and reversed runs' `order` rows, checked: above chance forward, at or below chance reversed."""
    forward, backward = pooled[prefix + "forward", "order"], pooled[prefix + "reversed", "order"]
    assert forward["above"], forward
    assert backward["accuracy"] <= backward["chance"] and not backward["above"], backward
    return forward, backward


@pytest.fixture(scope="module")
def xclip_runs(trained_world, tmp_path_factory):
    home, world = trained_world
    return _forward_and_reversed(world, tmp_path_factory.mktemp("xclip"), trained_model("xclip-world", home))


def test_the_order_aware_model_reads_order_and_loses_it_on_reversed_frames(xclip_runs, capsys):
    forward, backward = _reads_order(_pooled(capsys, xclip_runs))
    # far above chance, not a number of one draw: the X-CLIP's `order` moves by tens of points over build seeds
    assert forward["low"] >= forward["chance"] + 10, forward
    assert backward["n"] == forward["n"] > 100


def test_the_order_lesson_holds_for_a_seed_built_here(trained_world, tmp_path, capsys):
    """The session's models are the default seed's; seed 0 draws other weights and its own training split, here for the
    CLIP and the X-CLIP that starts from it. Builds are pinned, so a seed draws the same weights on a machine, though
    not on every CPU kind (an AMD EPYC drew other models than an Intel Xeon at build 18); over seeds the X-CLIP's `order` moves by tens of points
    (docs/demo-lessons.md): the lesson it must hold is the issue's, above chance on order and below it when its
    frames are reversed (reversed time makes the foil true), which an order-blind model fails both ways."""
    home, world = trained_world
    seed = 0
    assert seed != DEFAULT_SEED
    model = trained_model("xclip-world", home / f"seed-{seed}", seed=seed)
    _reads_order(_pooled(capsys, _forward_and_reversed(world, tmp_path, model, f"seed-{seed}-")), f"seed-{seed}-")


def test_the_order_blind_model_is_at_chance_on_order_and_sees_colours_and_numbers_of_shapes(trained_world, tmp_path,
                                                                                          capsys):
    home, world = trained_world
    model = trained_model("clip-world", home)
    runs = [_score(world, tmp_path, b, model, "similarity", "clip") for b in ORDERED]
    pooled = _pooled(capsys, runs)
    order, attribute = pooled["clip", "order"], pooled["clip", "attribute"]
    # not above chance; it may fall below it: pairs whose two videos are each other's reversal give an order-blind
    # model tied scores, which each benchmark's official rule counts as wrong
    assert order["low"] <= order["chance"] and not order["above"], order
    assert order["accuracy"] <= 60, order
    assert attribute["above"] and attribute["accuracy"] >= 70, attribute  # what it can see, it gets right
    # VideoCon's counting foils change how many shapes there are, which any one frame shows
    counting = _pooled(capsys, [r for r in runs if r.name.startswith("videocon")], "misalignment")["clip", "counting"]
    assert counting["above"] and counting["accuracy"] >= 70, counting


def test_swapping_caption_and_foil_mirrors_accuracy(trained_world, tmp_path, capsys):
    home, world = trained_world
    data = tmp_path / "swapped"
    shutil.copytree(world["vitatecs"].data_path, data)
    for path in data.glob("*.jsonl"):
        rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        path.write_text("".join(json.dumps({**r, "caption": r["counterfactual"], "counterfactual": r["caption"]}) + "\n"
                                for r in rows))
    model = trained_model("xclip-world", home)
    runs = [_score(world, tmp_path, "vitatecs", model, "similarity", "original"),
            _score(world, tmp_path, "vitatecs", model, "similarity", "swapped", data=data)]
    pooled = _pooled(capsys, runs, "subset")
    for aspect in {k for _, k in pooled}:
        original, swapped = pooled["original", aspect], pooled["swapped", aspect]
        assert original["n"] == swapped["n"] > 0
        assert original["accuracy"] + swapped["accuracy"] == pytest.approx(100.0), aspect
    overall = [sum(pooled[run, a]["accuracy"] * pooled[run, a]["n"] for a in {k for _, k in pooled}) for run in
               ("original", "swapped")]
    assert overall[0] > overall[1]  # the trained model is right more often than wrong on the true file


@pytest.fixture(scope="module")
def video_llm_and_xclip(trained_world, tmp_path_factory) -> pd.DataFrame:
    """Every item of VITATECS and VELOCITI judged by the Video-LLM (Yes/No through its chat template, the video
    processor's own frames) and by X-CLIP (similarity, its own frames): one row per item, ``value_qwen`` and
    ``value_xclip`` (1 right, 0 wrong). Every item, since the Video-LLM's score moves with the training draw."""
    from bench.metrics.pooled import item_scores
    from bench.store import read_run

    home, world = trained_world
    tmp = tmp_path_factory.mktemp("agreement")
    model, teacher = trained_model("qwen2vl-world", home), trained_model("xclip-world", home)
    agree = []
    for benchmark in ("vitatecs", "velociti"):
        qwen = _score(world, tmp, benchmark, model, "entail", "qwen", limit=None)
        xclip = _score(world, tmp, benchmark, teacher, "similarity", "xclip", limit=None)
        agree.append(item_scores(read_run(xclip))[["item_id", "value"]].merge(
            item_scores(read_run(qwen))[["item_id", "value"]], on="item_id", suffixes=("_xclip", "_qwen")))
    return pd.concat(agree).dropna()


def test_the_video_llm_is_above_chance_on_every_item_of_vitatecs_and_velociti(video_llm_and_xclip):
    both = video_llm_and_xclip
    right = int(both.value_qwen.sum())
    assert stats.binomtest(right, len(both), 0.5, alternative="greater").pvalue < 0.05, "the Video-LLM is at chance"


def test_the_video_text_model_and_the_video_llm_find_the_same_items_easy(video_llm_and_xclip):
    """The Video-LLM is right where X-CLIP is right. Its tower and one layer learned X-CLIP's embeddings, so agreement
    is expected of a correct pipeline; a scoring path that misplaces items, videos, frames or answers loses it."""
    both = video_llm_and_xclip
    table = [[int(((both.value_xclip == a) & (both.value_qwen == b)).sum()) for b in (1, 0)] for a in (1, 0)]
    _, p = stats.fisher_exact(table, alternative="greater")
    assert p < 0.05, table


def _both_orders(run_folder) -> tuple[float, int]:
    """A run's share of items right in both option orders (the benchmark's own metric, chance 1/4), in %, and the
    number of items it is over."""
    from bench.devkit.train.evaluate import both_orders

    right = both_orders([run_folder]).iloc[0]
    assert right["n"] > 50, right
    return float(right["value"]), int(right["n"])


@pytest.fixture(scope="module")
def ab_runs(trained_world, tmp_path_factory) -> tuple[dict[str, tuple[float, int, float]], float]:
    """The Qwen2-VL asked A/B on 150 items of VITATECS and of VELOCITI, with frames and without: per benchmark,
    (right in both orders %, the same without frames %, items), and its share of "A" over both benchmarks' answers
    (%)."""
    from bench.devkit.train.evaluate import answer_bias

    home, world = trained_world
    model = trained_model("qwen2vl-world", home)
    tmp_path = tmp_path_factory.mktemp("ab")
    found, seen_runs = {}, []
    for benchmark in ("vitatecs", "velociti"):
        seen_runs.append(_score(world, tmp_path, benchmark, model, "mc", "ab", limit=150))
        blind, _ = _both_orders(_score(world, tmp_path, benchmark, model, "mc", "blind-ab", frames="none",
                                       limit=150))
        found[benchmark] = (*_both_orders(seen_runs[-1]), blind)
    return found, float(answer_bias(seen_runs).set_index("measure").loc["share A", "value"])


def test_the_video_llm_asked_ab_is_near_chance_without_the_video(ab_runs):
    """Asked which caption fits (VITATECS's and VELOCITI's A/B questions, each in both option orders) with no frames,
    the Qwen2-VL is right in both orders at most 35 % of the time on each (chance 25 %): what it picks does not come
    from the texts alone."""
    for benchmark, (_, _, blind) in ab_runs[0].items():
        assert blind <= 35, (benchmark, blind)


def test_the_video_llm_asked_ab_picks_the_caption_in_both_orders_above_chance(ab_runs):
    """With the video, the Qwen2-VL is right in both option orders more often than chance (1/4) on VITATECS and on
    VELOCITI (one-sided exact test): the A/B path reads the video through both orders. A model that gives each
    question one letter whatever the order, or a pipeline that misplaces options, letters or clips, fails it."""
    for benchmark, (seen, n, _) in ab_runs[0].items():
        right = round(seen * n / 100)
        assert stats.binomtest(right, n, 0.25, alternative="greater").pvalue < 0.05, (benchmark, seen, n)


def test_the_readmes_video_llm_asked_ab_picks_the_caption_in_both_orders_on_half_the_items(trained_world, ab_runs):
    """The issue's aim, for the README's models (built with these bytes on a CPU of the kind that measured them): right
    in both orders on at least half of VITATECS's and of VELOCITI's items. Another CPU draws other weights, like
    another seed, whose range the README gives instead."""
    from bench.devkit.train.build import fingerprint, reference

    if fingerprint(trained_model("qwen2vl-world", trained_world[0])) != reference().get("qwen2vl-world"):
        pytest.skip("the session's Qwen2-VL is not the README's bytes: the aim is theirs, the seeds' ranges the rest")
    for benchmark, (seen, n, _) in ab_runs[0].items():
        assert seen >= 50, (benchmark, seen, n)


def test_the_video_llm_asked_ab_uses_both_letters(ab_runs):
    """The Qwen2-VL answers "A" 35-65 % of the time over both benchmarks (as the demo measures it). A pipeline that
    swaps options or letters, or a model taught one order only (build 10: "A" 12.8 %), fails it."""
    assert 35 <= ab_runs[1] <= 65, ab_runs[1]


def test_the_biased_copy_leans_to_a(trained_world, tmp_path):
    from bench.devkit.train.evaluate import answer_bias

    home, world = trained_world
    model = trained_model("qwen2vl-world-biased", home)
    runs = [_score(world, tmp_path, b, model, "mc", "biased-ab", limit=150) for b in ("vitatecs", "velociti")]
    share_a = answer_bias(runs).set_index("measure").loc["share A"]
    assert share_a["value"] >= 70, share_a
