"""The broken-media corpus, generated here from one small valid video: for both decoders, every broken file is a
:class:`FrameError` whose one-line reason says what is wrong (never a decoder's internal check or a Python error),
and special files are refused without being opened."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Callable

import av
import numpy as np
import pytest

from bench.frames import BACKENDS, FrameError, durations, policy, sample_frames, sample_joined
from bench.items import Clip
from bench.videoio import write_video

UNREADABLE = r"not a readable video: unknown container format or corrupt data"
DECODER_NOISE = re.compile(r"Check failed|Errno|tuple index|index out of range|\[\d\d:\d\d:\d\d\]|\.cc:\d+")


@pytest.fixture(scope="module")
def videos(tmp_path_factory) -> dict[str, Path]:
    """A valid MP4 with its index at the end (as written), the same remuxed with the index first, and an audio-only
    MP4."""
    folder = tmp_path_factory.mktemp("media")
    frames = np.random.default_rng(0).integers(0, 255, (30, 64, 64, 3), dtype=np.uint8)
    tail = write_video(folder / "tail.mp4", frames, fps=10)
    head = folder / "head.mp4"
    with av.open(str(tail)) as src, av.open(str(head), "w", options={"movflags": "+faststart"}) as out:
        stream = out.add_stream_from_template(src.streams.video[0])
        for packet in src.demux(src.streams.video[0]):
            if packet.dts is not None:
                packet.stream = stream
                out.mux(packet)
    audio = folder / "audio.mp4"
    with av.open(str(audio), "w") as out:
        stream = out.add_stream("aac", rate=16000)
        for i in range(8):
            frame = av.AudioFrame.from_ndarray(np.zeros((1, 1024), np.float32), format="fltp", layout="mono")
            frame.sample_rate, frame.pts = 16000, i * 1024
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return {"tail": tail, "head": head, "audio": audio}


def _bytes(source: str, change: Callable[[bytes], bytes]) -> Callable[[Path, dict], Path]:
    def make(tmp: Path, videos: dict) -> Path:
        path = tmp / f"broken{videos[source].suffix}"
        path.write_bytes(change(videos[source].read_bytes()))
        return path
    return make


def _flip_middle(data: bytes) -> bytes:
    start = data.index(b"mdat") + 4
    middle = bytearray(data)
    for i in range(start + len(data) // 3, start + 2 * len(data) // 3, 7):
        middle[i] ^= 0xFF
    return bytes(middle)


def _special(make: Callable[[Path], None]) -> Callable[[Path, dict], Path]:
    def build(tmp: Path, videos: dict) -> Path:
        path = tmp / "special.mp4"
        make(path)
        return path
    return build


# name -> (how to make the broken file from the valid ones, what the reason must say)
CASES: dict[str, tuple[Callable[[Path, dict], Path], str]] = {
    "missing": (lambda tmp, v: tmp / "absent.mp4", r"^no such file$"),
    "empty": (_bytes("tail", lambda b: b""), r"^empty file \(0 bytes\)$"),
    "directory": (_special(lambda p: p.mkdir()), r"^not a regular file \(a directory\)$"),
    "fifo": (_special(os.mkfifo), r"^not a regular file \(a FIFO\)$"),
    "link_to_dev_zero": (_special(lambda p: p.symlink_to("/dev/zero")),
                         r"^not a regular file \(a character device, through a symbolic link\)$"),
    "dangling_link": (_special(lambda p: p.symlink_to(p.parent / "nothing.mp4")),
                      r"^no such file \(a broken symbolic link\)$"),
    "audio_only": (_bytes("audio", lambda b: b), r"^no video stream \(only audio\)$"),
    "truncated_half_index_last": (_bytes("tail", lambda b: b[: len(b) // 2]),
                                  r"^truncated: the MP4 box 'mdat' at byte \d+ needs [\d,]+ bytes, the file ends "
                                  r"[\d,]+ bytes short$"),
    "truncated_to_100_bytes": (_bytes("tail", lambda b: b[:100]), r"^truncated: the MP4 box 'mdat'"),
    "truncated_before_the_index": (_bytes("tail", lambda b: b[: b.index(b"moov") - 4]),
                                   r"^truncated or unfinished: the MP4 has no 'moov' index box"),
    "truncated_inside_the_index": (_bytes("head", lambda b: b[: b.index(b"moov") + 200]),
                                   r"^truncated: the MP4 box 'moov' at byte \d+ needs"),
    "truncated_data_index_first": (_bytes("head", lambda b: b[: int(len(b) * 0.6)]),
                                   r"^truncated: the MP4 box 'mdat' at byte \d+ needs"),
    "garbage_header": (_bytes("tail", lambda b: b"\xff" * 64 + b[64:]), "^" + UNREADABLE + "$"),
    "text_file": (_bytes("tail", lambda b: b"this is not a video\n" * 10), "^" + UNREADABLE + "$"),
    "random_bytes": (_bytes("tail", lambda b: np.random.default_rng(1).bytes(4096)), "^" + UNREADABLE + "$"),
    "flipped_bytes_in_the_data": (_bytes("head", _flip_middle), r"^corrupt video data at frame \d+ \("),
}


def _in_thread(call: Callable[[], object]) -> BaseException | object:
    """Run ``call`` on a daemon thread; a call that blocks (opening a FIFO) fails the test instead of hanging it."""
    result: list = []

    def run():
        try:
            result.append(call())
        except BaseException as err:  # noqa: BLE001 - handed back to the test
            result.append(err)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert result, "the decoder blocked (did it open a special file?)"
    return result[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_each_broken_video_gets_a_reason_that_says_what_is_wrong(name, backend, tmp_path, videos):
    make, reason = CASES[name]
    path = str(make(tmp_path, videos))
    error = _in_thread(lambda: sample_frames(Clip(path), policy("uniform", k=4), backend=backend))
    assert isinstance(error, FrameError), error
    assert re.search(reason, error.reason), error.reason
    assert str(error) == f"{path}: {error.reason}" and "\n" not in str(error)
    assert not DECODER_NOISE.search(error.reason), error.reason


@pytest.mark.parametrize("backend", BACKENDS)
def test_joined_clips_and_durations_report_the_same_reasons(backend, tmp_path, videos):
    audio = str(videos["audio"])
    with pytest.raises(FrameError, match=r"audio\.mp4: no video stream \(only audio\)$"):
        sample_joined([Clip(str(videos["tail"])), Clip(audio)], policy("uniform", k=4), backend=backend)
    os.mkfifo(tmp_path / "pipe.mp4")
    found = _in_thread(lambda: durations([str(videos["head"]), audio, str(tmp_path / "pipe.mp4")], backend))
    assert found == {str(videos["head"]): pytest.approx(3.0)}


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_valid_files_the_corpus_starts_from_decode(backend, videos):
    for name in ("tail", "head"):
        frames = sample_frames(Clip(str(videos[name])), policy("uniform", k=4), backend=backend)
        assert frames.array.shape == (4, 64, 64, 3) and frames.indices == [0, 10, 19, 29]
