"""What every adapter implements, and what the runner gives it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from bench.frames import Frames
from bench.items import Item


class FrameSource(Protocol):
    """The runner's decoded frames for the items of a chunk."""

    def clip(self, item: Item, index: int) -> Frames:
        """The frames of clip ``index`` of ``item`` under the run's policy."""

    def joined(self, item: Item, order: tuple[int, ...]) -> Frames:
        """The item's clips in ``order`` joined by a black gap (Vinoground's video score)."""


@dataclass
class Scored:
    """Rows for the pair and choice tables (see :mod:`bench.scoretables`)."""

    pair: list[dict] = field(default_factory=list)
    choice: list[dict] = field(default_factory=list)


class Adapter:
    """One model family. ``measure`` names what the pair scores are; ``uses_frames`` is False for text-only models."""

    name = "adapter"
    measure = "similarity"
    uses_frames = True

    def __init__(self, model: str, *, device: str = "cpu", dtype: str = "auto", prompt: str | None = None,
                 **options: object):
        self.model_id = model
        self.device = device
        self.dtype_name = dtype
        self.prompt = prompt
        self.options = options

    def load(self, auto_class: str, preprocessor: str = "AutoProcessor") -> None:
        """Load ``self.processor`` (or tokenizer) and ``self.model`` through transformers' ``Auto*`` classes, by hub
        id or local folder alike, in ``self.dtype`` on ``self.device``."""
        import transformers

        self.dtype = torch_dtype(self.dtype_name, self.device)
        self.processor = getattr(transformers, preprocessor).from_pretrained(self.model_id)
        model = getattr(transformers, auto_class).from_pretrained(self.model_id, dtype=self.dtype)
        self.model = model.to(self.device).eval()

    def score(self, items: Sequence[Item], frames: FrameSource, batch_size: int) -> Scored:
        """Score every question this adapter asks of ``items``."""
        raise NotImplementedError

    def describe(self) -> dict:
        """Manifest entries: what exactly was run."""
        return {"adapter": self.name, "model": self.model_id, "measure": self.measure}


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
