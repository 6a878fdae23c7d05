"""Typed configuration: where a benchmark's items come from (:class:`DataSource`), how a run is scored
(:class:`ScoreConfig`), and what a run folder records about itself (:class:`Manifest`, whose identity decides whether
a stored run may be resumed)."""

from __future__ import annotations

import json
import platform
import subprocess
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from bench import __version__
from bench.paths import PROJECT_ROOT
from bench.registry import spec


@dataclass(frozen=True)
class DataSource:
    """A benchmark's released files: the annotation path, the video root and the loader options."""

    benchmark: str
    data_path: str
    video_root: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, benchmark: str, data_path: str | Path, video_root: str | Path | None = None,
           options: dict[str, Any] | None = None) -> DataSource:
        """A source with absolute paths and a registered benchmark name (unknown names are a one-line error)."""
        return cls(spec(benchmark).name, str(Path(data_path).resolve()),
                   str(Path(video_root).resolve()) if video_root else None, dict(options or {}))

    def load(self):
        """The items, read by the benchmark's loader."""
        return spec(self.benchmark).load(self.data_path, video_root=self.video_root, **self.options)


KEY_PARAMETERS = frozenset({"key", "api_key", "apikey", "api-key", "token", "access_token", "sig", "signature"})


@dataclass(frozen=True)
class Endpoint:
    """Where a remote model (family ``api``) is served and how it is asked: an OpenAI-compatible base URL
    (``https://api.openai.com/v1``, ``http://127.0.0.1:8000/v1``), the environment variable that holds its key (the
    name only: the key itself is read when a request is sent and never stored), the requests sent at once, the caps
    on requests sent (``max_requests``, every attempt counted) and on estimated tokens sent (``token_budget``), and
    each request's time-out (seconds) and retries."""

    url: str
    key_env: str = "OPENAI_API_KEY"
    concurrency: int = 8
    max_requests: int | None = None
    token_budget: int | None = None
    timeout: float = 120.0
    retries: int = 6

    def check(self) -> None:
        """A one-line :class:`ValueError` for a URL that is no http(s) URL or carries credentials, or a value out of
        its range."""
        from urllib.parse import parse_qsl, urlsplit

        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--endpoint must be an http(s) URL such as https://api.openai.com/v1, got "
                             f"{parts.scheme + '://' if parts.scheme else ''}{parts.hostname or '(no host)'}...")
        if parts.username or parts.password or {k.lower() for k, _ in parse_qsl(parts.query)} & KEY_PARAMETERS:
            raise ValueError("--endpoint carries credentials: give the URL without them and the key in an "
                             "environment variable (--api-key-env NAME)")
        if not self.key_env or not self.key_env.replace("_", "").isalnum():
            raise ValueError(f"--api-key-env must name an environment variable, got {self.key_env!r}")
        if self.concurrency < 1 or self.retries < 0 or not self.timeout > 0:
            raise ValueError("--concurrency must be at least 1, --max-retries at least 0 and --request-timeout "
                             "positive")
        for name, cap in (("--max-requests", self.max_requests), ("--token-budget", self.token_budget)):
            if cap is not None and cap < 1:
                raise ValueError(f"{name} must be at least 1, got {cap}")

    def redacted(self) -> dict[str, Any]:
        """The settings as the manifest records them (the key's variable name, never its value)."""
        return {"endpoint": self.url, "api_key_env": self.key_env, "concurrency": self.concurrency,
                "max_requests": self.max_requests, "token_budget": self.token_budget, "timeout": self.timeout,
                "retries": self.retries}


