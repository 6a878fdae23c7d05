"""Scoring under torchrun on CPU ranks (gloo): the same run as one process, resumes after a rank or the whole job is
killed with any number of ranks, and one refusal line when another writer holds the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from bench.config import DataSource, ScoreConfig
from bench.devkit.threads import torch_threads
from bench.items import Clip, Item
from bench.metrics.aggregate import Settings
from bench.metrics.dispatch import run_table
from bench.scoring.distributed import Ranks, rank_device, ranks_of, shard, work_of
from bench.scoring.plan import fixed_chunks
from bench.scoring.runner import score
from bench.store import read_run
from fixtures_store import holder as hold
from fixtures_store import weightless

ENV = {**os.environ, "OMP_NUM_THREADS": "1"}   # every process one thread, as torchrun sets for its ranks


def _item(i, texts=2, clips=1):
    return Item("vitatecs", f"i{i}", "s", tuple(Clip(f"{c}.mp4") for c in range(clips)),
                tuple(f"t{t}" for t in range(texts)), tuple((0,) for _ in range(clips)))


def test_ranks_come_from_torchrun_and_cuda_is_the_local_rank():
    ranks = ranks_of({"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "LOCAL_WORLD_SIZE": "2"})
    assert ranks == Ranks(3, 4, 1, 2) and not ranks.leader and ranks.many
    assert ranks_of({}) == Ranks() and Ranks().leader
    assert rank_device("cuda", ranks) == "cuda:1" and rank_device("cpu", ranks) == "cpu"
    assert rank_device("cuda", Ranks()) == "cuda"
    with pytest.raises(ValueError, match="RANK=4"):
        ranks_of({"RANK": "4", "WORLD_SIZE": "4"})
    with pytest.raises(ValueError, match="integers"):
        ranks_of({"RANK": "x", "WORLD_SIZE": "4"})


def test_shards_cover_every_chunk_once_balanced_by_work():
    items = [_item(i, texts=2 + (i % 7), clips=1 + (i % 2)) for i in range(200)]
    chunks = fixed_chunks(items, 8, set())
    for world in (1, 2, 3, 8):
        shards = shard(chunks, world)
        assert sorted(c for s in shards for c in s) == [c for c, _ in chunks]
        assert shard(chunks, world) == shards
        work = {c: sum(map(work_of, its)) for c, its in chunks}
        loads = [sum(work[c] for c in s) for s in shards]
        assert max(loads) - min(loads) <= max(work.values())
    heavy = [_item(0, texts=40)] + [_item(i) for i in range(1, 21)]
    shards = shard(fixed_chunks(heavy, 1, set()), 2)
    assert shards[0] == [0] and len(shards[1]) == 20, "balanced by texts x clips, not by item count"


def test_chunks_stay_at_their_positions_when_items_are_done():
    items = [_item(i) for i in range(10)]
    todo = fixed_chunks(items, 4, {"i0", "i1", "i2", "i3", "i5"})
    assert [(c, [it.item_id for it in its]) for c, its in todo] == [(1, ["i4", "i6", "i7"]), (2, ["i8", "i9"])]


def _launch(ranks, args, **popen):
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(ranks),
               "-m", "bench", "score", *args]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, **popen)


def _finish(proc, timeout=600):
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def _same_rows(one, other):
    for table in ("pair", "choice", "failures"):
        pd.testing.assert_frame_equal(getattr(one, table), getattr(other, table), check_exact=True)
    columns = ["item_id", "frames", "notes", "chunk"]
    pd.testing.assert_frame_equal(one.scored[columns], other.scored[columns], check_exact=True)


@pytest.mark.slow
def test_two_ranks_store_the_run_one_process_stores(sample, tiny, tmp_path):
    s = sample["velociti"]
    videos = tmp_path / "videos"
    videos.mkdir()
    broken = sorted(s.video_root.glob("*.mp4"))[0]
    for f in s.video_root.glob("*.mp4"):
        (videos / f.name).write_bytes(b"garbage" if f == broken else f.read_bytes())
    model = tiny("clip")
    args = ["velociti", str(s.data_path), "--video-root", str(videos), "--model", model, "--chunk-size", "2",
            "--frames", "uniform:k=4", "--out", str(tmp_path / "ranks")]
    code, out, err = _finish(_launch(2, args))
    assert code == 0, err
    n = len(DataSource.of("velociti", s.data_path, videos).load())
    assert out.count("run stored in") == 1 and err.count(f"scoring {n} items") == 1, "rank 0 alone speaks"
    single = score(ScoreConfig(DataSource.of("velociti", s.data_path, videos), model, chunk_size=2,
                               frame_policy="uniform:k=4", out=tmp_path / "single", progress=False))
    ranks, one = read_run(tmp_path / "ranks"), read_run(single)
    assert len(ranks.failures) and set(ranks.failures["stage"]) == {"frames"}, "a rank records failures as ever"
    _same_rows(ranks, one)
    settings = Settings(n_boot=50)
    pd.testing.assert_frame_equal(run_table(ranks, settings).drop(columns="run"),
                                  run_table(one, settings).drop(columns="run"))
    m = ranks.manifest
    launch = m.extra["launches"][0]
    assert m.status == "complete" and m.extra["world_size"] == 2 and len(launch["ranks"]) == 2
    by_rank = launch["chunks"]
    chunks = [str(c) for c in range(-(-n // 2))]  # chunks of 2 items
    assert set(by_rank) == {"0", "1"} and sorted(",".join(by_rank.values()).split(","), key=int) == chunks
    assert sorted(set(ranks.scored["rank"])) == [0, 1]
    assert sorted(p.name for p in (tmp_path / "ranks" / "pair").iterdir()) == \
        [json.loads((tmp_path / "ranks" / "index.json").read_text())["tables"]["pair"]]


def _many_items(sample, folder, n):
    source = sample["vitatecs"]
    lines = [json.loads(line) for f in sorted(source.data_path.glob("*.jsonl")) for line in f.read_text().splitlines()]
    rows = [dict(lines[i % len(lines)], caption=f"{lines[i % len(lines)]['caption']} number {i}", aspect="Direction")
            for i in range(n)]
    (folder / "data").mkdir()
    (folder / "data" / "Direction.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder / "data"


def _rank_pids(launcher: int) -> dict[int, int]:
    """The ranks torchrun started, by rank."""
    found = {}
    for task in Path(f"/proc/{launcher}/task").iterdir():
        for pid in (task / "children").read_text().split():
            try:
                env = dict(v.split("=", 1) for v in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in v)
            except OSError:
                continue
            if "RANK" in env:
                found[int(env["RANK"])] = int(pid)
    return found


def _wait_gone(pids, timeout=60):
    """Wait until the processes ``pids`` have exited (a killed process holds its locks until it is gone)."""
    deadline = time.time() + timeout
    for pid in pids:
        while time.time() < deadline:
            try:
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in "ZX":
                    break
            except OSError:
                break
            time.sleep(0.05)


def _wait_for_chunks(run, count, proc, rank=None, old=(), timeout=300):
    """Wait until ``proc`` stored ``count`` chunks (of rank ``rank``; none of the launches ``old``)."""
    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        names = [p.name for p in (run / "scored").glob("part-*.parquet")] if (run / "scored").is_dir() else []
        mine = [n for n in names if (rank is None or n.endswith(f"-r{rank}.parquet")) and not any(o in n for o in old)]
        if len(mine) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"no {count} chunks before the job ended: {proc.communicate()}")


@pytest.mark.slow
def test_killed_rank_and_killed_job_resume_with_other_world_sizes(sample, tiny, tmp_path):
    n = 240
    data = _many_items(sample, tmp_path, n)
    args = ["vitatecs", str(data), "--video-root", str(sample["vitatecs"].video_root), "--model", tiny("gpt2"),
            "--family", "textlm", "--chunk-size", "4", "--batch-size", "3", "--quiet"]
    run = tmp_path / "run"

    job = _launch(3, [*args, "--out", str(run)])
    _wait_for_chunks(run, 2, job, rank=1)
    ranks = _rank_pids(job.pid)
    os.kill(ranks[1], signal.SIGKILL)
    code, _, _ = _finish(job)
    _wait_gone(ranks.values())
    assert code != 0, "a killed rank fails the job"
    first = read_run(run)
    assert first.manifest.status == "running" and 0 < len(first.scored) < n

    job = _launch(2, [*args, "--out", str(run)])
    _wait_for_chunks(run, 2, job, old=[first.manifest.extra["launches"][0]["id"]])
    ranks = _rank_pids(job.pid)
    for pid in [job.pid, *ranks.values()]:     # the whole job (torchrun starts each rank in its own session)
        os.kill(pid, signal.SIGKILL)
    job.wait()
    _wait_gone(ranks.values())
    second = read_run(run)
    assert len(first.scored) < len(second.scored) < n and second.scored["item_id"].is_unique

    done = subprocess.run([sys.executable, "-m", "bench", "score", *args, "--out", str(run)], capture_output=True,
                          text=True, env=ENV, timeout=600)
    assert done.returncode == 0, done.stderr
    with torch_threads(1):
        whole = score(ScoreConfig(DataSource.of("vitatecs", data, sample["vitatecs"].video_root), tiny("gpt2"),
                                  family="textlm", chunk_size=4, batch_size=3, out=tmp_path / "whole", progress=False))
    resumed = read_run(run)
    assert resumed.manifest.status == "complete" and len(resumed.scored) == n
    assert [launch["world_size"] for launch in resumed.manifest.extra["launches"]] == [3, 2, 1]
    _same_rows(resumed, read_run(whole))
    assert not [p for p in run.rglob("*") if p.name.startswith((".", "part-"))]


@pytest.mark.slow
def test_a_job_on_a_held_run_is_refused_once(sample, tiny, tmp_path):
    run = tmp_path / "run"
    model = weightless(tiny("clip"), tmp_path / "weightless")
    holder = hold(run)
    s = sample["velociti"]
    try:
        code, out, err = _finish(_launch(2, ["velociti", str(s.data_path), "--model", str(model), "--family",
                                             "contrastive", "--out", str(run)]))
    finally:
        holder.kill()
        holder.wait()
    assert code != 0 and err.count(f"another writer is scoring this run (PID {holder.pid}") == 1
