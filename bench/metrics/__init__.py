"""Metrics: pure functions of (items, pair table, choice table), per-item outcomes first, aggregated second.

Start with :func:`metric_table` (one benchmark's full table), :func:`item_correct` (item x metric correctness for
widgets), or :func:`run_table` (a stored run). Each benchmark module (``vilma``, ``vitatecs``, ``velociti``,
``videocon``, ``vinoground``) documents the paper and equation its metrics follow.
"""

from bench.metrics.correctness import item_correct
from bench.metrics.tables import Settings, benchmark_outcomes, metric_table, run_table, summarize

__all__ = ["Settings", "benchmark_outcomes", "item_correct", "metric_table", "run_table", "summarize"]
