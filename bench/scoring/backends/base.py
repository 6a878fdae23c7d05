"""What every backend shares: loading through transformers' ``Auto*`` classes (or parts built in memory), dtypes, the
processor settings Foilbench fixes and records, the frame size to decode to, and the manifest entries."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from bench.frames import Frames
from bench.frames.decode import Fit
from bench.scoring.requests import Request, VideoRef

Videos = Mapping[VideoRef, Any]
"""Per video ref: the decoded :class:`~bench.frames.Frames` (pixels T x H x W x 3 uint8 with their indices and true
times; None or no frames for a blind run), or what the backend's :meth:`Backend.encode` made of them on a decode
worker."""


def has_frames(video: Any) -> bool:
    """Whether a video as :data:`Videos` holds it has frames (False for None or a blind run's empty frames)."""
    return video is not None and (not isinstance(video, Frames) or len(video.array) > 0)

# Processor settings whose defaults changed between transformers versions: Foilbench sets them, whatever the version
# or the model's preprocessor config says, so a run's pixels do not change under the user's feet. Frames are sampled
# by Foilbench's frame policies, never again by the processor; Qwen2-VL's video processor applies the per-frame pixel
# cap of the reference implementation (qwen-vl-utils; the default from transformers 5.22 on, opt-in before).
FIXED_SETTINGS: dict[str, Any] = {"do_sample_frames": False, "cap_pixels_per_frame": True}


class Backend:
    """One model family. Subclasses load their model in ``__init__`` and implement :meth:`answer`.

    ``model``: a hub id or local folder, or an object built in memory with a ``processor`` and a ``model``, loaded
    as they are (its ``str`` names it in manifests). ``vision`` names the processor part that prepares frames
    (``image_processor`` or ``video_processor``).
    """

    vision = "image_processor"

    def __init__(self, model: Any, *, device: str = "cpu", dtype: str = "auto", **options: object):
        if options:
            raise ValueError(f"unknown backend option(s) {sorted(options)} for {type(self).__name__}")
        self.in_memory = None if isinstance(model, (str, os.PathLike)) else model
        self.model_id = str(model)
        self.device = device
        self.dtype_name = dtype

    def load(self, auto_class: str, preprocessor: str = "AutoProcessor") -> None:
        """Load ``self.processor`` (or tokenizer) and ``self.model`` through transformers' ``Auto*`` classes, by hub
        id or local folder alike (or take the ones built in memory), in ``self.dtype`` on ``self.device``; then fix the
        processor settings of :data:`FIXED_SETTINGS`. ``self.revision``: :func:`model_revision` of what was loaded."""
        import transformers

        self.dtype = torch_dtype(self.dtype_name, self.device)
        if self.in_memory is not None:
            self.processor, model = self.in_memory.processor, self.in_memory.model.to(self.dtype)
        else:
            self.processor = getattr(transformers, preprocessor).from_pretrained(self.model_id)
            model = getattr(transformers, auto_class).from_pretrained(self.model_id, dtype=self.dtype)
        self.model = model.to(self.device).eval()
        self.revision = model_revision(self.model, None if self.in_memory is not None else self.model_id)
        for part in processor_parts(self.processor).values():
            for name, value in FIXED_SETTINGS.items():
                if hasattr(part, name):
                    setattr(part, name, value)

    @property
    def on_cuda(self) -> bool:
        """Whether the model runs on a CUDA device (pinned host memory, non-blocking copies)."""
        return str(self.device).startswith("cuda")

    def reset(self) -> None:
        """Forget what the backend cached between calls (text embeddings, likelihoods)."""

    def prepare(self, answers: Sequence[str]) -> None:
        """Check, before any scoring, that the backend can score these answer words (Video-LLMs override this)."""

    def answering(self, protocol, benchmark=None, folder: str | os.PathLike | None = None):
        """The protocol as this backend answers it, for ``benchmark`` (its spec), with ``folder`` the run folder it may
        keep each answer in as it comes; by default the protocol as it is (a remote model's reads its responses:
        :mod:`bench.scoring.backends.api`)."""
        return protocol

    def frame_fit(self) -> Fit | None:
        """The size the processor resizes frames to, as a rule the decoder can follow (None: unknown, or a processor
        that does not resize)."""
        return fit_of(getattr(self.processor, self.vision, None))

    def encode(self, frames: Frames) -> Any:
        """What the backend computes from one clip's frames before the model (runs on a decode worker thread, so
        the processors of many clips run in parallel); the default keeps the frames."""
        return frames

    def check(self, requests: Sequence[Request], videos: Videos, batch_size: int) -> str | None:
        """Check the backend's shortcuts on a first batch (Video-LLMs: KV-prefix reuse against whole requests);
        returns a line for the console, or None when there is nothing to check."""
        return None

    def answer(self, requests: Sequence[Request], videos: Videos, batch_size: int) -> np.ndarray:
        """One row of numbers per request (its width: :data:`bench.scoring.requests.ANSWER_WIDTH`, or the number of
        answers of :class:`~bench.scoring.requests.Ask` requests, NaN-padded)."""
        raise NotImplementedError

    def to_device(self, tensor):
        """``tensor`` on the model's device; floating tensors in the model's dtype; copied without blocking from
        pinned memory."""
        dtype = self.dtype if tensor.is_floating_point() else tensor.dtype
        return tensor.to(self.device, dtype, non_blocking=self.on_cuda)

    def concat_on_device(self, tensors: Sequence):
        """``tensors`` each copied to the device (without blocking, from pinned memory), concatenated there."""
        import torch

        return torch.cat([self.to_device(t) for t in tensors])

    def pinned(self, tensor):
        """``tensor`` in page-locked host memory when the model is on CUDA (so its copy overlaps compute)."""
        return tensor.pin_memory() if self.on_cuda and tensor.device.type == "cpu" else tensor

    def describe(self) -> dict:
        """Manifest entries: what exactly was run, including the processors' effective settings and the
        architecture's row of facts (:mod:`bench.scoring.architectures`; ``tested: false`` when it has none)."""
        from bench.scoring.architectures import architecture_of

        model_type = str(getattr(getattr(self.model, "config", None), "model_type", ""))
        row = architecture_of(model_type)
        return {"model": self.model_id, "revision": self.revision,
                "model_class": type(self.model).__name__, "processor": processor_settings(self.processor),
                "architecture": {**row.describe(), "tested": True} if row else {"model_type": model_type,
                                                                                 "tested": False}}


def processor_parts(processor) -> dict[str, Any]:
    """The image and video processors inside a processor (or the image processor itself)."""
    parts = {name: getattr(processor, name) for name in ("image_processor", "video_processor")
             if getattr(processor, name, None) is not None}
    if not parts and hasattr(processor, "to_dict") and not hasattr(processor, "tokenizer"):
        parts["image_processor"] = processor
    return parts


def processor_settings(processor) -> dict[str, Any]:
    """The class and the effective settings (JSON values only) of each image and video processor."""
    out: dict[str, Any] = {"class": type(processor).__name__}
    for name, part in processor_parts(processor).items():
        settings = {k: v for k, v in part.to_dict().items()
                    if isinstance(v, (str, int, float, bool, list, dict, type(None)))}
        for key in FIXED_SETTINGS:
            if hasattr(part, key):
                settings[key] = getattr(part, key)
        out[name] = {"class": type(part).__name__, **settings}
    return out


def fit_of(part) -> Fit | None:
    """The :class:`~bench.frames.decode.Fit` of an image or video processor: Qwen2-VL's ``smart_resize`` (with its
    per-frame cap when on), or the generic resize of a ``shortest_edge`` or ``height`` x ``width`` size; None for a
    processor that does not resize or resizes its own way."""
    if part is None or not getattr(part, "do_resize", False):
        return None
    size = getattr(part, "size", None) or {}
    size = size if isinstance(size, dict) else size.__dict__
    if _is_qwen2_vl(part):
        cap = bool(getattr(part, "cap_pixels_per_frame", False))
        return Fit("qwen2_vl", factor=int(part.patch_size * part.merge_size), min_pixels=int(size["shortest_edge"]),
                   max_pixels=int(size["longest_edge"]), video_tokens=int(part.max_video_tokens) if cap else 0,
                   temporal=int(getattr(part, "temporal_patch_size", 1) or 1))
    if not _generic_resize(part):
        return None
    if size.get("height") and size.get("width") and not size.get("shortest_edge"):
        return Fit("exact", width=int(size["width"]), height=int(size["height"]))
    if size.get("shortest_edge") and not size.get("longest_edge"):
        return Fit("shortest_edge", edge=int(size["shortest_edge"]))
    return None


def _is_qwen2_vl(part) -> bool:
    from transformers import Qwen2VLImageProcessor, Qwen2VLVideoProcessor

    return isinstance(part, (Qwen2VLVideoProcessor, Qwen2VLImageProcessor)) and hasattr(part, "merge_size")


def _generic_resize(part) -> bool:
    """Whether the processor resizes with transformers' own size rules (its class does not override ``resize``)."""
    from transformers import BaseImageProcessor, BaseVideoProcessor
    from transformers.image_processing_backends import PilBackend, TorchvisionBackend

    owner = next((klass for klass in type(part).__mro__ if "resize" in vars(klass)), None)
    return owner in (BaseVideoProcessor, BaseImageProcessor, TorchvisionBackend, PilBackend)


def torch_dtype(name: str, device: str):
    """``auto``: bfloat16 on a GPU that has it, else float16 on GPU, float32 on CPU; or a named dtype."""
    import torch

    if name == "auto":
        if device.startswith("cuda"):
            return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.float32
    try:
        return {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}[name]
    except KeyError:
        raise ValueError(f"dtype must be auto, float32, float16 or bfloat16, got {name!r}") from None


def model_revision(model, source: str | None = None) -> str | None:
    """The commit hash of a hub model when known; for a model loaded from the local folder ``source``, ``files:``
    and a digest of its files' names, sizes and modification times, so that a run is not resumed on a model rebuilt or
    replaced in the same folder."""
    found = getattr(model.config, "_commit_hash", None)
    return found or (folder_revision(source) if source is not None else None)


def folder_revision(source: str) -> str | None:
    """``files:`` and a digest of the names, sizes and modification times of the files in the local folder
    ``source`` (None when it is not a folder): known before the model in it is loaded."""
    if not os.path.isdir(source):
        return None
    digest = hashlib.sha256()
    for path in sorted(p for p in Path(source).rglob("*") if p.is_file()):
        info = path.stat()
        digest.update(f"{path.relative_to(source)}\0{info.st_size}\0{info.st_mtime_ns}\n".encode())
    return f"files:{digest.hexdigest()[:16]}"
