"""Frame-sampling policies: pure functions from a window of frames to the frame indices to decode.

Every policy takes ``(first, count, fps, params, key)``: the window's first frame index, how many frames it has, the
video's frame rate, the policy's parameters and a string identifying the clip (for seeded policies). It returns the
chosen absolute indices in time order and notes on any fallback (never silent padding). The frames are decoded in
time order and then fed in :func:`feeding_order` (``order=reverse`` or ``order=shuffle`` for a control).
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

Selection = tuple[list[int], list[str]]


def uniform(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """``k`` frames evenly spread over the window, ends included (``np.linspace(0, n-1, k)``, as LLaVA-OneVision's
    Vinoground script); a window shorter than ``k`` gives each of its frames once, noted."""
    k = int(params["k"])
    if count < k:
        return list(range(first, first + count)), [f"window has {count} frames, fewer than k={k}: all used once"]
    return [first + int(i) for i in np.linspace(0, count - 1, k).round().astype(int)], []


def by_fps(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """One frame every ``1/fps`` seconds from the window start; more than ``max_frames`` are thinned uniformly
    (VITATECS X-CLIP: 1 fps, at most 12)."""
    step = fps / float(params["fps"])
    if step <= 1:  # at least the video's own rate: every frame (without stepping through duplicates)
        chosen = list(range(first, first + count))
    else:
        chosen = sorted({first + int(i * step) for i in range(math.ceil(count / step)) if int(i * step) < count})
    cap = params.get("max_frames")
    if cap and len(chosen) > int(cap):
        picks = np.linspace(0, len(chosen) - 1, int(cap)).round().astype(int)
        return [chosen[i] for i in picks], [f"{len(chosen)} frames at {params['fps']} fps thinned to {cap}"]
    return chosen, []


def segment_midpoints(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """The middle frame of ``k`` equal segments: ``seg = (n-1)/k; idx = int(seg/2) + round(seg*i)`` (VideoCon,
    mPLUG-Owl ``processing_mplug_owl.py::get_index``); a window shorter than ``k`` gives each frame once, noted."""
    k = int(params["k"])
    if count < k:
        return list(range(first, first + count)), [f"window has {count} frames, fewer than k={k}: all used once"]
    seg = (count - 1) / k
    return [first + int(seg / 2) + int(round(seg * i)) for i in range(k)], []


def second_middles(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """The frame at the middle of each whole second, with ``fps = round(average fps)`` (VELOCITI Video-LLMs,
    ``utils/clip_utils.py::process_video``: 10 frames for a 10-s clip)."""
    rate = max(1, round(fps))
    seconds = count // rate
    if seconds == 0:
        return [first + count // 2], [f"window shorter than one second ({count} frames): its middle frame used"]
    return [first + s * rate + rate // 2 for s in range(seconds)], []


def quarter_seconds(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """Frames at ``s + 0.25`` and ``s + 0.75`` seconds of each whole second: 2 fps (VELOCITI contrastive models,
    ``utils/extract_frames.py``)."""
    seconds = int(count // fps)
    chosen = [first + int(round((s + q) * fps)) for s in range(seconds) for q in (0.25, 0.75)]
    chosen = [i for i in chosen if i < first + count]
    if not chosen:
        return [first + count // 2], [f"window shorter than one second ({count} frames): its middle frame used"]
    return chosen, []


def _rng(params: dict, key: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{params.get('seed', 0)}|{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def consecutive(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """``k`` consecutive frames ending at a seeded random index (ViLMA ``Dataset_v2``: ``clip_len=8``,
    ``frame_sample_rate=1``, ``end = randint(k, n)``). The seed is mixed with the clip, so a clip's frames do not
    depend on the order items are read (the official code draws from one global stream seeded with 0). A window
    shorter than ``k`` gives all its frames, noted (the official code repeats the last frame)."""
    k = int(params["k"])
    if count <= k:
        return list(range(first, first + count)), ([] if count == k else
                                                   [f"window has {count} frames, fewer than k={k}: all used once"])
    end = int(_rng(params, key).integers(k, count))
    return list(range(first + end - k, first + end)), []


def single(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """One frame: the middle one (``mode="middle"``) or a seeded random one (``mode="random"``), given ``repeat``
    times (default once; a model that takes a fixed number of frames, like X-CLIP, sees a still)."""
    mode = params.get("mode", "middle")
    repeat = int(params.get("repeat", 1))
    if mode == "middle":
        return [first + (count - 1) // 2] * repeat, []
    if mode == "random":
        return [first + int(_rng(params, key).integers(0, count))] * repeat, []
    raise ValueError(f"single-frame mode must be 'middle' or 'random', got {mode!r}")


def none(first: int, count: int, fps: float, params: dict, key: str) -> Selection:
    """No frames at all (blind runs)."""
    return [], []


def positive_integer(value: object) -> str | None:
    """What is wrong with ``value`` as a count of frames, or None."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return f"must be a positive integer, got {value!r}"
    return None


