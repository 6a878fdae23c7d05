"""Metrics: pure functions of (items, pair table, choice table), per-item outcomes first, aggregated second.

Start with :func:`metric_table` (one benchmark's full table), :func:`item_correct` (item x metric correctness for
widgets), or :func:`run_table` (a stored run, over :func:`run_items`: the items that run was asked, never another
run's), each under a tie policy (:mod:`bench.metrics.ties`). Each benchmark
module (``vilma``, ``vitatecs``, ``velociti``, ``videocon``, ``vinoground``) documents the paper and equation its
metrics follow; :mod:`bench.metrics.dispatch` picks it through the benchmark registry.
"""

from bench.metrics.aggregate import Settings, summarize
from bench.metrics.dispatch import benchmark_outcomes, item_correct, metric_table, run_items, run_table
from bench.metrics.ties import DEFAULT_TIES, TIES

__all__ = ["DEFAULT_TIES", "Settings", "TIES", "benchmark_outcomes", "item_correct", "metric_table", "run_items",
           "run_table", "summarize"]
