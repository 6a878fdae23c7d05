"""Warm models: backends loaded once per process (a notebook's kernel), lazily, kept for the next probe, and the
memory check that names a model too big for the machine instead of loading it.

A model's need is estimated before it loads from its weight files: the parameter count read from the safetensors
headers, times the bytes of the dtype it will be loaded in (other weight files: their size on disk). What is free is
the host's available memory (CPU) or the device's free memory (CUDA). When a model does not fit, the least recently
used warm models are let go first; one that does not fit even then is refused with its need and what is free.
"""

from __future__ import annotations

import gc
import json
import math
import struct
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

GIB = 1024**3
HEADROOM = 1.2  # activations, processor and allocator slack over the weights themselves
DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1,
               "F8_E4M3": 1, "F8_E5M2": 1}


class TooBig(ValueError):
    """A model that does not fit in the memory free for it (not loaded)."""


def _safetensors_params(path: Path) -> tuple[int, int]:
    """(parameters, bytes on disk) of one safetensors file, from its header alone."""
    with open(path, "rb") as f:
        (length,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(length))
    params = stored = 0
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        count = math.prod(entry["shape"])
        params += count
        stored += count * DTYPE_BYTES.get(entry["dtype"], 4)
    return params, stored


def weight_bytes(folder: str | Path, element_bytes: int | None) -> int | None:
    """The memory the weights in ``folder`` take once loaded with ``element_bytes`` per parameter (None: as stored);
    None when the folder holds no weight file (a hub id not downloaded yet: not known)."""
    root = Path(folder)
    if not root.is_dir():
        return None
    total, found = 0, False
    for path in sorted(root.iterdir()):
        if path.suffix == ".safetensors":
            params, stored = _safetensors_params(path)
            total += params * element_bytes if element_bytes else stored
            found = True
        elif path.suffix in (".bin", ".pt", ".pth") or path.name.endswith(".gguf"):
            total += path.stat().st_size
            found = True
    return total if found else None


def free_bytes(device: str) -> int:
    """Memory free for a model on ``device``: the device's free memory on CUDA, else the host's available memory."""
    if device.startswith("cuda"):
        import torch

        return int(torch.cuda.mem_get_info(torch.device(device))[0])
    import psutil

    return int(psutil.virtual_memory().available)


def need_bytes(folder, dtype: str, device: str) -> int | None:
    """The estimated memory ``folder``'s model needs on ``device`` in ``dtype`` (None: not known, or a model passed
    as an object rather than a folder)."""
    if not isinstance(folder, (str, Path)):
        return None
    import torch

    from bench.scoring.backends.base import torch_dtype

    element = torch.empty((), dtype=torch_dtype(dtype, device)).element_size()
    found = weight_bytes(folder, element)
    return None if found is None else int(found * HEADROOM)


@dataclass
class Warm:
    """A loaded model: its backend, family, device and estimated memory."""

    backend: Any
    family: str
    device: str
    need: int


class WarmModels:
    """Backends by (model, family, device, dtype, options), loaded on first use and kept; the least recently used
    are let go when the next does not fit (so models load one at a time when memory is short)."""

    def __init__(self) -> None:
        self._warm: OrderedDict[tuple, Warm] = OrderedDict()

    def __len__(self) -> int:
        return len(self._warm)

    def __contains__(self, key: tuple) -> bool:
        return key in self._warm

    @staticmethod
    def key(model: str, family: str, device: str, dtype: str, options: Mapping[str, Any]) -> tuple:
        """The cache key of a model as loaded."""
        return (model, family, device, dtype, tuple(sorted((k, json.dumps(v)) for k, v in options.items())))

    def held(self, device: str) -> int:
        """Estimated memory the warm models hold on ``device``'s kind (host or CUDA)."""
        return sum(w.need for w in self._warm.values() if w.device.startswith("cuda") == device.startswith("cuda"))

    def too_big(self, model: str, dtype: str, device: str) -> str | None:
        """Why ``model`` cannot be loaded on ``device`` even with every warm model let go, or None when it can (or
        its need is not known)."""
        need = need_bytes(model, dtype, device)
        free = free_bytes(device) + self.held(device)
        if need is None or need <= free:
            return None
        return (f"{Path(model).name} needs about {need / GIB:.1f} GiB on {device}, {free / GIB:.1f} GiB free: "
                "not loaded")

    def get(self, model: str, family: str, device: str, dtype: str = "auto",
            options: Mapping[str, Any] | None = None) -> Warm:
        """The warm model, loaded first when cold (letting the least recently used others go while it does not
        fit); :class:`TooBig` when it cannot fit."""
        from bench.scoring.families import load_backend

        options = dict(options or {})
        key = self.key(model, family, device, dtype, options)
        if key in self._warm:
            self._warm.move_to_end(key)
            return self._warm[key]
        need = need_bytes(model, dtype, device)
        problem = self.too_big(model, dtype, device)
        if problem:
            raise TooBig(problem)
        while self._warm and need is not None and need > free_bytes(device):
            self._release(next(iter(self._warm)))
        backend = load_backend(family, model, device=device, dtype=dtype, **options)
        self._warm[key] = Warm(backend, family, device, need or 0)
        return self._warm[key]

    def _release(self, key: tuple) -> None:
        gone = self._warm.pop(key)
        del gone
        gc.collect()
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def clear(self) -> None:
        """Let every warm model go."""
        while self._warm:
            self._release(next(iter(self._warm)))


MODELS = WarmModels()
"""The process's warm models (one per kernel), shared by ``foilbench probe`` and the pair viewer."""
