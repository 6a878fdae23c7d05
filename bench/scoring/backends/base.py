"""What every backend shares: loading through transformers' ``Auto*`` classes, dtypes, and the manifest entries."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from bench.scoring.requests import Request, VideoRef

Videos = Mapping[VideoRef, np.ndarray | None]
"""Decoded frames (T x H x W x 3 uint8) per video ref; None or an empty array for no frames (blind)."""


class Backend:
    """One model family. Subclasses load their model in ``__init__`` and implement :meth:`answer`."""

    def __init__(self, model: str, *, device: str = "cpu", dtype: str = "auto", **options: object):
        if options:
            raise ValueError(f"unknown backend option(s) {sorted(options)} for {type(self).__name__}")
        self.model_id = model
        self.device = device
        self.dtype_name = dtype

    def load(self, auto_class: str, preprocessor: str = "AutoProcessor") -> None:
        """Load ``self.processor`` (or tokenizer) and ``self.model`` through transformers' ``Auto*`` classes, by hub
        id or local folder alike, in ``self.dtype`` on ``self.device``."""
        import transformers

        self.dtype = torch_dtype(self.dtype_name, self.device)
        self.processor = getattr(transformers, preprocessor).from_pretrained(self.model_id)
        model = getattr(transformers, auto_class).from_pretrained(self.model_id, dtype=self.dtype)
        self.model = model.to(self.device).eval()

    def reset(self) -> None:
        """Forget what the backend cached between calls (text embeddings, likelihoods)."""

    def prepare(self, answers: Sequence[str]) -> None:
        """Check, before any scoring, that the backend can score these answer words (Video-LLMs override this)."""

    def answer(self, requests: Sequence[Request], videos: Videos, batch_size: int) -> np.ndarray:
        """One row of numbers per request (its width: :data:`bench.scoring.requests.ANSWER_WIDTH`, or the number of
        answers of :class:`~bench.scoring.requests.Ask` requests, NaN-padded)."""
        raise NotImplementedError

    def describe(self) -> dict:
        """Manifest entries: what exactly was run."""
        return {"model": self.model_id, "revision": model_revision(self.model),
                "model_class": type(self.model).__name__}


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


def model_revision(model) -> str | None:
    """The commit hash of a hub model when known (None for a local folder)."""
    return getattr(model.config, "_commit_hash", None)
