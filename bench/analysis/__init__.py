"""Cross-run analysis: pure functions over the per-item outcomes of several runs of one benchmark.

:mod:`bench.analysis.agreement` holds the statistics of two runs on the same items (agreement, Cohen's kappa with its
interval, McNemar's exact test); :mod:`bench.analysis.items` the tables built from runs (per item: runs right,
difficulty, margins; per pair of runs: the agreement table, per label value with Holm's correction).
"""
