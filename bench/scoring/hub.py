"""Where a model comes from: a local folder, a hub id in the local cache, or a hub id to download; decided before
anything loads, so that a mistyped path or an unreachable hub is one clear line at once, not minutes of retries."""

from __future__ import annotations

import os
import socket
from pathlib import Path

HUB_HOST = ("huggingface.co", 443)
PROBE_SECONDS = 3.0


def _looks_like_path(model: str) -> bool:
    """A reference written as a path (not ``org/name``): it starts with ``.``, ``/`` or ``~``, or has more than one
    ``/``, or uses the platform's own separator."""
    return model.startswith((".", "/", "~")) or model.count("/") > 1 or (os.sep != "/" and os.sep in model)


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_reachable(host: tuple[str, int] = HUB_HOST, timeout: float = PROBE_SECONDS) -> bool:
    """Whether a TCP connection to the hub opens within ``timeout`` seconds."""
    try:
        with socket.create_connection(host, timeout=timeout):
            return True
    except OSError:
        return False


def cached_snapshot(model: str) -> str | None:
    """The local folder of a hub model already downloaded (its latest cached snapshot), or None."""
    from huggingface_hub import snapshot_download

    try:
        return snapshot_download(model, local_files_only=True)
    except Exception:  # noqa: BLE001 - any failure means "not usable from the cache"
        return None


def _not_a_model(folder: Path) -> str:
    """Why ``folder`` (with no config.json) is not a model: a folder of models names some of them."""
    inside = sorted(p.name for p in folder.iterdir() if (p / "config.json").is_file())
    if inside:
        shown = ", ".join(inside[:5]) + (f" and {len(inside) - 5} more" if len(inside) > 5 else "")
        return (f"{folder} is a folder of models ({shown}), not a model: pass one of them, e.g. --model "
                f"{folder / inside[0]}")
    return f"{folder} has no config.json: it is not a model folder (a local model is a folder with config.json)"


def locate(model: str) -> str:
    """What to load ``model`` from: a local folder as is; a hub id from the local cache when the hub is unreachable
    or ``HF_HUB_OFFLINE`` is set; a hub id to download otherwise. A one-line error for a folder that does not exist
    and for a model that can be neither downloaded nor found in the cache."""
    folder = Path(model).expanduser()
    if folder.is_dir():
        if not (folder / "config.json").is_file():
            raise ValueError(_not_a_model(folder))
        return str(folder)
    if _looks_like_path(model) or folder.exists():
        raise ValueError(f"no model folder at {model!r} (a local model is a folder with config.json; a hub id looks "
                         "like org/name)")
    if _offline():
        found = cached_snapshot(model)
        if found is None:
            raise ValueError(f"HF_HUB_OFFLINE is set and {model!r} is not in the local Hugging Face cache; download "
                             "it first or give a local folder")
        return found
    if hub_reachable():
        return model
    found = cached_snapshot(model)
    if found is None:
        raise ValueError(f"cannot reach huggingface.co to download {model!r} and it is not in the local cache; give "
                         "a local folder with the model, or connect to the network")
    return found
