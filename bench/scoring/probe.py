"""What-if probes: any texts scored against one clip (or a window of it) by one model, through the run's own path.

A probe is a one-item run held in memory: the texts become an item of one clip, the family's pair protocol makes its
requests (``similarity`` for CLIP and X-CLIP, ``entail`` for a Video-LLM, P(Yes) with the benchmark-neutral
``yes-no`` prompt unless another is named, ``loglik`` for a text LM), the frame policy (with a shortcut control on
top, :mod:`bench.frames.controls`) samples the clip through the frame cache, and the runner's
:func:`~bench.scoring.chunks.score_items` asks the backend, so a probe's score is the number a run stores for the same
clip, text and frames. Models stay warm between probes (:mod:`bench.scoring.warm`).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from bench.config import Endpoint, Manifest
from bench.frames import FrameCache, FrameError, FramePolicy, decode, parse_policy, policy, sample_frames
from bench.frames.controls import AS_IS, control_policy
from bench.items import Clip, Item
from bench.scoring import prompts
from bench.scoring.protocols import PROTOCOLS, Entailment, ScoringProtocol
from bench.scoring.warm import MODELS, WarmModels

FRAMES = FrameCache(max_bytes=512 * 1024**2)
"""The process's cache of decoded clips for probes (a clip probed again under another control decodes once)."""
PROBE_ITEM = "probe"
DEFAULT_FRAMES = "uniform:k=8"


class ProbeError(ValueError):
    """A probe the model could not answer (e.g. an X-CLIP given one frame): one line, the model's reason."""


@dataclass
class Probe:
    """One probe: what was asked of which clip with which model, and the score of each text in the order given."""

    model: str
    family: str
    video: str
    start: float | None
    end: float | None
    control: str
    frame_policy: dict
    prompt: str | None
    texts: list[str]
    scores: list[float]
    seconds: float
    time: datetime = field(default_factory=lambda: datetime.now(timezone.utc))

    def json(self) -> list[dict]:
        """``[{"text", "score"}, ...]`` in the order the texts were given."""
        return [{"text": t, "score": s} for t, s in zip(self.texts, self.scores)]

    def records(self) -> list[dict]:
        """One row per text for ``probes.parquet`` (:mod:`bench.store.probes`)."""
        params = ",".join(f"{k}={v}" for k, v in self.frame_policy.items() if k != "name")
        return [{"model": self.model, "family": self.family, "video": self.video, "start": self.start,
                 "end": self.end, "text": t, "control": self.control,
                 "frames": self.frame_policy["name"] + (f":{params}" if params else ""), "prompt": self.prompt,
                 "score": s, "time": self.time} for t, s in zip(self.texts, self.scores)]


def probe_protocol(family: str, prompt: str | None = None) -> ScoringProtocol:
    """The family's pair protocol (its default one): ``entail`` with ``prompt`` (a name or a template with
    ``{caption}``; default ``yes-no``), or ``similarity`` / ``loglik``, which take no prompt."""
    from bench.scoring.families import check_protocol

    name = check_protocol(family, None)
    if name == "entail":
        return Entailment(*prompts.resolve(prompt or "yes-no", None, "entail"))
    if prompt is not None:
        raise ValueError(f"the {family} family asks no question ({name}), so a probe of it takes no --prompt")
    return PROTOCOLS[name]()


def probe_item(video: str | Clip, texts: Sequence[str], start: float | None = None,
               end: float | None = None) -> Item:
    """The texts as an item of one clip (``video``: a file, with the window ``start``-``end`` in seconds, or a
    benchmark item's clip as it is), checked as any item is: no empty text, no control character."""
    clip = video if isinstance(video, Clip) else Clip(video, start, end)
    return Item("probe", PROBE_ITEM, "", (clip,), tuple(texts), ((0,),))


def run_setup(manifest: Manifest) -> dict[str, Any]:
    """The :func:`probe` arguments that ask a model as the run of ``manifest`` asked it (model, family, frame
    policy, backend options, and for a Video-LLM asked Yes/No its prompt; a Video-LLM asked A/B is probed Yes/No with
    the ``yes-no`` prompt; a remote model at the endpoint its run recorded)."""
    described = dict(manifest.frame_policy or {"name": "uniform", "k": 8})
    prompt = (manifest.prompt or {}).get("template") if manifest.protocol == "entail" else None
    details = manifest.details or {}
    endpoint = Endpoint(details["endpoint"], details.get("api_key_env") or "OPENAI_API_KEY") \
        if details.get("endpoint") else None
    return {"model": str(manifest.model), "family": manifest.family,
            "frame_policy": policy(described.pop("name"), **described), "options": dict(manifest.options or {}),
            "prompt": prompt, "seed": int(manifest.seed or 0), "endpoint": endpoint}


