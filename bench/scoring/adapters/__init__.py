"""Model adapters by name: ``ADAPTERS[name](model, device=..., dtype=..., prompt=...)``."""

from __future__ import annotations

from bench.scoring.adapters.base import Adapter, FrameSource, Scored
from bench.scoring.adapters.contrastive import ContrastiveAdapter
from bench.scoring.adapters.textlm import TextLMAdapter
from bench.scoring.adapters.videollm import ChoiceAdapter, EntailmentAdapter
from bench.scoring.adapters.xclip import XCLIPAdapter

ADAPTERS: dict[str, type[Adapter]] = {
    "contrastive": ContrastiveAdapter,
    "xclip": XCLIPAdapter,
    "textlm": TextLMAdapter,
    "entail": EntailmentAdapter,
    "mc": ChoiceAdapter,
}

__all__ = ["ADAPTERS", "Adapter", "FrameSource", "Scored"]
