"""VITATECS (Li et al., ECCV 2024): the six aspect JSONL files of ``lscpku/VITATECS`` ``data/``.

Each line is ``{src_dataset, video_name, caption, counterfactual, aspect}``; items are ids ``"<Aspect>/<line>"``.
Videos are ``<video_root>/<src_dataset>/<video_name>``. VATEX names encode the clip's place in its YouTube video as
``<11-char id>_<start 6 digits>_<end 6 digits>.mp4``: kept as labels (the file itself is the clip). A line that
repeats an earlier line exactly (27 do in ``data/``) is kept as released, as the official evaluation counts it, and
listed in the notes.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.items import Clip, Item, ItemSet
from bench.loaders.common import LoaderError, Repeats, VideoRoot, files_in, read_jsonl, require_text
from bench.loaders.options import loader

BENCHMARK = "vitatecs"
ASPECTS = ("Direction", "Intensity", "Sequence", "Localization", "Compositionality", "Type")
SOURCES = ("MSRVTT", "VATEX")
FIELDS = ("src_dataset", "video_name", "caption", "counterfactual", "aspect")
VATEX_NAME = re.compile(r"^(?P<ytid>.{11})_(?P<start>\d{6})_(?P<end>\d{6})\.mp4$")


def _load_file(path: Path, roots: VideoRoot, seen: set[str], repeats: Repeats) -> list[Item]:
    items = []
    for line, record in read_jsonl(path):
        where = f"line {line}"
        values = {key: require_text(record, key, path, where) for key in FIELDS}
        extra = sorted(set(record) - set(FIELDS))
        if extra:
            raise LoaderError(path, where, f"unexpected field(s) {extra}; expected exactly {list(FIELDS)}")
        aspect, source = values["aspect"], values["src_dataset"]
        if aspect not in ASPECTS:
            raise LoaderError(path, where, f"unknown aspect {aspect!r}; expected one of {list(ASPECTS)}")
        if source not in SOURCES:
            raise LoaderError(path, where, f"unknown src_dataset {source!r}; expected one of {list(SOURCES)}")
        labels = {"source": source, "video_name": values["video_name"], "yt_id": None, "yt_start": None,
                  "yt_end": None}
        if source == "VATEX":
            match = VATEX_NAME.match(values["video_name"])
            if not match:
                raise LoaderError(path, where, f"VATEX video name {values['video_name']!r} is not "
                                               "<youtube id>_<start6>_<end6>.mp4")
            labels.update(yt_id=match["ytid"], yt_start=int(match["start"]), yt_end=int(match["end"]))
        item_id = f"{aspect}/{line}"
        if item_id in seen:
            raise LoaderError(path, where, f"duplicate item id {item_id!r} (two files for aspect {aspect}?)")
        seen.add(item_id)
        repeats.add(tuple(values.values()), f"{path.name} {where}")
        video, exists = roots.resolve(f"{source}/{values['video_name']}", path, where, "video_name")
        items.append(Item(BENCHMARK, item_id, aspect, (Clip(video, exists=exists),),
                          (values["caption"], values["counterfactual"]), ((0,),), labels))
    return items


@loader
def load(path: str | Path, video_root: str | Path | None = None, *, allow_outside_root: bool = False) -> ItemSet:
    """Load VITATECS from one aspect file or a folder of them (every ``*.jsonl``).

    ``allow_outside_root`` accepts video names that leave the video root (absolute, ``..``).
    """
    path = Path(path)
    roots = VideoRoot(video_root, allow_outside_root)
    items: list[Item] = []
    seen: set[str] = set()
    repeats = Repeats()
    for file in files_in(path, (".jsonl",), "VITATECS"):
        items += _load_file(file, roots, seen, repeats)
    return ItemSet(BENCHMARK, str(path), items, repeats.notes())
