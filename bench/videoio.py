"""Writing small videos (the sample suite and the tests make their own clips)."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def write_video(path: str | Path, frames: np.ndarray, fps: float = 30.0, codec: str = "libx264") -> Path:
    """Encode ``frames`` (T x H x W x 3, uint8; H and W even) to ``path`` at a constant ``fps``.

    H.264 (or another PyAV codec, e.g. ``libvpx`` for WebM) in yuv420p with a keyframe every second so any decoder
    can seek it; encoded on one thread and muxed bit-exactly so the same frames give the same bytes (for H.264, when
    the chroma width is a multiple of 32: x264's output otherwise depends on memory layout).
    """
    import av

    frames = np.asarray(frames)
    if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"frames must be T x H x W x 3 uint8, got {frames.shape} {frames.dtype}")
    if frames.shape[1] % 2 or frames.shape[2] % 2:
        raise ValueError(f"frame height and width must be even for yuv420p, got {frames.shape[1:3]}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part" + path.suffix)
    with av.open(str(tmp), mode="w", options={"fflags": "+bitexact"}) as container:  # no muxer ids or dates
        stream = container.add_stream(codec, rate=int(round(fps)))
        stream.width, stream.height = frames.shape[2], frames.shape[1]
        stream.pix_fmt = "yuv420p"
        stream.thread_count = 1
        stream.options = {"g": str(max(1, int(round(fps))))}
        if codec == "libx264":
            stream.options.update(crf="18", preset="veryfast")
        for image in frames:
            container.mux(stream.encode(av.VideoFrame.from_ndarray(image, format="rgb24")))
        container.mux(stream.encode())
    tmp.replace(path)
    return path
