"""What a run is before any model loads: its plan (benchmark, model, family, protocol, frame policy, items, folder),
checked on the leader rank first, the chunks still to score, and the manifest it stores."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Callable, Sequence

from bench.config import DataSource, Manifest, ScoreConfig
from bench.frames import FramePolicy, parse_policy, policy, seeded
from bench.frames.controls import control_policy
from bench.items import Item, ItemSet
from bench.paths import data_home
from bench.registry import BenchmarkSpec, spec
from bench.scoring.api.answers import check_readers
from bench.scoring.architectures import check_architecture, model_type_of
from bench.scoring.backends.base import folder_revision
from bench.scoring.families import REMOTE, check_fits, check_protocol, families, infer_family, reads_config
from bench.scoring.hub import locate
from bench.scoring.protocols import FORMAT, ScoringProtocol, make_protocol
from bench.store.run import MANIFEST, check_resumable

def select_items(items: Sequence[Item], limit: int | None, spread: bool = False) -> list[Item]:
    """``limit`` main items with their twins, in file order: the first ones, or (``spread``) every
    ``len / limit``-th, so that a file ordered by subset gives every subset its share (all items when ``limit`` is
    None)."""
    if limit is None:
        return list(items)
    main = [it for it in items if it.role == "main"]
    picked = [main[int(i * len(main) / limit)] for i in range(limit)] if spread and limit < len(main) else main[:limit]
    wanted = {it.item_id for it in picked}
    wanted |= {it.twin_id for it in picked if it.twin_id}
    return [it for it in items if it.item_id in wanted]


def default_out(benchmark: str, protocol: str, model: str) -> Path:
    """``<data home>/runs/<benchmark>-<protocol>-<model name>-<hash>``."""
    digest = hashlib.sha1(model.encode()).hexdigest()[:6]
    return data_home() / "runs" / f"{benchmark}-{protocol}-{Path(model).name}-{digest}"


def fixed_chunks(items: Sequence[Item], chunk_size: int, done: set[str]) -> list[tuple[int, list[Item]]]:
    """The chunks still to score: (number, items not yet stored) of the chunks at fixed positions of the item
    order (chunk ``c`` holds positions ``c * chunk_size`` to ``(c + 1) * chunk_size - 1``)."""
    chunks = ((c, [it for it in items[c * chunk_size:(c + 1) * chunk_size] if it.item_id not in done])
              for c in range((len(items) + chunk_size - 1) // chunk_size))
    return [(c, todo) for c, todo in chunks if todo]


@dataclasses.dataclass
class Plan:
    """What every rank checks before loading a model; ``note``: the line saying the model's architecture goes
    through the generic path untested (None for a tested one)."""

    benchmark: BenchmarkSpec
    model: object
    family: str
    protocol: ScoringProtocol
    frame_policy: FramePolicy
    blind: bool
    items: list[Item]
    out: Path
    note: str | None = None


def make_plan(config: ScoreConfig, load: Callable[[DataSource], ItemSet] = DataSource.load) -> Plan:
    """The run ``config`` describes, with everything checked that can be without loading the model (the config's
    values, the frame policy, family, protocol and prompt; the model's place); ``load`` reads the items."""
    config.check()
    benchmark = spec(config.source.benchmark)
    frame_policy = seeded(parse_policy(config.frame_policy), config.seed)
    blind = frame_policy.name == "none"
    family = config.family or (REMOTE if config.endpoint else None)
    remote = bool(family) and check_remote(family, config)
    if family:  # what can be checked without the model is checked before it is located
        protocol = checked_protocol(family, config, benchmark, blind)
    local = family is None or reads_config(family)  # a remote model is its name; a package's family finds its own
    model = locate(config.model) if isinstance(config.model, str) and local else config.model
    if family and isinstance(model, str) and local:
        check_fits(model, family)
    if not family:
        family = infer_family(model)
        protocol = checked_protocol(family, config, benchmark, blind)
    if config.control:
        if not protocol.uses_frames:
            raise ValueError(f"the {protocol.name} protocol reads no frames: the {config.control} control does not "
                             "apply")
        frame_policy = seeded(control_policy(config.control, frame_policy, protocol.blind_ok), config.seed)
        blind = frame_policy.name == "none"
    if not protocol.uses_frames:
        frame_policy = policy("none")
    note = (check_architecture(model_type_of(model), family, protocol.uses_frames and not blind)
            if reads_config(family) else None)
    items = select_items(asked_items(load(config.source).items, protocol, benchmark), config.limit, config.spread)
    protocol.check(items)  # a prompt naming an item label an item lacks fails here, before a model loads
    if remote:  # answers to be read as text need the benchmark's reader of them: said before anything is sent
        check_readers(benchmark, protocol, benchmark.backend_defaults(family, config.options).get("answers", "auto"))
    out = Path(config.out) if config.out else default_out(benchmark.name, protocol.name, str(config.model))
    return Plan(benchmark, model, family, protocol, frame_policy, blind, items, out, note)


def check_remote(family: str, config: ScoreConfig) -> bool:
    """Whether ``family`` is served remotely; a one-line error when it is and no endpoint is given, or an endpoint is
    given for a local family."""
    check_protocol(family, None)
    remote = families()[family].remote
    if remote and config.endpoint is None:
        raise ValueError(f"the {family} family needs --endpoint URL (an OpenAI-compatible base URL, e.g. "
                         "https://api.openai.com/v1) and --model NAME (the model it serves)")
    if not remote and config.endpoint is not None:
        raise ValueError(f"--endpoint is for models served elsewhere (--family {REMOTE}), not the {family} family")
    return remote


def asked_items(items: Sequence[Item], protocol: ScoringProtocol, benchmark: BenchmarkSpec) -> list[Item]:
    """The items ``protocol`` asks (all, unless the benchmark names question formats); none is a one-line error."""
    asked = [it for it in items if protocol.asks(it)]
    if items and not asked:
        found = sorted({str(it.labels.get(FORMAT)) for it in items})
        wanted = ", ".join(sorted(protocol.formats or ()))
        raise ValueError(f"the {protocol.name} protocol asks {benchmark.title}'s {wanted} items, and the data holds "
                         f"only {', '.join(found)} items")
    return asked


def checked_protocol(family: str, config: ScoreConfig, benchmark: BenchmarkSpec, blind: bool) -> ScoringProtocol:
    """The run's protocol for ``family`` (a remote model's: the prompt its paper asked closed models, where it has
    one); a blind run (no frames) of a protocol that needs them is refused."""
    protocol = make_protocol(check_protocol(family, config.protocol), benchmark, config.prompt,
                             closed=families()[family].remote)
    if blind and protocol.uses_frames and not protocol.blind_ok:
        raise ValueError(f"the {protocol.name} protocol needs frames: a blind run (--frames none) needs a "
                         "question-answering protocol (entail, mc)")
    return protocol


def check_stored(config: ScoreConfig, plan: Plan) -> None:
    """Raise :class:`~bench.store.RunMismatch` when the run stored in ``plan.out`` differs in a setting known before
    the model loads, or in its items. The frame size ``auto`` is known only from the model's processor, and so is
    the revision, except for a model in a local folder when the stored run's revision is that folder's digest."""
    stored = plan.out / MANIFEST
    if not stored.is_file():
        return
    remote = families()[plan.family].remote
    revision = folder_revision(plan.model) if isinstance(plan.model, str) and not remote else None
    stored_revision = str(json.loads(stored.read_text()).get("revision") or "")
    unknown = [] if revision and stored_revision.startswith("files:") or remote else ["revision"]
    if remote:  # answers read as log-probabilities or as text: known once the endpoint is asked
        unknown.append("measure")
    size = config.size if plan.protocol.uses_frames else None
    if size == "auto":
        unknown.append("frame_size")
    known = None if size in (None, "auto", "full") else list(size)
    check_resumable(plan.out, run_manifest(config, plan, revision=revision, frame_size=known), plan.items,
                    unknown=unknown)


def check_stored_run(config: ScoreConfig) -> None:
    """Raise :class:`~bench.store.RunMismatch` when ``config.out`` holds a run scored with other settings (as far as
    that can be told before the model loads); nothing when it holds none."""
    check_stored(config, make_plan(config))


def run_manifest(config: ScoreConfig, plan: Plan, *, revision: str | None, frame_size: object = None,
              details: dict | None = None, device: str | None = None,
              library_versions: dict[str, str | None] | None = None) -> Manifest:
    """The manifest of the run ``plan`` of ``config`` (what the loaded model adds, and :func:`versions` for the
    manifest that is stored, are passed in; the check before loading needs neither)."""
    return Manifest.for_source(
        config.source, model=str(config.model), family=plan.family, protocol=plan.protocol.name,
        measure=plan.protocol.measure, name=config.name or plan.out.name, revision=revision, dtype=config.dtype,
        device=device, batch_size=config.batch_size, frame_policy=plan.frame_policy.describe(),
        frame_backend=config.decoder, frame_size=frame_size, prompt=plan.protocol.describe(), seed=config.seed,
        control=config.control, limit=config.limit, spread=config.spread,
        options=plan.benchmark.backend_defaults(plan.family, config.options),
        details=details or {}, versions=library_versions or {}, n_items=len(plan.items))