@dataclass
class ScoreConfig:
    """Everything ``foilbench score`` needs besides the items: model, protocol, frame policy, batching and where
    to store.

    ``family`` (contrastive, xclip, videollm, textlm) is inferred from the model's config when None; ``protocol``
    (similarity, entail, mc, loglik) defaults to the family's first protocol. ``seed`` seeds the seeded frame
    policies and torch. ``device`` "auto" picks CUDA, else MPS, else CPU. ``size``: "auto" decodes frames straight
    to the size the model's processor resizes to, "full" at the video's own size, or a (width, height). ``workers``
    None: one decoding thread per core. ``max_failure_rate``: the share of failed items above which the run fails
    (a run whose items all fail always does). ``control``: a shortcut control (:mod:`bench.frames.controls`) whose
    frame policy replaces ``frame_policy``, derived from it. ``frame_policy`` is a policy as ``--frames`` writes it
    (``uniform:k=8``; :func:`bench.frames.parse_policy`). ``endpoint``: where a remote model (family ``api``) is
    served (:class:`Endpoint`).
    """

    source: DataSource
    model: str
    family: str | None = None
    protocol: str | None = None
    frame_policy: str = "uniform:k=8"
    prompt: str | None = None
    batch_size: int = 8
    device: str = "auto"
    dtype: str = "auto"
    out: Path | None = None
    limit: int | None = None
    spread: bool = False
    seed: int = 0
    chunk_size: int = 32
    workers: int | None = None
    decoder: str = "decord"
    size: tuple[int, int] | str | None = "auto"
    name: str | None = None
    retry_failures: bool = False
    progress: bool = True
    options: dict[str, Any] = field(default_factory=dict)
    max_failure_rate: float = 1.0
    control: str | None = None
    endpoint: Endpoint | None = None

    def check(self) -> None:
        """Raise a one-line :class:`ValueError` for a value out of its range (the runner calls it before anything
        loads; the frame policy, family, protocol and prompt are checked by the runner's plan)."""
        if self.batch_size < 1 or self.chunk_size < 1:
            raise ValueError("batch size and chunk size must be at least 1")
        if self.limit is not None and self.limit < 1:
            raise ValueError(f"--limit must be at least 1, got {self.limit}")
        if self.spread and self.limit is None:
            raise ValueError("--spread needs --limit N (it spreads N items over the file)")
        if not 0.0 <= self.max_failure_rate <= 1.0:
            raise ValueError(f"--max-failure-rate must be between 0 and 1, got {self.max_failure_rate}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"--workers must be at least 1, got {self.workers}")
        if isinstance(self.size, tuple) and min(self.size) < 1:
            raise ValueError(f"--size must be positive, got {self.size[0]}x{self.size[1]}")
        if self.endpoint is not None:
            self.endpoint.check()


# Manifest fields that must agree for a stored run to be resumed with the same scores.
IDENTITY = ("benchmark", "data_path", "video_root", "loader_options", "family", "protocol", "model", "revision",
            "measure", "dtype", "frame_policy", "frame_size", "prompt", "seed", "options", "limit",
            "spread")


@dataclass
class Manifest:
    """What a run folder records about itself (``manifest.json``, flat JSON), for scored and imported runs alike, as
    written and as read (:func:`bench.store.read_manifest`). ``extra`` holds the entries that are no field: what a run
    adds as it goes (status, chunk size, launches, timings) and the entries of a manifest of another version."""

    benchmark: str
    data_path: str | None
    model: str
    measure: str
    family: str | None = None
    protocol: str | None = None
    video_root: str | None = None
    loader_options: dict[str, Any] = field(default_factory=dict)
    name: str | None = None
    revision: str | None = None
    dtype: str | None = None
    device: str | None = None
    batch_size: int | None = None
    frame_policy: dict[str, Any] | None = None
    frame_backend: str | None = None
    frame_size: list[int] | dict[str, Any] | None = None
    prompt: dict[str, Any] = field(default_factory=lambda: {"name": None, "template": None})
    seed: int | None = None
    control: str | None = None
    limit: int | None = None
    spread: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, Any] = field(default_factory=dict)
    imported_from: list[str] = field(default_factory=list)
    n_items: int | None = None
    created: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def for_source(cls, source: DataSource, **values: Any) -> Manifest:
        """A manifest of a run over ``source``."""
        return cls(benchmark=source.benchmark, data_path=source.data_path, video_root=source.video_root,
                   loader_options=dict(source.options), **values)

    @property
    def source(self) -> DataSource:
        """The data source the run was scored on."""
        return DataSource(self.benchmark, self.data_path or "", self.video_root, dict(self.loader_options))

    def identity(self) -> dict[str, Any]:
        """The fields that decide the scores (:data:`IDENTITY`), as JSON-comparable values."""
        found = self.to_dict()
        return {k: json.loads(json.dumps(found.get(k), sort_keys=True, default=str)) for k in IDENTITY}

    def to_dict(self) -> dict[str, Any]:
        """Flat JSON-ready entries (``extra`` merged in, e.g. status and timings)."""
        found = asdict(self)
        return {**{k: v for k, v in found.items() if k != "extra"}, **self.extra}

    @property
    def status(self) -> str | None:
        """``running``, ``complete`` or ``incomplete`` for a scored run (kept in ``extra``); None when not recorded."""
        return self.extra.get("status")

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        """A manifest from ``manifest.json`` entries: unknown entries go to ``extra``, missing ones take their
        defaults (None for the required ones), so that a manifest of any version reads and none of it is lost."""
        known = {f.name for f in fields(cls)} - {"extra"}
        required = {f.name: None for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
        return cls(**{**required, **{k: v for k, v in data.items() if k in known}},
                   extra={k: v for k, v in data.items() if k not in known})


def versions() -> dict[str, str | None]:
    """Versions of the project and of the libraries that decide the scores, for manifests."""
    found: dict[str, str | None] = {"foilbench": __version__, "python": platform.python_version()}
    for package in ("torch", "transformers", "decord", "av", "numpy"):
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = None
    try:
        found["git_commit"] = subprocess.run(["git", "rev-parse", "HEAD"], cwd=PROJECT_ROOT, capture_output=True,
                                             text=True, timeout=10).stdout.strip() or None
    except OSError:
        found["git_commit"] = None
    return found
