"""``foilbench perf store`` writes a run in chunks, compacts it without changing a row and times metrics on it."""

from __future__ import annotations

import math
import re

import pytest

from bench.cli import main
from bench.devkit.perf.store import items, write_run
from bench.store import RunWriter, read_run
from bench.store.run import TABLES


@pytest.mark.slow
def test_perf_store_prints_its_times(capsys):
    assert main(["perf", "store", "--items", "300", "--chunk-size", "7"]) == 0
    out = capsys.readouterr().out
    assert f"300 items in {len(TABLES) * math.ceil(300 / 7)} chunk files" in out
    assert re.search(r"read_run of the compacted run .* ratio\s+[\d.]+x", out)
    assert re.search(r"foilbench metrics RUN \(whole command\)\s+[\d.]+ s wall", out)


def test_the_generated_run_is_a_run(tmp_path):
    write_run(tmp_path / "run", 50, 8)
    loose = read_run(tmp_path / "run")
    assert list(loose.scored["item_id"]) == [it.item_id for it in items(50)] and len(loose.pair) == 100
    assert sorted(set(loose.scored["chunk"])) == list(range(math.ceil(50 / 8)))
    RunWriter(tmp_path / "run", loose.manifest, items(50), chunk_size=8).finish()
    compacted = read_run(tmp_path / "run")
    for table in ("pair", "choice", "failures", "scored"):
        assert getattr(compacted, table).equals(getattr(loose, table))
