"""The world's trained models, built on first use: ``trained_model(name)`` is the folder of a model trained on the
world's training split, saved with ``save_pretrained`` (model and processor), which the scoring backends load by
path exactly as they load a user's checkpoint.

A build is cached in ``<data home>/models/<name>`` with a stamp (:data:`VERSION`, seed, scale) and rebuilt when the
stamp differs; it is written into a temporary folder renamed into place, under a lock, so a second process waits
for the first and uses its result. Every build is seeded, runs in a child process whose kernels are pinned
(:mod:`bench.devkit.train.pinned`, recorded in the stamp with the build's duration) and runs torch on
:data:`THREADS` threads whatever the machine's core count: the same seed gives the same weights on a machine, idle
or busy, and was meant to on any x86-64 CPU with AVX2 (an AMD EPYC drew other models than an Intel Xeon at build
18: :mod:`bench.devkit.train.crosscheck`). :data:`REFERENCE` holds the fingerprints of the models the README's lessons
were measured with. Models built together share one child, so the training split is decoded once. Each model
is first saved untrained and loaded back through its scoring backend, whose processor (with the backend's fixed
settings) and frame size then prepare the training frames: training sees exactly what scoring sees.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import torch

from bench.devkit.threads import torch_threads
from bench.devkit.train import contrastive, pinned, videollm
from bench.devkit.train.data import Decoded, decode
from bench.devkit.train.models import (build_clip, build_qwen2vl, build_xclip, clip_tokenizer, qwen_tokenizer,
                                       start_from)
from bench.devkit.train.patches import patches_as_products
from bench.devkit.train.teacher import Teacher
from bench.devkit.world.split import Split, training_split
from bench.paths import data_home

VERSION = "22"  # bump whenever a model's architecture, data or recipe changes
STAMP = "BUILD_STAMP"
REFERENCE = Path(__file__).with_name("reference.json")  # the README's models' fingerprints (bench.devkit.lessons)
# the README's seed: of seeds 0-2 at builds 19-21 the one whose Qwen2-VL met issue 32's A/B aims on the
# benchmarks' items on the AMD EPYC (docs/world-design.md, "The default seed"); the README's table gives all three
DEFAULT_SEED = 2
FRAMES = 8  # frames per clip: the runner's default frame policy, and X-CLIP's num_frames
THREADS = pinned.THREADS  # torch's intra-op threads while building: how sums are split, so the weights, depend on it
LEAN = 0.25  # the biased copy's lean to "Yes" and "A", in match shares (videollm.lean)
XCLIP_STEPS = 1600  # past the trained CLIP's fixed tower: a step costs a fifth of one through the tower


@dataclass(frozen=True)
class Scale:
    """How big a build is: the training split's size and the share of each recipe's steps (tests build tiny)."""

    videos_per_kind: int = 120
    pairs: int = 120
    steps: float = 1.0


FULL = Scale()


def shrunk(share: float) -> Scale:
    """The full build at ``share`` of its training split and steps (1: :data:`FULL`; a quick build for checks)."""
    if not 0 < share <= 1:
        raise ValueError(f"a build's scale is a share in (0, 1], got {share}")
    return FULL if share == 1 else Scale(max(2, round(FULL.videos_per_kind * share)), max(4, round(FULL.pairs * share)),
                                         share)


@dataclass(frozen=True)
class Spec:
    """A trained model: its scoring family, the protocols it is meant for, its training recipe at full scale, the
    model it continues from (None: from scratch), a one-line summary, the trained model that teaches it (None: none)
    and the trained model whose weights of the same name and shape it starts from (None: none)."""

    family: str
    protocols: tuple[str, ...]
    recipe: contrastive.Recipe | videollm.Recipe
    base: str | None
    summary: str
    teacher: str | None = None
    start: str | None = None


MODELS: dict[str, Spec] = {
    "clip-world": Spec("contrastive", ("similarity",), contrastive.Recipe(300, batch=24), None,
                       "CLIP, frame embeddings averaged: blind to the order of frames"),
    "xclip-world": Spec("xclip", ("similarity",),
                        contrastive.Recipe(XCLIP_STEPS, batch=24, reversing=1.0, timed_draws=2), None,
                        "X-CLIP, the CLIP's frame encoder kept fixed and a temporal transformer with frame positions trained to "
                        "pool it: sees order",
                        start="clip-world"),
    "qwen2vl-world": Spec("videollm", ("entail", "mc"), videollm.Recipe(600, tower_steps=300), None,
                          "Qwen2-VL answering Yes/No and A/B about the world's videos: its tower and text layers "
                          "fitted to X-CLIP's embeddings, the layers that match and choose set in closed form",
                          teacher="xclip-world"),
    "qwen2vl-world-biased": Spec("videollm", ("entail", "mc"), videollm.Recipe(0, lean=LEAN), "qwen2vl-world",
                                 "qwen2vl-world with its head leaning to Yes / A"),
}


def models_home(home: str | Path | None = None) -> Path:
    """Where trained models live: ``<home>/models`` (default home: :func:`bench.paths.data_home`)."""
    return Path(home).expanduser().resolve() / "models" if home is not None else data_home() / "models"


def trained_model(name: str, home: str | Path | None = None, *, seed: int = DEFAULT_SEED, scale: Scale = FULL,
                  progress: bool = True) -> Path:
    """The folder of the trained model ``name`` (one of :data:`MODELS`), built first when absent or built with
    another :data:`VERSION`, ``seed`` or ``scale``. Load it by path like any checkpoint (family:
    ``MODELS[name].family``)."""
    return trained_models([name], home, seed=seed, scale=scale, progress=progress)[name]


def trained_models(names: list[str], home: str | Path | None = None, *, seed: int = DEFAULT_SEED,
                   scale: Scale = FULL, progress: bool = True) -> dict[str, Path]:
    """:func:`trained_model` of each of ``names``; those to build (with the models they need) are built together in
    one pinned child process."""
    _known(names)
    root = models_home(home)
    if pinned.inside():
        return {name: _ensure(name, root, seed, scale, progress) for name in names}
    building = Background(names, home, seed=seed, scale=scale, progress=progress)
    try:
        building.wait()
    finally:
        building.close()
    left = _stale(needed(names), root, seed, scale)
    if left:
        raise RuntimeError(f"the build left {', '.join(left)} out of date in {root}")
    return {name: root / name for name in names}


def _known(names: list[str]) -> None:
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        raise ValueError(f"unknown trained model {unknown[0]!r}; choose one of {', '.join(MODELS)}")


def _stale(names: list[str], root: Path, seed: int, scale: Scale) -> list[str]:
    """Those of ``names`` not built in ``root`` with this :data:`VERSION`, ``seed`` and ``scale``."""
    return [n for n in names if not _current(root / n, _stamp(n, seed, scale))]


class Background:
    """The models ``names`` (with the models they need) built in a pinned child process while this one goes on (the
    demo scores each model's set-ups as soon as that model is built; :func:`trained_models` waits for it). Nothing is
    started when all are current. The child's output (its progress bars with ``progress``) goes to ``log``, else to
    this process's; ``ended()`` is called when the child ends."""

    def __init__(self, names: list[str], home: str | Path | None = None, *, seed: int = DEFAULT_SEED,
                 scale: Scale = FULL, log: Path | None = None, progress: bool = False, poll: float = 0.25,
                 ended: Callable[[], object] = lambda: None):
        _known(names)
        self.root, self.seed, self.scale, self.log, self.poll = models_home(home), seed, scale, log, poll
        self.ended = ended  # called (on a thread of its own) when the child ends
        self.started = time.perf_counter()
        self.finished: float | None = None
        self.todo = _stale(needed(names), self.root, seed, scale)
        self.child = pinned.start(list(names), self.root.parent, seed, asdict(scale), progress, log) if self.todo \
            else None
        self._watch = threading.Thread(target=self._ended, daemon=True)
        if self.child is not None:
            self._watch.start()

    def _ended(self) -> None:
        self.child.wait()
        self.finished = time.perf_counter() - self.started
        self.ended()

    def ready(self, name: str) -> Path:
        """The folder of ``name`` once it is built (waiting for the child as long as it builds it); a one-line
        ``RuntimeError`` when the child ends without it."""
        while _stale([name], self.root, self.seed, self.scale):
            if self.child is None or self.finished is not None:
                self.wait()
                if _stale([name], self.root, self.seed, self.scale):
                    raise RuntimeError(f"the build left {name} out of date in {self.root}")
            else:
                time.sleep(self.poll)
        return self.root / name

    def wait(self) -> float:
        """Wait for the child to end; the seconds from its start to its end (0 when nothing was built). A failed
        build is a one-line ``RuntimeError``."""
        if self.child is None:
            return 0.0
        self._watch.join()
        code = self.child.returncode
        if code != 0:
            where = f"its messages are in {self.log}" if self.log else "its error is printed above"
            raise RuntimeError(f"building {', '.join(self.todo)} failed (exit {code}; {where})")
        return self.finished

    def close(self) -> None:
        """Stop the child if it is still building (what it built is kept; what it was building is dropped)."""
        if self.child is not None and self.finished is None:
            self.child.terminate()  # the child stops as on Ctrl-C and removes its half-built folder (child.py)
            self._watch.join(timeout=30)
            if self._watch.is_alive():
                self.child.kill()
                self._watch.join()


def needed(names: list[str]) -> list[str]:
    """``names`` and every model they continue from, learn from or start from, each after the models it needs."""
    order: list[str] = []
    for name in names:
        spec = MODELS[name]
        for before in needed([n for n in (spec.base, spec.teacher, spec.start) if n]) + [name]:
            if before not in order:
                order.append(before)
    return order


def is_current(name: str, home: str | Path | None = None, *, seed: int = DEFAULT_SEED, scale: Scale = FULL) -> bool:
    """Whether ``name`` is built in ``home`` with this :data:`VERSION`, ``seed`` and ``scale``."""
    return _current(models_home(home) / name, _stamp(name, seed, scale))


def build_seconds(name: str, home: str | Path | None = None) -> float | None:
    """How long the last build of ``name`` in ``home`` took (its stamp's record, current or not; None: never built)."""
    path = models_home(home) / name / STAMP
    return json.loads(path.read_text()).get("built", {}).get("seconds") if path.is_file() else None


def fingerprint(folder: Path) -> str:
    """The SHA-256 of a built model's weights (``model.safetensors`` in ``folder``)."""
    return hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()


def reference() -> dict[str, str]:
    """The fingerprints of the default seed's full build that the README's lessons were measured with, for this
    :data:`VERSION` (empty when the file is absent or records another version)."""
    if not REFERENCE.is_file():
        return {}
    found = json.loads(REFERENCE.read_text())
    return found["models"] if found.get("version") == VERSION else {}


def write_reference(names: list[str], home: str | Path | None = None) -> Path:
    """Record the fingerprints of ``names`` as built in ``home`` (the default seed, full scale) in :data:`REFERENCE`."""
    models = {name: fingerprint(models_home(home) / name) for name in names}
    REFERENCE.write_text(json.dumps({"version": VERSION, "seed": DEFAULT_SEED, "models": models}, indent=1,
                                    sort_keys=True) + "\n")
    return REFERENCE


def _stamp(name: str, seed: int, scale: Scale) -> dict:
    return {"version": VERSION, "name": name, "seed": seed, "scale": asdict(scale)}


def _ensure(name: str, root: Path, seed: int, scale: Scale, progress: bool) -> Path:
    """Build ``name`` in this process unless current (the models it needs first)."""
    spec = MODELS[name]
    base, teacher, start = (_ensure(n, root, seed, scale, progress) if n else None
                            for n in (spec.base, spec.teacher, spec.start))
    root.mkdir(parents=True, exist_ok=True)
    target = root / name
    stamp = _stamp(name, seed, scale)
    with open(root / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second process waits here, then finds the first's build current
        if _current(target, stamp):
            return target
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            began = time.perf_counter()
            fit = _build(spec, tmp / "model", base, teacher, start, root, seed, scale, progress, name)
            built = {**pinned.built_with(), "seconds": round(time.perf_counter() - began, 1),
                     **({"fit": {k: round(v, 4) for k, v in fit.items()}} if fit else {})}
            (tmp / "model" / STAMP).write_text(json.dumps({**stamp, "built": built}, sort_keys=True) + "\n")
            if target.exists():
                os.replace(target, tmp / "outdated")
            os.replace(tmp / "model", target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            pinned.release_memory()  # what this build held, before the next one builds
    return target


def _current(target: Path, stamp: dict) -> bool:
    path = target / STAMP
    if not path.is_file():
        return False
    found = json.loads(path.read_text())
    found.pop("built", None)  # how it was built (kernels, duration): a record, not part of what was asked
    return found == stamp


def split_of(home: str | Path | None = None, *, seed: int = DEFAULT_SEED, scale: Scale = FULL) -> Split:
    """The training split the models of ``home`` are built on (:func:`_split`; the demo writes it on every core
    before its build child needs it, and the child waits for it meanwhile)."""
    return _split(models_home(home), seed, scale)


def _split(root: Path, seed: int, scale: Scale) -> Split:
    """The training split in the models folder ``root``, generated first when absent by one process per core (at most
    4; a process asking for it meanwhile waits for it)."""
    return training_split(root / ".split", scale.videos_per_kind, scale.pairs, seed, min(4, os.cpu_count() or 1))


_DECODED: dict[tuple, Decoded] = {}


def training_data(root: Path, scale: Scale, seed: int, fit, progress: bool = True) -> Decoded:
    """The training split under ``root`` decoded to the frame size ``fit`` (a backend's
    :meth:`~bench.scoring.backends.base.Backend.frame_fit`), once per process."""
    split = _split(root, seed, scale)
    key = (str(split.root), scale, seed, fit)
    if key not in _DECODED:
        with _bar(progress, len(_clips(split)), "decoding the training split", "clip") as bar:
            _DECODED[key] = decode(split, size=fit, tick=bar.update)
    return _DECODED[key]


def _clips(split: Split) -> set:
    return {e.video for e in split.examples} | {v for p in split.pairs for v in p.videos}


def _bar(progress: bool, total: int, what: str, unit: str):
    from bench.scoring.console import progress_bar

    return progress_bar(total=total, desc=what, unit=unit, disable=not progress, leave=False, dynamic_ncols=True)


def cpu_backend(family: str, folder: Path):
    """The scoring backend of ``family`` for the checkpoint in ``folder``, on the CPU in float32 (as training runs)."""
    from bench.scoring.families import load_backend

    return load_backend(family, str(folder), device="cpu", dtype="float32")


def _build(spec: Spec, out: Path, base: Path | None, teacher: Path | None, start: Path | None, root: Path, seed: int,
           scale: Scale, progress: bool, name: str) -> dict[str, float] | None:
    """Build ``name`` into ``out``; what its training measured (None: nothing)."""
    torch.manual_seed(seed)
    if base is not None:
        shutil.copytree(base, out)
        (out / STAMP).unlink()
    elif spec.family == "videollm":
        split = _split(root, seed, scale)
        _save(*build_qwen2vl(qwen_tokenizer(videollm.corpus(split)), FRAMES), out)
    else:
        tokenizer = clip_tokenizer(out / ".vocab")
        model, processor = build_clip(tokenizer) if spec.family == "contrastive" else build_xclip(tokenizer, FRAMES)
        if start is not None:
            start_from(model, start)
        _save(model, processor, out)
        shutil.rmtree(out / ".vocab")
    backend = cpu_backend(spec.family, out)
    data = training_data(root, scale, seed, backend.frame_fit(), progress)
    recipe = spec.recipe.scaled(scale.steps)
    with torch_threads(THREADS):
        taught = teacher_view(MODELS[spec.teacher], teacher, root, scale, seed, data, progress) if teacher else None
        pinned.release_memory()  # the teacher's inputs, before training holds its own
        with _bar(progress, recipe.total_steps, f"training {name}", "step") as bar, \
                patches_as_products(backend.model):
            fit = _TRAIN[spec.family](backend, data, recipe, seed, bar.update, taught)
    _save(backend.model, backend.processor, out)
    return fit


def teacher_view(spec: Spec, folder: Path, root: Path, scale: Scale, seed: int, data: Decoded, progress: bool):
    """The trained ``folder`` (a contrastive model) as a teacher of ``data``'s clips, seen as its backend sees them."""
    backend = cpu_backend(spec.family, folder)
    own = training_data(root, scale, seed, backend.frame_fit(), progress)
    if own.videos != data.videos:
        raise RuntimeError("the teacher's training split differs from the student's")
    return Teacher(backend.model, backend.processor, own.frames)


def _save(model, processor, out: Path) -> None:
    model.save_pretrained(out)
    processor.save_pretrained(out)


def _train_contrastive(backend, data: Decoded, recipe: contrastive.Recipe, seed: int, tick: Callable,
                       teacher: None = None) -> None:
    processor, model = backend.processor, backend.model
    if backend.__class__.__name__ == "XCLIPBackend":
        model.vision_model.requires_grad_(False)  # the CLIP's tower, fixed: its frame features are computed once
        pixels = contrastive.xclip_frame_features(model, contrastive.xclip_pixels(processor, data.frames))
        logits, tokens = contrastive.xclip_logits, contrastive.Tokens(processor.tokenizer)
    else:
        pixels, logits = contrastive.clip_pixels(processor, data.frames), contrastive.clip_logits
        tokens = contrastive.Tokens(processor.tokenizer, int(model.config.text_config.max_position_embeddings))
    contrastive.train(model, logits, pixels, tokens, data, recipe, seed, tick)


def _train_videollm(backend, data: Decoded, recipe: videollm.Recipe, seed: int, tick: Callable,
                    teacher: Teacher | None = None) -> dict[str, float]:
    return videollm.train(backend.model, backend.processor, data.frames, data, recipe, seed, tick, teacher)


_TRAIN: dict[str, Callable] = {"contrastive": _train_contrastive, "xclip": _train_contrastive,
                               "videollm": _train_videollm}
