"""One video decoding and frame-sampling layer for every model and benchmark.

``sample_frames(clip, policy("uniform", k=8))`` decodes the frames a named policy chooses from a clip's window and
records the indices and timestamps; ``sample_joined`` plays two clips with a black gap between them (Vinoground's
video score); ``FrameCache`` decodes each request once; ``prefetch`` decodes ahead on worker threads.
"""

from bench.frames.cache import FrameCache
from bench.frames.decode import BACKENDS, Fit, FrameError
from bench.frames.policies import POLICIES
from bench.frames.prefetch import prefetch
from bench.frames.sampling import (FramePolicy, Frames, durations, parse_policy, policy, sample_frames,
                                   sample_joined, seeded)

__all__ = ["BACKENDS", "Fit", "FrameCache", "FrameError", "FramePolicy", "Frames", "POLICIES", "durations",
           "parse_policy", "policy", "prefetch", "sample_frames", "sample_joined", "seeded"]
