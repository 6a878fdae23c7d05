"""Turning a clip (file + window) and a policy into frames, indices and timestamps."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from bench.frames import decode
from bench.frames.decode import FrameError
from bench.frames.policies import POLICIES, feeding_order
from bench.items import Clip
from bench.keyvalue import parse_pairs


@dataclass(frozen=True)
class FramePolicy:
    """A named policy with its parameters (hashable, so it keys caches)."""

    name: str
    params: tuple[tuple[str, object], ...] = ()

    def describe(self) -> dict:
        """The policy as plain data for manifests."""
        return {"name": self.name, **dict(self.params)}


def policy(name: str, **params: object) -> FramePolicy:
    """A :class:`FramePolicy`, checked: ``policy("uniform", k=8)``, ``policy("fps", fps=1, max_frames=12)``.

    An unknown name, a missing or unknown parameter or a bad value (``k`` not a positive integer, ``fps`` not a
    finite number > 0...) is a one-line :class:`ValueError`, before any video is read.
    """
    if name not in POLICIES:
        raise ValueError(f"unknown frame policy {name!r}; choose one of {', '.join(sorted(POLICIES))}")
    accepted = POLICIES[name].parameters
    missing = [p for p in POLICIES[name].required if p not in params]
    unknown = [p for p in params if p not in accepted]
    if missing or unknown:
        raise ValueError(f"frame policy {name!r} takes {list(accepted) or 'no parameters'}; "
                         f"missing {missing}, unknown {unknown}")
    for key, value in params.items():
        problem = accepted[key](value)
        if problem:
            raise ValueError(f"frame policy {name!r}: {key} {problem}")
    if params.get("order") == "forward":  # the default: the same policy, the same identity
        params = {k: v for k, v in params.items() if k != "order"}
    return FramePolicy(name, tuple(sorted(params.items())))


def parse_policy(text: str) -> FramePolicy:
    """``"uniform:k=8"`` or ``"fps:fps=1,max_frames=12"`` or ``"none"`` to a checked policy (for command lines);
    values are read as JSON when they parse (``8``, ``0.5``), else kept as text."""
    name, _, rest = text.partition(":")
    pairs = filter(None, (p.strip() for p in rest.split(",")))
    return policy(name.strip(), **parse_pairs(pairs, "frame policy parameter", f" in {text!r}"))


def seeded(frame_policy: FramePolicy, seed: int) -> FramePolicy:
    """``frame_policy`` with ``seed`` for a policy that draws at random (and shuffled frames), unless it names its
    own seed."""
    params = dict(frame_policy.params)
    param = POLICIES[frame_policy.name].seed or ("seed" if params.get("order") == "shuffle" else None)
    if param is None or param in params:
        return frame_policy
    return policy(frame_policy.name, **params, **{param: seed})


@dataclass
class Frames:
    """Decoded frames and where they came from.

    ``timestamps`` are seconds from the start of the file (of the joined timeline for joined clips); ``segments`` says
    for joined clips which clip each frame is from (-1 for the black gap); ``notes`` records every fallback;
    ``window``: the clip's first frame and its number of frames at ``fps`` (the joined timeline's, for joined clips).
    """

    array: np.ndarray
    indices: list[int]
    timestamps: list[float]
    fps: float
    path: str
    notes: list[str] = field(default_factory=list)
    segments: list[int] = field(default_factory=list)
    window: tuple[int, int] = (0, 0)

    @property
    def nbytes(self) -> int:
        """Memory held by the pixels."""
        return int(self.array.nbytes)

    def video_metadata(self) -> dict:
        """The true times of the frames as transformers' processors read them (``video_metadata``): the video's
        ``fps``, each frame's index counted from the clip's first frame, the clip's frame count and duration, and the
        frame size. The clip is the video the model is shown, so its first frame is at 0 s; the times are given in
        time order whatever order the frames are fed in (a reversed or shuffled control is then a video played that
        way, not one whose times say so)."""
        first, count = self.window
        height, width = (int(self.array.shape[1]), int(self.array.shape[2])) if len(self.array) else (None, None)
        return {"fps": float(self.fps), "frames_indices": [int(round(t * self.fps)) - first
                                                          for t in sorted(self.timestamps)],
                "total_num_frames": int(count), "duration": count / self.fps if self.fps else None,
                "height": height, "width": width}


def window_frames(clip: Clip, count: int, fps: float) -> tuple[int, int, list[str]]:
    """The clip's window as (first frame, number of frames) of a video with ``count`` frames at ``fps``."""
    notes = []
    if clip.unit == "pts" and clip.fps and abs(clip.fps - fps) > 0.01:
        notes.append(f"window given in frames at {clip.fps} fps, video is {fps:.3f} fps: converted through time")
    scale = fps if clip.unit == "sec" else fps / float(clip.fps)  # type: ignore[arg-type]
    first = 0 if clip.start is None else int(round(clip.start * scale))
    end = count if clip.end is None else int(round(clip.end * scale))  # pts: frames[start:end], as ViLMA slices
    if first >= count:
        raise FrameError(clip.path, f"window starts at frame {first}, after the last frame ({count - 1})")
    if end > count:
        notes.append(f"window ends at frame {end}, past the video's {count} frames: clipped to the end")
        end = count
    return first, max(1, end - first), notes


