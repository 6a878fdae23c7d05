"""The benchmark registry: a sixth benchmark is one spec plus its modules, and every layer then serves it."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from bench import registry
from bench.config import DataSource, ScoreConfig
from bench.items import Clip, Item, ItemSet, resolve_video
from bench.metrics.aggregate import Settings, summarize
from bench.metrics.dispatch import run_table
from bench.metrics.outcomes import ScoreIndex, cells_status, false_texts, outcome, per_item
from bench.metrics.ties import decide
from bench.store import read_run

TOY = __name__


def load(path, video_root=None) -> ItemSet:
    """The toy format: a CSV of ``video,caption,foil``."""
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    items = []
    for n, row in enumerate(rows):
        video, exists = resolve_video(video_root, row["video"])
        items.append(Item("toy", f"toy/{n}", "all-of-it", (Clip(video, exists=exists),), (row["caption"], row["foil"]),
                          ((0,),)))
    return ItemSet("toy", str(path), items)


def _rows(item, index: ScoreIndex, ties: str) -> list[dict]:
    scores, present = index.matrix(item)
    return [outcome(item.item_id, item.subset, "toy accuracy", decide(scores[0], [0], false_texts(item, 0), ties,
                                                                      "strict"),
                    0.5, cells_status(scores[0], present[0]))]


def outcomes(items, pair, choice=None, *, ties="official") -> pd.DataFrame:
    return per_item(items, pair, choice, lambda it, index: _rows(it, index, ties), None)


def table(items, pair, choice=None, *, measure=None, settings=Settings(), by=None, ties="official") -> pd.DataFrame:
    return summarize(outcomes(items, pair, choice, ties=ties), settings)


@pytest.fixture()
def toy(sample, tmp_path):
    """A toy benchmark over three of the sample's VELOCITI videos, registered for the test only."""
    videos = sorted(Path(sample["velociti"].video_root).glob("*.mp4"))[:3]
    data = tmp_path / "toy.csv"
    data.write_text("video,caption,foil\n" + "".join(f"{v.name},a video,not a video\n" for v in videos))
    registry.register(registry.BenchmarkSpec(name="toy", title="Toy", paper="none", loader=f"{TOY}:load",
                                             metrics=TOY, prompts={"entail": "yes-no"}))
    yield DataSource.of("toy", data, videos[0].parent)
    registry.unregister("toy")


def test_a_registered_toy_benchmark_runs_through_load_score_and_metrics(toy, tiny, tmp_path):
    from bench.cli import main
    from bench.scoring.runner import score

    items = toy.load().items
    assert len(items) == len(Path(toy.data_path).read_text().splitlines()) - 1 > 0
    assert registry.spec("TOY").title == "Toy"
    run = read_run(score(ScoreConfig(toy, tiny("clip"), frame_policy="uniform:k=2", out=tmp_path / "run",
                                     progress=False)))
    assert len(run.pair) == 2 * len(items) and run.manifest.benchmark == "toy"
    found = run_table(run, Settings(n_boot=20))
    assert found.loc[found.by == "all", "metric"].tolist() == ["toy accuracy"]
    assert found.loc[found.by == "all", "n"].tolist() == [len(items)]
    assert main(["summary", "toy", toy.data_path]) == 0
    assert main(["metrics", str(tmp_path / "run"), "--bootstrap", "20"]) == 0


def test_unknown_and_duplicate_benchmarks_are_one_line_errors():
    with pytest.raises(ValueError, match="unknown benchmark 'nope'; choose one of"):
        registry.spec("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.spec("vilma"))


def test_every_layer_takes_the_benchmark_list_from_the_registry():
    from bench.importers.common import formats
    from bench.report.build import notebooks

    names = registry.names()
    assert names == ["vilma", "vitatecs", "velociti", "videocon", "vinoground", "mvp", "temporalbench", "tempcompass",
                     "tvbench"]
    assert list(notebooks()) == names
    # Yes/No answers per text of one clip: every benchmark but MVP (pairs of clips), TempCompass and TVBench (their
    # answers are to questions, read by their own formats)
    assert set(formats()["answers"]) == set(names) - {"mvp", "tempcompass", "tvbench"}
    assert {name: formats()[name] for name in ("mvp", "tempcompass", "tvbench")} == {
        "mvp": ["mvp"], "tempcompass": ["tempcompass"], "tvbench": ["tvbench"]}
    for name in names:
        benchmark = registry.spec(name)
        assert callable(registry.resolve(benchmark.loader)) and hasattr(benchmark.metrics_module(), "table")
        assert (Path(__file__).parent.parent / "notebooks" / benchmark.notebook).is_file()
        for importer in benchmark.importers.values():
            assert callable(registry.resolve(importer))