def positive_number(value: object) -> str | None:
    """What is wrong with ``value`` as a rate, or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        return f"must be a finite number > 0, got {value!r}"
    return None


def integer(value: object) -> str | None:
    """What is wrong with ``value`` as a seed, or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return f"must be an integer, got {value!r}"
    return None


def boolean(value: object) -> str | None:
    """What is wrong with ``value`` as a switch, or None."""
    return None if isinstance(value, bool) else f"must be true or false, got {value!r}"


def single_mode(value: object) -> str | None:
    """What is wrong with ``value`` as the mode of :func:`single`, or None."""
    return None if value in ("middle", "random") else f"must be 'middle' or 'random', got {value!r}"


ORDERS = ("forward", "reverse", "shuffle")


def frame_order(value: object) -> str | None:
    """What is wrong with ``value`` as the order frames are fed in, or None."""
    return None if value in ORDERS else f"must be one of {', '.join(ORDERS)}, got {value!r}"


def feeding_order(n: int, params: dict, key: str = "") -> list[int]:
    """Positions of the ``n`` chosen frames in the order they are fed to the model: as played (``order=forward``,
    the default), played backwards (``order=reverse``) or shuffled (``order=shuffle``: a permutation drawn from the
    policy's ``seed`` and the clip ``key``, so each clip gets its own and a rerun the same). The last two are
    controls: a model that reads time loses its advantage on order and direction foils."""
    order = params.get("order")
    if order == "reverse":
        return list(range(n))[::-1]
    if order == "shuffle":
        return [int(i) for i in _rng(params, f"shuffle|{key}").permutation(n)]
    return list(range(n))


Check = Callable[[object], "str | None"]


@dataclass(frozen=True)
class PolicySpec:
    """One frame policy: how it selects frames (``select``), the parameters it takes with their checks (a function
    saying what is wrong with a value, or None), which of them are required, and ``seed``: the parameter that seeds
    its random draw of frames (None: it draws none at random). Every policy that picks several frames also takes
    ``order`` (:func:`feeding_order`) and the ``seed`` of its shuffle; ``single`` takes ``blank`` (a black frame of
    the clip's size: what a model that needs frames sees of no video) and ``repeat``."""

    select: Callable[[int, int, float, dict, str], Selection]
    parameters: dict[str, Check] = field(default_factory=dict)
    required: tuple[str, ...] = ()
    seed: str | None = None


_FED = {"order": frame_order, "seed": integer}
POLICIES: dict[str, PolicySpec] = {
    "uniform": PolicySpec(uniform, {"k": positive_integer, **_FED}, ("k",)),
    "fps": PolicySpec(by_fps, {"fps": positive_number, "max_frames": positive_integer, **_FED}, ("fps",)),
    "segment_midpoints": PolicySpec(segment_midpoints, {"k": positive_integer, **_FED}, ("k",)),
    "second_middles": PolicySpec(second_middles, dict(_FED)),
    "quarter_seconds": PolicySpec(quarter_seconds, dict(_FED)),
    "consecutive": PolicySpec(consecutive, {"k": positive_integer, **_FED}, ("k",), seed="seed"),
    "single": PolicySpec(single, {"mode": single_mode, "seed": integer, "blank": boolean, "repeat": positive_integer},
                         seed="seed"),
    "none": PolicySpec(none),
}