# policies whose own choice of frames is seeded (any other policy's seed only shuffles the order frames are fed in)
def _key(clip: Clip) -> str:
    return f"{clip.path}|{clip.start}|{clip.end}|{clip.unit}"


def sample_frames(clip: Clip, frame_policy: FramePolicy, *, backend: str = "decord",
                  size: decode.Size = None, cache=None) -> Frames:
    """Decode the frames ``frame_policy`` chooses from ``clip``'s window (through ``cache`` when given, which holds
    them as played, so a policy and its reversed or shuffled controls decode once), at ``size``: a (width, height) or a
    :class:`~bench.frames.decode.Fit` (see :func:`bench.frames.decode.read`).

    Raises :class:`FrameError` for a missing, empty, corrupt or too short file.
    """
    if backend not in decode.BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of {decode.BACKENDS}")
    if cache is not None:
        return _fed(cache.get_or_decode(clip, _played(frame_policy), backend, size, _decode),
                    dict(frame_policy.params), _key(clip))
    return _decode(clip, frame_policy, backend, size)


def _played(frame_policy: FramePolicy) -> FramePolicy:
    """``frame_policy`` without what only orders its frames (the order they are fed in, and a seed that only shuffles):
    the frames a cache holds, in time order, for the policy and its reversed or shuffled controls alike."""
    fed = ("order",) if POLICIES[frame_policy.name].seed else ("order", "seed")
    return FramePolicy(frame_policy.name, tuple((k, v) for k, v in frame_policy.params if k not in fed))


def _decode(clip: Clip, frame_policy: FramePolicy, backend: str, size: decode.Size) -> Frames:
    if frame_policy.name == "none":
        height, width = (size[1], size[0]) if isinstance(size, tuple) else (0, 0)
        return Frames(np.zeros((0, height, width, 3), np.uint8), [], [], 0.0, clip.path, ["no frames (blind)"])
    count, fps = decode.probe(clip.path, backend)
    first, length, notes = window_frames(clip, count, fps)
    params = dict(frame_policy.params)
    indices, more = POLICIES[frame_policy.name].select(first, length, fps, params, _key(clip))
    array = decode.read(clip.path, indices, backend, size)
    if params.get("blank"):
        array, more = np.zeros_like(array), more + ["frame blanked (no video)"]
    frames = Frames(array, indices, [i / fps for i in indices], fps, clip.path, notes + more, window=(first, length))
    return _fed(frames, params, _key(clip))


def _fed(frames: Frames, params: dict, key: str) -> Frames:
    """``frames`` (decoded in time order) rearranged in the order the policy feeds them (``key``: the clip's, for a
    shuffle)."""
    order = feeding_order(len(frames.indices), params, key)
    if order == list(range(len(order))):
        return frames
    return dataclasses.replace(frames, array=frames.array[order], indices=[frames.indices[i] for i in order],
                               timestamps=[frames.timestamps[i] for i in order],
                               segments=[frames.segments[i] for i in order] if frames.segments else [])


