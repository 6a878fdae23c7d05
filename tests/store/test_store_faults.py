"""Faults of the run store: a writer killed at every rename and delete, two writers, stale locks, ranks left over."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import socket
import subprocess
import sys

import pandas as pd
import pytest

from bench.config import Manifest
from bench.items import Clip, Item
from bench.scoring.plan import fixed_chunks
from bench.store import RunLockedError, RunWriter, read_run
from bench.store.lock import LOCK
from fixtures_store import holder as _holder
from fixtures_store import weightless

ITEMS = [Item("vitatecs", i, "Direction", (Clip("v.mp4"),), ("caption", "foil"), ((0,),)) for i in "abcde"]
ALL = {it.item_id for it in ITEMS}


def _manifest():
    return Manifest(benchmark="vitatecs", data_path="/d", model="m", measure="similarity", family="contrastive",
                    protocol="similarity", frame_policy={"name": "none"}, seed=0)


def _rows(item_id):
    score = float("0." + str(ord(item_id)))
    return [{"item_id": item_id, "clip": 0, "text": t, "score": score - t} for t in (0, 1)]


def _score(writer):
    """What the runner does: every chunk not yet stored, at its fixed position, then finish."""
    for number, items in fixed_chunks(ITEMS, writer.chunk_size, writer.done):
        ids = [it.item_id for it in items]
        failures = [{"item_id": "e", "stage": "frames", "reason": "corrupt"}] if "e" in ids else []
        writer.write_chunk([i for i in ids if i != "e"] + (["e"] if failures else []),
                           [r for i in ids if i != "e" for r in _rows(i)], [], failures,
                           {i: {"0": [0, 1]} for i in ids}, chunk=number)
    writer.finish()


class Killed(BaseException):
    """The process died here."""


def _dying_at(monkeypatch, step):
    """Make the ``step``-th rename or delete of a file kill the writer (before it happens)."""
    count = [0]

    def dying(real):
        def call(*args, **kwargs):
            count[0] += 1
            if count[0] == step:
                raise Killed
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(os, "replace", dying(os.replace))
    monkeypatch.setattr(os, "unlink", dying(os.unlink))
    return count


def _check_consistent(run, complete, acknowledged=frozenset()):
    stored = read_run(run)
    scored = list(stored.scored["item_id"])
    assert len(scored) == len(set(scored)), "an item is stored twice"
    assert acknowledged <= set(scored), f"stored chunks were lost: {sorted(acknowledged - set(scored))}"
    expected = [r for i in sorted(set(scored) - {"e"}) for r in _rows(i)]
    got = stored.pair.sort_values(["item_id", "text"]).to_dict("records")
    assert [(r["item_id"], r["text"], r["score"]) for r in got] == [(r["item_id"], r["text"], r["score"])
                                                                   for r in expected]
    assert list(stored.failures["item_id"]) == (["e"] if "e" in scored else [])
    if complete:
        assert set(scored) == ALL and stored.manifest.status == "complete"


@pytest.mark.slow
def test_a_writer_killed_at_any_rename_or_delete_loses_and_repeats_nothing(tmp_path, monkeypatch):
    with monkeypatch.context() as m:
        steps = _dying_at(m, 0)
        _score(RunWriter(tmp_path / "reference", _manifest(), ITEMS, chunk_size=2))
    reference = read_run(tmp_path / "reference")
    for step in range(1, steps[0] + 1):
        run = tmp_path / f"killed-{step}"
        writer = None
        with monkeypatch.context() as m:
            _dying_at(m, step)
            try:
                writer = RunWriter(run, _manifest(), ITEMS, chunk_size=2)
                _score(writer)
                raise AssertionError(f"step {step} did not kill the writer")
            except Killed:
                if writer is not None:
                    writer.close()          # what the kernel does for a dead process: its locks are released
        if (run / "manifest.json").is_file():
            _check_consistent(run, False, frozenset(writer.done) if writer is not None else frozenset())
        _score(RunWriter(run, _manifest(), ITEMS, chunk_size=2))
        _check_consistent(run, complete=True)
        resumed = read_run(run)
        for table in ("pair", "choice", "failures"):
            pd.testing.assert_frame_equal(getattr(resumed, table), getattr(reference, table), check_exact=True)
        names = sorted(p.name for p in run.rglob("*") if p.is_file())
        assert names == sorted(["index.json", "items.parquet", "manifest.json", "ranks.lock", "writer.lock"]
                               + [json.loads((run / "index.json").read_text())["tables"]["pair"]] * 4), step


def test_a_second_writer_is_refused_naming_the_holder_and_a_dead_one_is_taken_over(tmp_path):
    run = tmp_path / "run"
    holder = _holder(run)
    try:
        with pytest.raises(RunLockedError, match=f"PID {holder.pid} on host {socket.gethostname()}"):
            RunWriter(run, _manifest(), ITEMS)
        assert not (run / "manifest.json").exists(), "a refused writer must touch nothing"
    finally:
        holder.kill()
        holder.wait()
    writer = RunWriter(run, _manifest(), ITEMS)
    assert f"took over the lock left by PID {holder.pid}" in writer.notes[0]
    assert json.loads((run / LOCK).read_text())["pid"] == os.getpid()
    with pytest.raises(RunLockedError, match=f"PID {os.getpid()}"):
        RunWriter(run, _manifest(), ITEMS)           # a second writer in the same process, too
    writer.close()
    assert (run / LOCK).read_text() == ""
    assert RunWriter(run, _manifest(), ITEMS).notes == []


def test_a_rank_left_running_by_a_dead_job_is_found(tmp_path):
    run = tmp_path / "run"
    orphan = _holder(run, "RankHold(sys.argv[1])")
    try:
        with pytest.raises(RunLockedError, match="a rank of an earlier job still writes this run"):
            RunWriter(run, _manifest(), ITEMS)
    finally:
        orphan.kill()
        orphan.wait()
    RunWriter(run, _manifest(), ITEMS).close()


def test_without_flock_the_holder_record_decides(tmp_path, monkeypatch):
    def no_flock(fd, op):
        raise OSError(errno.ENOLCK, "no locks available")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    run = tmp_path / "run"
    run.mkdir()
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (run / LOCK).write_text(json.dumps({"pid": live.pid, "host": socket.gethostname(), "since": "then"}))
        with pytest.raises(RunLockedError, match=f"PID {live.pid}"):
            RunWriter(run, _manifest(), ITEMS)
        (run / LOCK).write_text(json.dumps({"pid": live.pid, "host": "elsewhere", "since": "then"}))
        with pytest.raises(RunLockedError, match="on host elsewhere"):
            RunWriter(run, _manifest(), ITEMS)
    finally:
        live.kill()
        live.wait()
    (run / LOCK).write_text(json.dumps({"pid": live.pid, "host": socket.gethostname(), "since": "then"}))
    writer = RunWriter(run, _manifest(), ITEMS)
    assert f"PID {live.pid}" in writer.notes[0]
    writer.close()


def test_score_refuses_a_held_run_in_one_line_before_loading_a_model(sample, tiny, tmp_path, capsys):
    from bench.cli import main

    run = tmp_path / "run"
    model = weightless(tiny("clip"), tmp_path / "weightless")
    capsys.readouterr()
    holder = _holder(run)
    try:
        s = sample["velociti"]
        code = main(["score", "velociti", str(s.data_path), "--video-root", str(s.video_root), "--model",
                     str(model), "--family", "contrastive", "--out", str(run), "--quiet"])
    finally:
        holder.kill()
        holder.wait()
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"another writer is scoring this run (PID {holder.pid} on host {socket.gethostname()}" in err


def test_compaction_while_a_rank_writes_absorbs_only_complete_chunks(tmp_path):
    from bench.store import ChunkWriter

    run = tmp_path / "run"
    leader = RunWriter(run, _manifest(), ITEMS, chunk_size=2, ranks=[{}, {}])
    member = ChunkWriter(run, leader.launch, 1)
    leader.write_chunk(["a", "b"], _rows("a") + _rows("b"), [], [], chunk=0)
    member.write_chunk(1, ["c", "d"], _rows("c") + _rows("d"), [], [])
    member.write_chunk(2, ["e"], _rows("e"), [], [])
    half = [run / t / f"part-000002-{leader.launch}-r1.parquet" for t in ("choice", "failures")]
    for path in half:                           # rank 1 is between its renames of chunk 2
        path.rename(path.with_name("." + path.name + ".tmp"))
    leader.compact()
    assert json.loads((run / "index.json").read_text())["absorbed"] == [
        f"part-00000{c}-{leader.launch}-r{r}.parquet" for c, r in ((0, 0), (1, 1))]
    assert sorted(read_run(run).scored["item_id"]) == ["a", "b", "c", "d"]
    for path in half:
        path.with_name("." + path.name + ".tmp").rename(path)
    assert sorted(read_run(run).scored["item_id"]) == ["a", "b", "c", "d", "e"]
    member.close()
    leader.finish()
    final = read_run(run)
    assert list(final.scored["item_id"]) == list("abcde") and len(final.pair) == 10
    assert final.manifest.extra["launches"][0]["chunks"] == {"0": "0", "1": "1-2"}
