"""The run store and runner: round trips, resuming, failures, OOM back-off."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from bench.config import DataSource, Manifest, ScoreConfig
from bench.items import Clip, Item
from bench.scoring.protocols import Similarity
from bench.scoring.chunks import score_items
from bench.scoring.plan import select_items
from bench.scoring.runner import score
from bench.store import RunMismatch, RunWriter, read_run

ITEMS = [Item("vitatecs", i, "Direction", (Clip("v.mp4"),), ("caption", "foil"), ((0,),)) for i in "abc"]


def _manifest(**values):
    return Manifest(**{"benchmark": "vitatecs", "data_path": "/d", "model": "m", "measure": "similarity",
                       "family": "contrastive", "protocol": "similarity", "frame_policy": {"name": "none"},
                       "seed": 0, **values})


def _writer(path, **options):
    return RunWriter(path, _manifest(), ITEMS, chunk_size=2, **options)


def _files(run):
    return sorted(str(p.relative_to(run)) for p in run.rglob("*.parquet") if p.name != "items.parquet")


def test_a_runs_items_are_read_once_and_each_caller_gets_its_own_list(tmp_path, monkeypatch):
    import bench.store.run as store

    _writer(tmp_path / "run").close()
    reads = []
    monkeypatch.setattr(store, "read_items", lambda path: reads.append(path) or ITEMS[::-1])
    run = read_run(tmp_path / "run")
    first = run.items()
    first.clear()
    assert run.items() == ITEMS[::-1] and run.items() is not run.items() and len(reads) == 1
    assert read_run(tmp_path / "run").items() == ITEMS[::-1] and len(reads) == 2  # another read of the run reads again


def test_a_manifest_reads_as_it_was_written_and_an_older_one_still_reads(tmp_path):
    from bench.store import read_manifest

    writer = _writer(tmp_path / "run")
    writer.finish(seconds=1.5)
    written = (tmp_path / "run" / "manifest.json").read_text()
    run = read_run(tmp_path / "run")
    assert isinstance(run.manifest, Manifest) and run.manifest.status == "complete"
    assert run.manifest.extra["seconds"] == 1.5 and run.manifest.extra["chunk_size"] == 2
    assert json.dumps(run.manifest.to_dict(), indent=1, sort_keys=True, default=str) == written
    older = {k: v for k, v in json.loads(written).items() if k not in ("control", "spread", "frame_size", "model")}
    (tmp_path / "run" / "manifest.json").write_text(json.dumps({**older, "retired_field": [1, 2]}))
    old = read_manifest(tmp_path / "run")
    assert old.control is None and old.spread is False and old.model is None and old.benchmark == "vitatecs"
    assert old.extra["retired_field"] == [1, 2] and old.to_dict()["retired_field"] == [1, 2]
    assert read_run(tmp_path / "run").label == "run"


def test_chunks_round_trip_compact_and_resume(tmp_path):
    run = tmp_path / "run"
    writer = _writer(run)
    writer.write_chunk(["a", "b"], [{"item_id": "a", "clip": 0, "text": 0, "score": 0.5}],
                       [{"item_id": "b", "axis": "text", "query": 0, "options": [1, 0], "logits": [1.0, 2.0],
                         "choice": 0}], [], {"a": {"0": [1, 2]}}, {"a": ["window has 2 frames"]})
    writer.write_chunk(["c"], [], [], [{"item_id": "c", "stage": "frames", "reason": "corrupt"}])
    launch = writer.launch
    assert _files(run) == [f"{t}/part-00000{c}-{launch}-r0.parquet" for t in ("choice", "failures", "pair", "scored")
                           for c in (0, 1)]
    writer.close()
    stored = read_run(run)
    assert stored.manifest.status == "running" and list(stored.pair["item_id"]) == ["a"]
    assert stored.choice.loc[0, "options"] == [1, 0] and stored.choice.loc[0, "logits"] == [1.0, 2.0]
    assert stored.failures.loc[0, "reason"] == "corrupt"
    frames = stored.scored.set_index("item_id")
    assert json.loads(frames.loc["a", "frames"]) == {"0": [1, 2]}
    assert json.loads(frames.loc["a", "notes"]) == ["window has 2 frames"]
    assert list(frames["chunk"]) == [0, 0, 1] and set(frames["launch"]) == {launch} and set(frames["rank"]) == {0}
    assert stored.items() == ITEMS

    again = _writer(run)                                # opening a run with loose chunks compacts it
    assert again.done == {"a", "b", "c"}
    assert _files(run) == [f"{t}/compact-{json.loads((run / 'index.json').read_text())['generation']}.parquet"
                           for t in ("choice", "failures", "pair", "scored")]
    compacted = read_run(run)
    for table in ("pair", "choice", "failures", "scored"):
        pd.testing.assert_frame_equal(getattr(compacted, table), getattr(stored, table), check_exact=True)
    again.close()

    retry = _writer(run, retry_failures=True)
    assert retry.done == {"a", "b"} and read_run(run).failures.empty
    retry.write_chunk(["c"], [{"item_id": "c", "clip": 0, "text": 0, "score": 0.25}], [], [])
    retry.finish()
    final = read_run(run)
    m = final.manifest
    assert m.status == "complete" and m.extra["chunk_size"] == 2 and m.extra["world_size"] == 1
    assert [launch["chunks"] for launch in m.extra["launches"]] == [{"0": "0"}, {}, {"0": "1"}]  # c was scored again
    assert list(final.pair["item_id"]) == ["a", "c"] and list(final.scored["item_id"]) == ["a", "b", "c"]
    assert len(_files(run)) == 4


def test_half_written_chunks_are_ignored_and_dropped_on_resume(tmp_path):
    run = tmp_path / "run"
    writer = _writer(run)
    writer.write_chunk(["a"], [{"item_id": "a", "clip": 0, "text": 0, "score": 0.5}], [], [])
    writer.close()
    pd.DataFrame({"item_id": ["c"]}).to_parquet(run / "scored" / "part-000001-ffff0000-r1.parquet")
    (run / "pair" / ".part-000001-ffff0000-r1.parquet.1234.tmp").write_bytes(b"partial")
    assert len(read_run(run).pair) == 1 and list(read_run(run).scored["item_id"]) == ["a"]
    resumed = _writer(run)
    assert resumed.done == {"a"}
    assert not list(run.rglob("*.tmp")) and not list(run.rglob("part-*"))
    resumed.close()


def test_a_run_with_other_settings_or_items_is_not_resumed(tmp_path):
    _writer(tmp_path / "run").close()
    with pytest.raises(RunMismatch, match=r"differs in \['model'\]"):
        RunWriter(tmp_path / "run", _manifest(model="other"), ITEMS)
    with pytest.raises(FileExistsError, match="already stored"):
        RunWriter(tmp_path / "run", _manifest(), ITEMS, resume=False)
    with pytest.raises(RunMismatch, match="items differ"):
        RunWriter(tmp_path / "run", _manifest(), ITEMS[::-1])
    reworded = [replace(it, texts=("caption", "another foil")) if it.item_id == "b" else it for it in ITEMS]
    with pytest.raises(RunMismatch, match="items differ"):  # the same ids, a changed text
        RunWriter(tmp_path / "run", _manifest(), reworded)
    found = [replace(it, clips=(Clip("v.mp4", exists=False),)) for it in ITEMS]
    RunWriter(tmp_path / "run", _manifest(), found).close()  # a video now found (or lost) does not change the items
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        read_run(tmp_path)
    kept = RunWriter(tmp_path / "run", _manifest(), ITEMS, chunk_size=5)
    assert kept.chunk_size == 2 and "keeping the run's chunk size 2" in kept.notes[0]
    kept.close()


class Flaky:
    """A backend failing with out-of-memory above batch size 2, and always on a request about item 'bad'."""

    def __init__(self):
        self.sizes = []

    def answer(self, requests, videos, batch_size):
        self.sizes.append(batch_size)
        if batch_size > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if any(r.video[0] == "bad" for r in requests):
            raise ValueError("model exploded")
        return np.ones((len(requests), 1))


class NoVideos:
    def videos(self, refs):
        return {ref: np.zeros((1, 2, 2, 3), np.uint8) for ref in refs}


def test_out_of_memory_halves_the_batch_and_model_errors_isolate_the_item():
    flaky = Flaky()
    items = [Item("vitatecs", i, "Direction", (Clip("v.mp4"),), ("caption", "foil"), ((0,),))
             for i in ("a", "bad", "c")]
    scored, failures, size = score_items(flaky, Similarity(), items, NoVideos(), False, 8)
    assert flaky.sizes[:3] == [8, 4, 2] and size == 2
    assert [r["item_id"] for r in scored.pair] == ["a", "a", "c", "c"]
    assert failures == [{"item_id": "bad", "stage": "model", "reason": "ValueError: model exploded"}]


def test_limit_keeps_twins(sample):
    from bench.loaders import load

    items = load("vilma", sample["vilma"].data_path).items
    chosen = select_items(items, 2)
    assert sum(it.role == "main" for it in chosen) == 2 and len(chosen) == 4
    assert {it.twin_id for it in chosen} == {it.item_id for it in chosen}


def test_a_spread_limit_takes_items_evenly_over_the_file(sample):
    from bench.loaders import load

    items = load("vitatecs", sample["vitatecs"].data_path).items
    n = len(items) // 2
    spread = select_items(items, n, spread=True)
    positions = [items.index(it) for it in spread]
    assert len(spread) == n and positions == sorted(positions)
    step = -(-len(items) // n)
    assert positions[0] == 0 and positions[-1] >= len(items) - step
    assert max(b - a for a, b in zip(positions, positions[1:])) <= step
    assert select_items(items, n) == items[:n] and select_items(items, 10 * len(items), spread=True) == items


def test_score_records_frames_failures_and_manifest(sample, tiny, tmp_path):
    s = sample["velociti"]
    broken = sorted(s.video_root.glob("*.mp4"))[0]
    videos = tmp_path / "videos"
    videos.mkdir()
    for f in s.video_root.glob("*.mp4"):
        (videos / f.name).write_bytes(b"garbage" if f == broken else f.read_bytes())
    source = DataSource.of("velociti", s.data_path, videos)
    out = score(ScoreConfig(source, tiny("clip"), out=tmp_path / "run", chunk_size=2, progress=False))
    run = read_run(out)
    m = run.manifest
    assert m.status == "complete" and m.frame_policy == {"name": "uniform", "k": 8}
    assert m.versions["torch"] and m.details["model_class"] == "CLIPModel"
    assert m.family == "contrastive" and m.protocol == "similarity"
    from bench.loaders import load

    items = load("velociti", s.data_path, video_root=videos).items
    broken_items = {it.item_id for it in items if it.clips[0].path.endswith(broken.name)}
    assert broken_items and set(run.failures["item_id"]) == broken_items
    assert set(run.failures["stage"]) == {"frames"}
    assert len(run.pair) == 2 * (len(items) - len(broken_items))
    assert run.pair.duplicated(["item_id", "clip", "text"]).sum() == 0
    used = {r.item_id: json.loads(r.frames) for r in run.scored.itertuples()}
    assert all(len(v["0"]) == 8 for k, v in used.items() if k not in set(run.failures["item_id"]))


def test_score_command_passes_backend_options(sample, tiny, tmp_path):
    from bench.cli import main

    s = sample["velociti"]
    assert main(["score", "velociti", str(s.data_path), "--video-root", str(s.video_root), "--model", tiny("qwen2vl"),
                 "--protocol", "entail", "--frames", "uniform:k=2", "--limit", "2", "-b", "reuse=none",
                 "--out", str(tmp_path / "run"), "--quiet"]) == 0
    run = read_run(tmp_path / "run")
    assert run.manifest.options == {"reuse": "none"} and len(run.pair) == 4


def test_a_run_in_the_former_layout_reads_and_resumes(tmp_path):
    from bench.store.schema import choice_frame, failure_frame, pair_frame

    run = tmp_path / "run"
    _writer(run).close()
    tables = {"pair": pair_frame([{"item_id": "a", "clip": 0, "text": 0, "score": 0.5}]),
              "choice": choice_frame([]), "failures": failure_frame([{"item_id": "b", "stage": "frames",
                                                                       "reason": "corrupt"}]),
              "scored": pd.DataFrame({"item_id": ["a", "b"], "frames": ["{}", "{}"], "notes": ["[]", "[]"]})}
    for table, df in tables.items():                  # what the store wrote before chunks were named by position
        df.to_parquet(run / table / "part-00000.parquet", index=False)
    stored = read_run(run)
    assert list(stored.pair["score"]) == [0.5] and list(stored.failures["item_id"]) == ["b"]
    resumed = _writer(run)
    assert resumed.done == {"a", "b"}
    resumed.write_chunk(["c"], [{"item_id": "c", "clip": 0, "text": 0, "score": 0.25}], [], [])
    resumed.finish()
    assert list(read_run(run).pair["item_id"]) == ["a", "c"] and not list(run.rglob("part-*"))


def test_run_folders_expands_a_folder_of_runs_and_keeps_anything_else(tmp_path):
    from bench.store import run_folders

    for name in ("b-run", "a-run", "a-run/nested"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "manifest.json").write_text("{}")
    (tmp_path / "runs" / "not-a-run").mkdir()
    (tmp_path / "runs" / "demo.log").write_text("")
    (tmp_path / "empty").mkdir()
    runs = tmp_path / "runs"
    assert run_folders([runs]) == [runs / "a-run", runs / "b-run"]
    assert run_folders([runs / "b-run", str(runs / "a-run")]) == [runs / "b-run", runs / "a-run"]  # a-run holds a run
    kept = [tmp_path / "empty", tmp_path / "missing", runs / "demo.log"]
    assert run_folders(kept) == kept
    with pytest.raises(FileNotFoundError, match="not a run folder"):
        read_run(run_folders([tmp_path / "empty"])[0])