def sample_joined(clips: Sequence[Clip], frame_policy: FramePolicy, gap_seconds: float = 2.0, *,
                  backend: str = "decord", size: decode.Size = None, cache=None) -> Frames:
    """Frames of ``clips`` played one after another with ``gap_seconds`` of black between them (Vinoground's video
    score), the policy applied to the joined timeline at the first clip's frame rate; through ``cache`` when given, as
    :func:`sample_frames` (the joined frames decoded once for a policy and its controls, and for every run asking them).

    Every clip and every gap must get at least one frame; when the policy leaves one out, its nearest frame is
    added and noted.
    """
    if frame_policy.name == "none":
        return _decode(clips[0], frame_policy, backend, size)
    key = "|".join(map(_key, clips))
    if cache is not None:  # the gap goes into the key with the policy
        joined = cache.get_or_decode(tuple(clips), (_played(frame_policy), gap_seconds), backend, size,
                                     lambda c, played, b, s: _join(c, played[0], played[1], b, s))
        return _fed(joined, dict(frame_policy.params), key)
    return _fed(_join(clips, frame_policy, gap_seconds, backend, size), dict(frame_policy.params), key)


def _join(clips: Sequence[Clip], frame_policy: FramePolicy, gap_seconds: float, backend: str,
          size: decode.Size) -> Frames:
    """:func:`sample_joined`'s frames in time order (before the policy's feeding order)."""
    parts = []
    for clip in clips:
        count, fps = decode.probe(clip.path, backend)
        first, length, notes = window_frames(clip, count, fps)
        parts.append((clip, first, length, fps, notes))
    rate = parts[0][3]
    gap = int(round(gap_seconds * rate))
    spans: list[tuple[int, int, int]] = []  # (segment, start on the joined timeline, length)
    start = 0
    for n, (clip, first, length, fps, _) in enumerate(parts):
        if n:
            spans.append((-1, start, gap))
            start += gap
        joined_length = int(round(length / fps * rate))
        spans.append((n, start, joined_length))
        start += joined_length
    params = dict(frame_policy.params)
    chosen, notes = POLICIES[frame_policy.name].select(0, start, rate, params, "|".join(map(_key, clips)))
    chosen = set(chosen)
    for segment, s, length in spans:
        if length and not any(s <= i < s + length for i in chosen):
            chosen.add(s + length // 2)
            notes.append(f"{'gap' if segment < 0 else f'clip {segment}'} got no frame: its middle frame added")
    notes = [note for part in parts for note in part[4]] + notes
    timeline = sorted(chosen)
    segments, local = [], []
    for i in timeline:
        segment, s, _ = next(span for span in spans if span[1] <= i < span[1] + span[2])
        segments.append(segment)
        if segment >= 0:
            _, first, length, fps, _ = parts[segment]
            local.append(min(first + length - 1, first + int(math.floor((i - s) / rate * fps))))
        else:
            local.append(-1)
    decoded: dict[int, list[np.ndarray]] = {}
    for n, (clip, *_rest) in enumerate(parts):
        wanted = [idx for seg, idx in zip(segments, local) if seg == n]
        if n:  # clips of another resolution are scaled to the first clip's
            height, width = decoded[0][0].shape[:2]
            size = (width, height)
        decoded[n] = list(decode.read(clip.path, wanted, backend, size))
    black = np.zeros_like(decoded[0][0])
    streams = {n: iter(arrays) for n, arrays in decoded.items()}
    frames = [next(streams[seg]) if seg >= 0 else black for seg in segments]
    if params.get("blank"):
        frames, notes = [black] * len(frames), notes + ["frames blanked (no video)"]
    return Frames(np.stack(frames), local, [i / rate for i in timeline], rate, "+".join(c.path for c in clips), notes,
                  segments, window=(0, start))


def durations(paths: Sequence[str], backend: str = "decord") -> dict[str, float]:
    """Seconds of each readable video (unreadable or missing files are left out)."""
    found = {}
    for path in dict.fromkeys(paths):
        try:
            count, fps = decode.probe(path, backend)
        except FrameError:
            continue
        found[path] = count / fps
    return found
