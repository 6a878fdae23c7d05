"""Model adapters by name: ``adapter_class(name)(model, device=..., dtype=..., prompt=...)``.

The registry names each adapter's module and class, so listing adapters (``foilbench --help``) imports no model code.
"""

from __future__ import annotations

import importlib

from bench.scoring.adapters.base import Adapter, FrameSource, Scored

ADAPTERS: dict[str, str] = {
    "contrastive": "bench.scoring.adapters.contrastive:ContrastiveAdapter",
    "xclip": "bench.scoring.adapters.xclip:XCLIPAdapter",
    "textlm": "bench.scoring.adapters.textlm:TextLMAdapter",
    "entail": "bench.scoring.adapters.videollm:EntailmentAdapter",
    "mc": "bench.scoring.adapters.videollm:ChoiceAdapter",
}


def adapter_class(name: str) -> type[Adapter]:
    """The adapter class registered as ``name``."""
    try:
        module, _, cls = ADAPTERS[name].partition(":")
    except KeyError:
        raise ValueError(f"unknown adapter {name!r}; choose one of {sorted(ADAPTERS)}") from None
    return getattr(importlib.import_module(module), cls)


__all__ = ["ADAPTERS", "Adapter", "FrameSource", "Scored", "adapter_class"]
