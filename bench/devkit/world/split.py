"""The training split: scenes of every story kind, drawn from generators the sample suite never uses, with every
claim each scene offers (its true caption, its foils and their foil type), and pairs of counterfactual scenes.

Not written in any benchmark's format: the videos are encoded as the suite's are (so that training decodes them
exactly as scoring does) and listed in ``split.json``; :func:`training_split` writes them on first use and reads
them back afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.devkit.world import draw
from bench.devkit.world.draw import rng_for
from bench.devkit.world.files import TRAINING_PARITY, video, worker_context

VERSION = "7"  # bump whenever the split's scenes or claims change
INDEX = "split.json"


@dataclass(frozen=True)
class Example:
    """A video (path relative to the split's folder) and one claim about it: ``texts[0]`` is true, the others are
    its foils, changing what ``foil_type`` names; ``kind`` is "<story kind>/<claim kind>"; ``reverses``: the video
    played backwards makes ``texts[1]`` true and ``texts[0]`` false."""

    video: str
    texts: tuple[str, ...]
    foil_type: str
    kind: str
    reverses: bool = False


@dataclass(frozen=True)
class Pair:
    """Two videos whose captions are each other's foils (``captions[i]`` is true of ``videos[i]`` only)."""

    videos: tuple[str, str]
    captions: tuple[str, str]
    foil_type: str
    kind: str


@dataclass
class Split:
    """The training split: its folder, claims about single videos, and counterfactual pairs."""

    root: Path
    examples: list[Example]
    pairs: list[Pair]

    def path(self, relative: str) -> str:
        """The absolute path of one of the split's videos."""
        return str(self.root / relative)


def _key(seed: int, videos_per_kind: int, pairs: int) -> dict:
    return {"version": VERSION, "seed": seed, "videos_per_kind": videos_per_kind, "pairs": pairs}


def _story(root: Path, seed: int, kind: str, i: int) -> list[Example]:
    """Scene ``i`` of story ``kind``, written as a video under ``root``, and its claims."""
    story = draw.KINDS[kind](rng_for("train", seed, kind, i))
    name = f"videos/{kind}-{i:04d}.mp4"
    video(root, name, story.scene, parity=TRAINING_PARITY)
    return [Example(name, (claim.true, *claim.false), claim.foil_type, f"{kind}/{claim_kind}", claim.reverses)
            for claim_kind, claim in story.claims.items() if claim.false]


def _pair(root: Path, seed: int, i: int) -> Pair:
    """Counterfactual pair ``i``, its two videos written under ``root``."""
    kind = draw.PAIRS[i % len(draw.PAIRS)]
    first, second, claim_kind = draw.pair(rng_for("train", seed, "pair", i), kind)
    names = (f"pairs/{i:04d}_pos.mp4", f"pairs/{i:04d}_neg.mp4")
    video(root, names[0], first.scene, parity=TRAINING_PARITY)
    video(root, names[1], second.scene, parity=TRAINING_PARITY)
    return Pair(names, (first.true(claim_kind), second.true(claim_kind)), first.claims[claim_kind].foil_type, kind)


def _generate(root: Path, seed: int, videos_per_kind: int, pairs: int,
              workers: int = 1) -> tuple[list[Example], list[Pair]]:
    """Every scene and pair of the split written under ``root`` (by ``workers`` processes: each video is drawn from
    its own generator, so the same bytes), with their claims in order."""
    root.mkdir(parents=True)
    stories = [(kind, i) for kind in draw.KINDS for i in range(videos_per_kind)]
    with contextlib.ExitStack() as stack:
        run = map
        if workers > 1:
            pool = stack.enter_context(ProcessPoolExecutor(workers, mp_context=worker_context()))
            run = functools.partial(pool.map, chunksize=8)
        examples = [e for found in run(functools.partial(_story, root, seed), *zip(*stories)) for e in found]
        couples = list(run(functools.partial(_pair, root, seed), range(pairs)))
    return examples, couples


def training_split(folder: str | Path, videos_per_kind: int = 120, pairs: int = 120, seed: int = 0,
                   workers: int = 1) -> Split:
    """The training split in ``folder``: ``videos_per_kind`` scenes of each story kind of :data:`draw.KINDS` with
    all their claims, and ``pairs`` counterfactual pairs (generated first, atomically, by ``workers`` processes, when
    absent or made with other settings; a process asking while another generates it waits for that one's). Its
    generators are keyed ``("train", seed, ...)``, the suite's never, and its scenes are drawn at odd columns, the
    suite's at even ones (:func:`bench.devkit.world.files.placed`): no training video is a suite video."""
    root = Path(folder)
    key = _key(seed, videos_per_kind, pairs)
    index = root / INDEX
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.with_name(root.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits here, then finds the first's split current
        if not (index.is_file() and json.loads(index.read_text())["key"] == key):
            tmp = Path(tempfile.mkdtemp(prefix=".split-", dir=root.parent))
            try:
                examples, couples = _generate(tmp / "split", seed, videos_per_kind, pairs, workers)
                data = {"key": key, "examples": [asdict(e) for e in examples], "pairs": [asdict(p) for p in couples]}
                (tmp / "split" / INDEX).write_text(json.dumps(data, indent=0) + "\n")
                if root.exists():
                    os.replace(root, tmp / "outdated")
                os.replace(tmp / "split", root)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    data = json.loads(index.read_text())
    return Split(root, [Example(e["video"], tuple(e["texts"]), e["foil_type"], e["kind"], e["reverses"])
                        for e in data["examples"]],
                 [Pair(tuple(p["videos"]), tuple(p["captions"]), p["foil_type"], p["kind"]) for p in data["pairs"]])
