"""Where two machines' builds part: a fingerprint of each stage a world model's build passes through, recorded per
machine, so that a CPU that draws other models than the README's says at which stage it first differs.

The stages, in the order a build meets them: the training split's files (the world's renderer and video encoders),
the split's clips decoded (the video decoders and their scalers), clips prepared by each built model's processor at
its frame size (in a pinned child, as a build prepares them), the kernels a build computes with (run in a pinned
child, as a build runs them: MKL's products, torch's vectorised functions, attention, an optimiser step) and the
default seed's models where they are built. Two machines whose earlier stages all agree and whose models differ
part in a kernel this list does not hold.

    python -m bench.devkit.train.crosscheck [--home DIR] [--record NAME]

prints this machine's fingerprints and, for each machine recorded in :data:`RECORDS` and for the README's models
(``reference.json``: their fingerprints only), which stages agree;
``--record NAME`` stores this machine's under ``NAME``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Callable

import numpy as np

from bench.devkit.train import pinned
from bench.devkit.train.build import (DEFAULT_SEED, FULL, MODELS, VERSION, fingerprint, is_current, models_home,
                                     reference)
from bench.devkit.world.split import Split, training_split

RECORDS = Path(__file__).with_name("crosscheck.json")  # {machine: record}
CLIPS = 24  # clips of the split decoded for the fingerprint of decoding
SIZES = (None, (224, 224), (112, 168))  # the videos' own size and two scaled (width, height): the scaler's paths
STAGES = ("split files", "decoded clips", "processed frames", "kernels", "models")  # in the order a build meets them


def digest(*parts: bytes) -> str:
    """The first 16 hex digits of the SHA-256 of ``parts`` in order."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:16]


def default_split(home: str | Path | None = None) -> Split:
    """The default seed's full training split in ``home`` (written first where absent), as builds use it."""
    return training_split(models_home(home) / ".split", FULL.videos_per_kind, FULL.pairs, DEFAULT_SEED)


def first_videos(split: Split, count: int) -> list[str]:
    """The split's first ``count`` single-clip videos by name (what the decoding and processing stages fingerprint)."""
    return sorted({e.video for e in split.examples})[:count]


def split_files(split: Split) -> str:
    """The fingerprint of the split's files: their names and bytes."""
    files = sorted(p for p in split.root.rglob("*") if p.is_file())
    return digest(*(part for p in files for part in (str(p.relative_to(split.root)).encode(), p.read_bytes())))


def decoded_clips(split: Split, clips: int = CLIPS) -> str:
    """The fingerprint of the first ``clips`` of the split's videos decoded as a build decodes them, at each of
    :data:`SIZES`."""
    from bench.devkit.train.data import FRAME_POLICY
    from bench.frames import sample_frames
    from bench.items import Clip

    return digest(*(np.ascontiguousarray(sample_frames(Clip(split.path(v)), FRAME_POLICY, size=size).array).tobytes()
                    for size in SIZES for v in first_videos(split, clips)))


