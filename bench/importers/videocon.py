"""VideoCon's released score CSVs (no header: ``videopath, caption, entailment, pos, neg``; the last two columns are
ignored, as the repository says), matched to items by video and description."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from bench.items import Item
from bench.loaders.common import LoaderError
from bench.loaders.videocon import PROMPT_DESCRIPTION


def import_videocon(items: Sequence[Item], files: Sequence[Path], **_: object) -> tuple[list, list, str]:
    """VideoCon score CSVs (no header) -> entailment pair rows, matched by video and description."""
    targets: dict[tuple[str, str], list[tuple[str, int, int]]] = {}
    for it in items:
        for c, clip in enumerate(it.clips):
            video = "/".join(Path(clip.path).parts[-2:])
            for t, text in enumerate(it.texts):
                targets.setdefault((video, text), []).append((it.item_id, c, t))
    pair = []
    for path in files:
        with path.open(encoding="utf-8", newline="") as fh:
            for n, row in enumerate(csv.reader(fh), start=1):
                if len(row) < 3:
                    raise LoaderError(path, f"row {n}",
                                      f"expected videopath, caption, entailment[, pos, neg], got {row!r}")
                videopath, caption, value = row[:3]
                match = PROMPT_DESCRIPTION.search(caption)
                key = ("/".join(Path(videopath).parts[-2:]), match["text"] if match else caption)
                if not targets.get(key):
                    raise LoaderError(path, f"row {n}", f"no item has video {key[0]!r} with text {key[1]!r}")
                item_id, clip, text = targets[key].pop(0)
                pair.append({"item_id": item_id, "clip": clip, "text": text, "score": float(value)})
    return pair, [], "p_yes"
