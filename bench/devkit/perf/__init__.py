"""Speed benchmarks (``foilbench perf``) that print ratios against naive baselines."""