def resolve_model(model: str, family: str | None, endpoint: Endpoint | None = None) -> tuple[str, str]:
    """(where to load ``model`` from, its family): located and checked as a run does it, before anything loads (a
    model behind ``endpoint`` is its name, of the api family; a family a package adds finds its own models)."""
    from bench.scoring.families import REMOTE, check_fits, check_protocol, families, infer_family, reads_config
    from bench.scoring.hub import locate

    family = family or (REMOTE if endpoint is not None else None)
    if family is not None:
        check_protocol(family, None)
        if families()[family].remote != (endpoint is not None):
            raise ValueError(f"--endpoint goes with --family {REMOTE} (a model served elsewhere), not with {family}"
                             if endpoint is not None else f"the {family} family needs --endpoint URL")
        if endpoint is not None:
            endpoint.check()
        if not reads_config(family):
            return model, family
    located = locate(model)
    if family is None:
        return located, infer_family(located)
    check_fits(located, family)
    return located, family


def architecture_note(model: str, family: str, uses_frames: bool) -> str | None:
    """The run's check of ``model``'s architecture (:func:`~bench.scoring.architectures.check_architecture`): a
    one-line error for one that cannot work, the line for one that is untested (printed on stderr)."""
    from bench.scoring.architectures import check_architecture, model_type_of
    from bench.scoring.families import reads_config

    note = check_architecture(model_type_of(model), family, uses_frames) if reads_config(family) else None
    if note:
        print(note, file=sys.stderr)
    return note


def probe(model: str, video: str | Clip, texts: Sequence[str], *, family: str | None = None,
          frame_policy: str | FramePolicy | None = None, control: str = AS_IS, prompt: str | None = None,
          start: float | None = None, end: float | None = None, device: str = "auto", dtype: str = "auto",
          options: Mapping[str, Any] | None = None, seed: int = 0, size: Any = "auto", decoder: str = "decord",
          models: WarmModels = MODELS, cache: FrameCache | None = FRAMES, endpoint: Endpoint | None = None) -> Probe:
    """Score ``texts`` against ``video`` (its window ``start``-``end`` in seconds) with ``model``, the frames
    sampled by ``frame_policy`` (default ``uniform:k=8``, or the number of frames the model takes, as X-CLIP) under
    ``control``. Everything that can be checked is checked before the model loads (texts, control, policy, prompt,
    model, video); a model that cannot answer raises :class:`ProbeError`. ``endpoint``: where a remote model (family
    ``api``) is served; each probe of it is one request per text (answered as a run of it answers)."""
    from bench.frames import seeded
    from bench.scoring.chunks import ChunkVideos, frame_size, score_items
    from bench.scoring.devices import resolve_device

    if not texts:
        raise ValueError("give at least one text to score")
    item = probe_item(video, texts, start, end)
    base = frame_policy if isinstance(frame_policy, FramePolicy) else parse_policy(frame_policy or DEFAULT_FRAMES)
    located, family = resolve_model(model, family, endpoint)
    protocol = probe_protocol(family, prompt)
    sampling = seeded(control_policy(control, base, protocol.blind_ok), seed)
    blind = sampling.name == "none"
    if not protocol.uses_frames:
        sampling = policy("none")
    elif blind and not protocol.blind_ok:
        raise ValueError(f"the {family} family ({protocol.name}) needs frames: --frames none is for protocols "
                         "that can be asked without them")
    architecture_note(located, family, protocol.uses_frames and not blind)
    if protocol.uses_frames:
        try:
            decode.probe(item.clips[0].path, decoder)
        except FrameError as err:
            raise ValueError(f"cannot read the video {err.path}: {err.reason}") from None
    device = resolve_device(device)
    remote = {"endpoint": dataclasses.asdict(endpoint)} if endpoint is not None else {}
    warm = models.get(located, family, device, dtype, {**dict(options or {}), **remote})
    started = time.perf_counter()
    backend = warm.backend
    needed = getattr(backend, "frames_needed", None)
    if frame_policy is None and needed and protocol.uses_frames and not blind:
        sampling = seeded(control_policy(control, policy("uniform", k=needed), protocol.blind_ok), seed)
    backend.prepare(protocol.answers)
    protocol = backend.answering(protocol)
    backend.reset()
    videos = None
    if protocol.uses_frames:
        size = frame_size(size, backend)
        try:
            sampled = sample_frames(item.clips[0], sampling, backend=decoder, size=size, cache=cache)
        except FrameError as err:
            raise ValueError(f"cannot read the video {err.path}: {err.reason}") from None
        key = (PROBE_ITEM, 0)
        encoded = {key: backend.encode(sampled)}
        videos = ChunkVideos([item], {key: sampled}, sampling, decoder, size, encoded)
    scored, failures, _ = score_items(backend, protocol, [item], videos, blind, batch_size=max(8, len(texts)))
    if failures:
        raise ProbeError(f"{model} could not score the probe: {failures[0]['reason']}")
    scores = [row["score"] for row in sorted(scored.pair, key=lambda row: row["text"])]
    clip = item.clips[0]
    return Probe(model, family, clip.path, *clip.window_seconds(), control, sampling.describe(),
                 protocol.describe().get("name"), list(texts), scores, time.perf_counter() - started)
