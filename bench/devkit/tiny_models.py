"""Every tiny model by name, built on first use into a folder and loaded back by path as a hub id is: one per
architecture of the table (:data:`bench.scoring.architectures.ARCHITECTURES`), from :mod:`bench.devkit.tiny` (CLIP,
X-CLIP, GPT-2, Qwen2-VL, LLaVA-OneVision, Video-LLaVA), :mod:`bench.devkit.tiny_videollm` (the other Video-LLMs) and
:mod:`bench.devkit.tiny_encoders` (the other encoders); and the variants of some of them made constant on purpose
(:data:`bench.devkit.tiny.VARIANTS`)."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from bench.devkit import tiny, tiny_encoders, tiny_videollm

BUILDERS: dict[str, Callable[[str | Path], Path]] = {**tiny.BUILDERS, **tiny_videollm.BUILDERS,
                                                     **tiny_encoders.BUILDERS}
# The tiny models built under another name than their model type.
NAMES = {"qwen2_vl": "qwen2vl"}


def tiny_architectures() -> dict[str, str]:
    """The model type of every tiny model -> its name (one tiny model per architecture)."""
    by_name = {name: model_type for model_type, name in NAMES.items()}
    return {by_name.get(name, name): name for name in BUILDERS}


def tiny_model(name: str, root: str | Path) -> Path:
    """The tiny model ``name`` (or of the model type ``name``, or a variant of :data:`bench.devkit.tiny.VARIANTS`)
    under ``root`` (built on first use)."""
    name = NAMES.get(name, name)
    folder = Path(root) / name
    if not (folder / "config.json").is_file():
        {**BUILDERS, **tiny.VARIANTS}[name](folder)
    return folder
