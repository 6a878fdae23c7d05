"""The embedded sample suite: generated videos and annotation files in each benchmark's released format."""

from bench.devkit.world.suite import SampleSet, ensure_sample, generate_sample

__all__ = ["SampleSet", "ensure_sample", "generate_sample"]
