"""The generated world: videos of coloured shapes that move, act and change, with true captions and foils of every
kind, written in each benchmark's released format (the sample suite), and a disjoint training split."""

from bench.devkit.world.suite import SampleSet, ensure_sample, generate_sample

__all__ = ["SampleSet", "ensure_sample", "generate_sample"]