def _kernels() -> dict[str, Callable]:
    import torch
    import torch.nn.functional as F

    from bench.devkit.train.patches import patch_product

    def rand(g, *shape):
        return torch.randn(*shape, generator=g)

    def attention(g):
        q, k, v = (rand(g, 2, 4, 50, 32).requires_grad_() for _ in range(3))
        out = F.scaled_dot_product_attention(q, k, v)
        out.square().sum().backward()
        return torch.cat([out.flatten(), q.grad.flatten(), k.grad.flatten(), v.grad.flatten()])

    def linear_backward(g):
        x, w = rand(g, 512, 256).requires_grad_(), rand(g, 128, 256).requires_grad_()
        F.gelu(F.linear(x, w)).sum().backward()
        return torch.cat([x.grad.flatten(), w.grad.flatten()])

    def cross_entropy(g):
        logits = rand(g, 64, 1000).requires_grad_()
        F.cross_entropy(logits, torch.randint(0, 1000, (64,), generator=g)).backward()
        return logits.grad

    def adamw(g):
        layer = torch.nn.Linear(64, 64)
        with torch.no_grad():
            for parameter in layer.parameters():
                parameter.copy_(rand(g, *parameter.shape) / 8)
        optimizer = torch.optim.AdamW(layer.parameters(), lr=1e-3, betas=(0.9, 0.98), weight_decay=0.05)
        x = rand(g, 256, 64)
        for _ in range(3):
            optimizer.zero_grad()
            layer(x).square().mean().backward()
            torch.nn.utils.clip_grad_norm_(layer.parameters(), 1.0)
            optimizer.step()
        return torch.cat([p.detach().flatten() for p in layer.parameters()])

    def patches(g):
        conv = torch.nn.Conv3d(3, 32, (2, 14, 14), (2, 14, 14))
        with torch.no_grad():
            for parameter in conv.parameters():
                parameter.copy_(rand(g, *parameter.shape))
            return patch_product(conv, rand(g, 2, 3, 2, 56, 56))

    return {
        "matrix product (MKL)": lambda g: rand(g, 5904, 64) @ rand(g, 64, 64),
        "batched matrix product (MKL)": lambda g: torch.bmm(rand(g, 16, 197, 64), rand(g, 16, 64, 197)),
        "softmax, log-softmax": lambda g: torch.cat([torch.softmax(x := rand(g, 64, 197), -1), x.log_softmax(-1)]),
        "layer norm": lambda g: F.layer_norm(rand(g, 512, 256), (256,)),
        "exp, log, tanh, sigmoid, sqrt": lambda g: torch.cat([f(rand(g, 4096).abs()) for f in (
            torch.exp, torch.log, torch.tanh, torch.sigmoid, torch.sqrt)]),
        "GELU, linear and their gradients": linear_backward,
        "attention and its gradients": attention,
        "cross-entropy gradient": cross_entropy,
        "AdamW steps, gradients clipped": adamw,
        "patch embedding as a product": patches,
    }


def kernels() -> dict[str, str]:
    """The fingerprint of each kernel's output on fixed inputs, computed in this process."""
    import torch

    out = {}
    for name, compute in _kernels().items():
        result = compute(torch.Generator().manual_seed(0))
        out[name] = digest(result.detach().contiguous().numpy().tobytes())
    return out


def processed(home: str | Path | None = None, clips: int = 8) -> dict[str, str]:
    """For each world model built in ``home`` (:func:`models`), the fingerprint of the split's first ``clips`` videos
    decoded at the model's frame size and prepared by its processor, as its build prepares them (in this process)."""
    from bench.devkit.train import contrastive, videollm
    from bench.devkit.train.build import cpu_backend
    from bench.devkit.train.data import decode

    split = default_split(home)
    first = set(first_videos(split, clips))
    some = Split(split.root, [e for e in split.examples if e.video in first], [])
    prepare = {"contrastive": contrastive.clip_pixels, "xclip": contrastive.xclip_pixels,
               "videollm": lambda processor, frames: [t for clip in videollm.video_inputs(processor, frames)
                                                      for _, t in sorted(clip.items())]}
    out = {}
    for name in models(home):
        backend = cpu_backend(MODELS[name].family, models_home(home) / name)
        prepared = prepare[MODELS[name].family](backend.processor, decode(some, size=backend.frame_fit()).frames)
        out[name] = digest(*(t.contiguous().numpy().tobytes() for t in (
            prepared if isinstance(prepared, list) else [prepared])))
    return out


