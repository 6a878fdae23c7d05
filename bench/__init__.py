"""Foilbench: load counterfactual video-caption benchmarks, score models on them, and compute the papers' metrics."""

__version__ = "0.1.0"