def in_child(part: str, home: str | Path | None = None) -> dict[str, str]:
    """:func:`kernels` (``part`` "kernels") or :func:`processed` ("processed") as a pinned build child computes them."""
    command = [sys.executable, "-m", "bench.devkit.train.crosscheck", f"--{part}"]
    done = subprocess.run(command + (["--home", str(home)] if home is not None else []), env=pinned.environment(),
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"the pinned child's {part} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def models(home: str | Path | None = None) -> dict[str, str]:
    """The fingerprints of the default seed's full build of each world model built in ``home`` at this version."""
    return {name: fingerprint(models_home(home) / name) for name in MODELS if is_current(name, home)}


def cpu() -> str:
    """This CPU as /proc/cpuinfo names it, with its family and model numbers and whether it has AVX-512."""
    info = Path("/proc/cpuinfo")
    if not info.is_file():
        import platform

        return platform.processor() or platform.machine()
    fields = {}
    for line in info.read_text().splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    wide = "AVX-512" if "avx512f" in fields.get("flags", "").split() else "no AVX-512"
    return (f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')}, "
            f"model {fields.get('model', '?')}, {wide})")


def record(home: str | Path | None = None) -> dict:
    """This machine's fingerprints of every stage."""
    import torch

    split = default_split(home)
    return {"cpu": cpu(), "version": VERSION, "torch": torch.__version__, "split files": split_files(split),
            "decoded clips": decoded_clips(split), "processed frames": in_child("processed", home),
            "kernels": in_child("kernels"), "models": models(home)}


def compare(mine: dict, theirs: dict) -> list[tuple[str, str]]:
    """Each stage (kernels and models one by one) with "same", "differs" or "not recorded" (absent on either side)."""
    rows = []
    for stage in STAGES:
        if isinstance(mine.get(stage), dict) or isinstance(theirs.get(stage), dict):
            a, b = mine.get(stage) or {}, theirs.get(stage) or {}
            rows += [(f"{stage}: {name}", _verdict(a.get(name), b.get(name))) for name in sorted({*a, *b})]
        else:
            rows.append((stage, _verdict(mine.get(stage), theirs.get(stage))))
    return rows


def _verdict(a: str | None, b: str | None) -> str:
    return "not recorded" if a is None or b is None else "same" if a == b else "differs"


def recorded() -> dict[str, dict]:
    """Every machine's recorded fingerprints (of any version)."""
    return json.loads(RECORDS.read_text()) if RECORDS.is_file() else {}


def machines() -> dict[str, dict]:
    """The recorded machines and the README's models (:func:`bench.devkit.train.build.reference`: their
    fingerprints only), to compare with."""
    readme = {"cpu": "the machine the README's lessons were measured on", "version": VERSION, "models": reference()}
    return {**recorded(), **({"the README's models": readme} if readme["models"] else {})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.devkit.train.crosscheck",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", default=None, help="the data home whose split and models to fingerprint")
    parser.add_argument("--record", metavar="NAME", help="store this machine's fingerprints under NAME")
    parser.add_argument("--kernels", action="store_true", help=argparse.SUPPRESS)  # the pinned child's parts
    parser.add_argument("--processed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.kernels or args.processed:
        from bench.scoring.console import quiet_library_bars

        quiet_library_bars()
        pinned.no_onednn()
        print(json.dumps(kernels() if args.kernels else processed(args.home)))
        return 0
    mine = record(args.home)
    print(f"this machine: {mine['cpu']}, build {mine['version']}, torch {mine['torch']}")
    for stage in STAGES:
        value = mine[stage]
        for name, found in (value.items() if isinstance(value, dict) else [(None, value)]):
            print(f"  {stage}{': ' + name if name else ''}  {found}")
    for machine, theirs in machines().items():
        if theirs.get("version") != VERSION:
            print(f"against {machine}: recorded at build {theirs.get('version')}, not compared")
            continue
        rows = compare(mine, theirs)
        differ = [stage for stage, verdict in rows if verdict == "differs"]
        print(f"against {machine} ({theirs['cpu']}): " + (f"first differs at {differ[0]}" if differ else
                                                           "no stage differs"))
        for stage, verdict in rows:
            print(f"  {verdict:12} {stage}")
    if args.record:
        RECORDS.write_text(json.dumps({**recorded(), args.record: mine}, indent=1, sort_keys=True) + "\n")
        print(f"recorded as {args.record!r} in {RECORDS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
